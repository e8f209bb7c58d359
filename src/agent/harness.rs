//! What a harness adds to a command's output in its own voice: markup around it
//! (`<returncode>0</returncode>`, `<output>`), and lines that say the command ran, where the
//! session stands or what the next call will reuse. None of it is the command's answer.

use super::text::trim_ascii;

/// Bytes of the longest line a harness adds (see [`harness_line`]).
const HARNESS_LINE_MAX: usize = 256;

/// At most `most` bytes of `output` that `counts` outside markup tags and harness lines;
/// stops at the first byte over.
pub(super) fn at_most_outside_markup(
    output: &[u8],
    most: usize,
    counts: impl Fn(u8) -> bool,
) -> bool {
    let mut n = 0;
    let mut in_tag = false;
    for line in output.split(|&b| b == b'\n') {
        if harness_line(line) {
            continue;
        }
        for &b in line {
            match b {
                b'<' => in_tag = true,
                b'>' if in_tag => in_tag = false,
                _ if in_tag => {}
                _ if counts(b) => {
                    n += 1;
                    if n > most {
                        return false;
                    }
                }
                _ => {}
            }
        }
    }
    true
}

/// A line a harness adds to every output, in its own voice rather than the command's: in
/// brackets, naming the exit code, the working directory or the interpreter (OpenHands); a
/// label of the command having run or of what follows (`Command executed.`, `Command
/// completed.`, `Output:`: Cline, Cursor); a note that an action ran and that nothing was
/// printed (Cline's browser: `The browser action has been executed. …`, `Console logs:`, `(No
/// new logs)`, `The browser has been closed. …`); a note on the shell the next call will
/// reuse ("On the next invocation of this tool, …": Cursor); or the state of the session (see
/// [`harness_state_line`]).
pub(super) fn harness_line(line: &[u8]) -> bool {
    let t = trim_ascii(line);
    // A harness's lines are short; a long line (a page's paragraph) is the command's.
    if t.len() > HARNESS_LINE_MAX {
        return false;
    }
    if harness_state_line(t) {
        return true;
    }
    if t.len() >= 2 && t[0] == b'[' && t[t.len() - 1] == b']' {
        return [&b"exit code"[..], b"working directory", b"interpreter"]
            .iter()
            .any(|k| positions_ignoring_case(t, k).next().is_some());
    }
    let label = t.strip_suffix(b".").or(t.strip_suffix(b":")).unwrap_or(t);
    let label = match (label.first(), label.last()) {
        (Some(b'('), Some(b')')) => &label[1..label.len() - 1],
        _ => label,
    };
    [
        &b"command executed"[..],
        b"command completed",
        b"command output",
        b"output",
        b"console logs",
        b"no new logs",
        b"no output",
    ]
    .iter()
    .any(|k| label.eq_ignore_ascii_case(k))
        || [
            &b"next invocation of this tool"[..],
            b"action has been executed",
            b"browser has been closed",
        ]
        .iter()
        .any(|k| positions_ignoring_case(t, k).next().is_some())
}

/// A line (trimmed) in which a harness states where the session stands, the same after every
/// command whatever it printed: the working directory and the interpreter in brackets
/// (OpenHands' `[Current working directory: /workspace]`), SWE-agent's `(Open file: …)`,
/// `(Current directory: …)` and its prompt `bash-$`. Not the exit code, which is the
/// command's answer.
pub(crate) fn harness_state_line(t: &[u8]) -> bool {
    if t == b"bash-$" {
        return true;
    }
    let inner = match (t.first(), t.last()) {
        (Some(b'['), Some(b']')) | (Some(b'('), Some(b')')) => &t[1..t.len() - 1],
        _ => return false,
    };
    [
        &b"Current working directory: "[..],
        b"Python interpreter: ",
        b"Open file: ",
        b"Current directory: ",
    ]
    .iter()
    .any(|k| inner.starts_with(k))
}

/// A line of markup alone: tags, and between them at most a number (`<returncode>0</returncode>`,
/// `<output>`, `</output>`).
pub(super) fn markup_line(line: &[u8]) -> bool {
    line.first() == Some(&b'<')
        && line.last() == Some(&b'>')
        && at_most_outside_markup(line, 0, |b| !b.is_ascii_digit() && !b.is_ascii_whitespace())
}

/// Where `needle` (lower case) stands in `hay`, ASCII case ignored.
pub(super) fn positions_ignoring_case<'a>(
    hay: &'a [u8],
    needle: &'a [u8],
) -> impl Iterator<Item = usize> + 'a {
    hay.windows(needle.len())
        .enumerate()
        .filter(move |(_, w)| w.eq_ignore_ascii_case(needle))
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_harness_states_where_the_session_stands() {
        for state in [
            &b"(Open file: /testbed/reproduce.py)"[..],
            b"(Current directory: /testbed)",
            b"bash-$",
            b"[Current working directory: /workspace]",
            b"[Python interpreter: /usr/bin/python]",
        ] {
            assert!(
                harness_state_line(state),
                "{}",
                String::from_utf8_lossy(state)
            );
        }
        for other in [
            &b"[The command completed with exit code 1.]"[..],
            b"(Open the file first)",
            b"bash-$ ls",
        ] {
            assert!(
                !harness_state_line(other),
                "{}",
                String::from_utf8_lossy(other)
            );
        }
    }
}
