//! A compiler's diagnostics in a build's output: the first error a build names is its cause.
//!
//! A build that fails says so twice: where the compiler stopped (`src/z.c:6:10: fatal error:
//! zstd.h: No such file or directory`, `error[E0308]: mismatched types`, `App.java:12: error:
//! cannot find symbol`), and then how each tool above it gave up (`error: command 'gcc' failed
//! with exit code 1`, `ERROR: Failed building editable for pyzpack`, `error: could not compile
//! `app` due to 2 previous errors`). The second is the same whatever the cause, and differs by
//! the tool that ran the build (`setup.py`, `pip`, `python -m build`): read alone, one cause met
//! through three commands looks like three failures, and two causes met through `cargo build`
//! look like one. So the failure is read from the first diagnostic, when the output holds one.

use super::text::trim_ascii;

/// Bytes of an output read for a diagnostic: a build that prints more has scrolled its cause
/// away long before, and a harness shows the agent less.
const READ: usize = 64 * 1024;

/// The first line of `output` that is a compiler's error diagnostic, trimmed, and whether it
/// is fatal (the compiler stopped there: `fatal error:`, which fails a build wherever it
/// stands in the output).
pub(crate) fn first_error(output: &[u8]) -> Option<(&[u8], bool)> {
    let output = &output[..output.len().min(READ)];
    output
        .split(|&b| b == b'\n')
        .map(trim_ascii)
        .find_map(|l| error_kind(l).map(|fatal| (l, fatal)))
}

/// Whether `line` (trimmed) is an error diagnostic, and if so whether fatal: rustc's
/// `error[E0308]: …`; GCC's, Clang's and javac's `FILE:LINE[:COL]: [fatal ]error: …`;
/// TypeScript's `FILE(LINE,COL): error TS2322: …`. Warnings and notes are not.
fn error_kind(line: &[u8]) -> Option<bool> {
    if line.starts_with(b"error[") {
        let code = &line[6..];
        let n = code
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count();
        return (n > 0 && code[n..].starts_with(b"]:")).then_some(false);
    }
    // The file: no space, and a dot or a slash in it (a name, not a word).
    let end = line
        .iter()
        .position(|&b| b == b':' || b == b'(' || b == b' ')?;
    let (file, rest) = line.split_at(end);
    if file.is_empty() || !file.iter().any(|&b| b == b'.' || b == b'/') {
        return None;
    }
    if let Some(rest) = rest.strip_prefix(b"(") {
        // `(LINE,COL): error TS…`
        let close = rest.iter().position(|&b| b == b')')?;
        let place = &rest[..close];
        let numbers = !place.is_empty() && place.iter().all(|&b| b.is_ascii_digit() || b == b',');
        let after = &rest[close + 1..];
        return (numbers && after.starts_with(b": error TS")).then_some(false);
    }
    // `:LINE` and an optional `:COL`, then the kind.
    let mut rest = rest;
    let mut places = 0;
    while let Some(r) = rest.strip_prefix(b":") {
        let n = r.iter().take_while(|b| b.is_ascii_digit()).count();
        if n == 0 || places == 2 {
            break;
        }
        places += 1;
        rest = &r[n..];
    }
    if places == 0 {
        return None;
    }
    if rest.starts_with(b": fatal error: ") {
        Some(true)
    } else if rest.starts_with(b": error: ") {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_error_diagnostic_is_the_cause() {
        let gcc = b"running build_ext\ngcc -pthread -c src/z.c -o build/z.o\n\
            src/z.c:6:10: fatal error: zstd.h: No such file or directory\n    6 | #include <zstd.h>\n\
            compilation terminated.\nerror: command '/usr/bin/gcc' failed with exit code 1";
        assert_eq!(
            first_error(gcc),
            Some((
                &b"src/z.c:6:10: fatal error: zstd.h: No such file or directory"[..],
                true
            ))
        );
        // Indented inside pip's report of the build it ran.
        let pip = b"  Building editable for z (pyproject.toml) ... error\n\
            \x20     src/z.c:6:10: fatal error: zstd.h: No such file or directory\n\
            \x20 ERROR: Failed building editable for z";
        assert_eq!(first_error(pip).map(|(_, fatal)| fatal), Some(true));
        let cargo = b"   Compiling app v0.1.0\nwarning: unused variable: `x`\n\
            error[E0308]: mismatched types\n --> src/main.rs:4:18\n\
            error[E0425]: cannot find value `y`\n\
            error: could not compile `app` (bin \"app\") due to 2 previous errors";
        assert_eq!(
            first_error(cargo),
            Some((&b"error[E0308]: mismatched types"[..], false))
        );
        for other in [
            &b"App.java:12: error: cannot find symbol"[..],
            b"src/app.ts(10,5): error TS2322: Type 'string' is not assignable to type 'number'.",
            b"./lib/util.c:40: error: expected ';' before '}' token",
        ] {
            assert_eq!(first_error(other), Some((other, false)));
        }
    }

    #[test]
    fn warnings_prose_and_tails_are_no_diagnostic() {
        for none in [
            &b"src/z.c:6:10: warning: unused variable 'x'"[..],
            b"error: could not compile `app` due to 2 previous errors",
            b"error: command '/usr/bin/gcc' failed with exit code 1",
            b"the docs say: error: is a prefix",
            b"build.log:12:src/z.c:6:10: fatal error: zstd.h",
            b"Error: 3 errors",
            b"note: error[ in a sentence",
        ] {
            assert_eq!(first_error(none), None, "{}", String::from_utf8_lossy(none));
        }
    }
}
