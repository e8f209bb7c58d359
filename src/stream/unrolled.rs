//! One line of code written out again: how many copies of it people write. A statement is
//! unrolled a few times (`point_double(r, r);` five times, the rounds of a hash); an import,
//! a line of prose (a comment, a sentence) or an assignment that changes nothing the second
//! time is not, and halts sooner. An item of a list given again fills the list, and is
//! judged by its bytes.

use crate::text::{trim_ascii, BUFFER_BYTES};

/// Copies of one line of code written out verbatim before they halt. In 3.8 M tokens of
/// human code (`scripts/code_corpus.py`, C and C++ included) the longest such runs are five
/// (`ecp_nistz256_point_double(r, r);`) and four; a block of two to four lines with a word
/// in it never stands three times in a row there, but for `NULL` slots (see `is_filler`) and
/// one call wrapped over five lines, written three times (see `one_line`). Later sets have
/// such blocks three times in tests (sqlx's, datafusion's, Go's `archive/tar`), each followed
/// by a line of its own: a block of several lines halts only once its next copy has begun
/// (the judge's `next_copy_begun`).
pub(super) const CODE_LINE_COPIES: u32 = 8;

/// Copies of a line of prose in code (a comment that says something, a sentence in a string,
/// between tags or after a statement: see `prose_line`) written out verbatim before they
/// halt. Nobody unrolls a sentence: in 3.8 M tokens of human code and documents three alike
/// stand in a row at most (an example's output, `* // 'tick'`), and those are short.
const PROSE_LINE_COPIES: u32 = 4;

/// Copies of the block (the last copy of an exact loop in code, as two parts of held bytes)
/// before it halts, when it is one line (see [`one_line`]) or that line written `k` times
/// (a tokenizer may cut a line's copies two ways in turn): `CODE_LINE_COPIES` lines for a
/// statement, `PROSE_LINE_COPIES` for a line of prose (an assignment of a sentence too), none
/// more than any loop needs (0) for an import, an assignment that changes nothing again, a
/// key given again or a declaration made again, and for an item of a list as many as fill a
/// buffer (see [`fill_copies`]); divided by `k`. `None` for a block of other lines.
///
/// A line of prose that the text printed before, in quotes (`printed` answers for its words:
/// `echo "Pretend I'm doing useful work..."`, then that line five times under `Sample
/// output`), is the program's output shown: a loop prints it as often as it ran, so it is
/// judged as a statement written out, not as prose said again.
pub(super) fn copies_to_halt(
    parts: [&[u8]; 2],
    printed: impl FnOnce(&[u8]) -> bool,
) -> Option<u32> {
    let mut buf = [0u8; 256];
    let block = joined(parts, &mut buf);
    let mut rotated = [0u8; 256];
    let (line, k) = if one_line(parts) {
        (line_of(block, &mut rotated), 1)
    } else {
        same_lines(block, &mut rotated)?
    };
    let lines = if imports(block) {
        0
    } else if prose_line(line) {
        if printed(said(line)) {
            CODE_LINE_COPIES
        } else {
            PROSE_LINE_COPIES
        }
    } else if prints(line) {
        PROSE_LINE_COPIES
    } else if same_value_again(line) || same_key_again(line) || declares_again(line) {
        0
    } else if list_item(line) {
        fill_copies(block.len() / k as usize)
    } else {
        CODE_LINE_COPIES
    };
    Some(lines.div_ceil(k))
}

/// The block is one line written `k >= 2` times: that line (from its first byte, not its
/// indentation) and `k`. The block is a rotation of the loop: turned to begin where a line
/// does.
fn same_lines<'l>(block: &[u8], rotated: &'l mut [u8; 256]) -> Option<(&'l [u8], u32)> {
    let i = memchr::memchr(b'\n', block)? + 1;
    let n = block.len();
    rotated[..n - i].copy_from_slice(&block[i..]);
    rotated[n - i..n].copy_from_slice(&block[..i]);
    let turned = &rotated[..n];
    let first = memchr::memchr(b'\n', turned)? + 1;
    let k = n / first;
    if k < 2 || n % first != 0 || turned.chunks(first).any(|l| l != &turned[..first]) {
        return None;
    }
    let line = &turned[..first];
    let indent = line
        .iter()
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count();
    Some((&line[indent..], k as u32))
}

/// Copies of one line of code, held as two parts, before it halts when read as lines (the
/// line detector reads lines too short for a loop of symbols to cover the span a halt needs):
/// an import from `PROSE_LINE_COPIES` (importing a thing again does nothing, and people never
/// write it twice in a row) and so an output statement (see [`prints`]: three in a row at
/// most in people's code), an item of a list as many as fill a buffer (see [`list_item`]);
/// `None` for any other line, which halts from `CODE_LINE_COPIES`. A comment or a key given
/// again is not judged by its shape here: short ones stand four times and more in people's
/// code (`//\tptr ptr INT ptr ptr` drawing a frame's layout, `_: usize,` for each unused
/// parameter), where a loop of symbols never halts them for want of span.
pub(super) fn line_copies(parts: [&[u8]; 2]) -> Option<u32> {
    let mut buf = [0u8; 256];
    let block = joined(parts, &mut buf);
    let mut rotated = [0u8; 256];
    let line = line_of(block, &mut rotated);
    if imports(line) || prints(line) {
        Some(PROSE_LINE_COPIES)
    } else {
        list_item(line).then(|| fill_copies(block.len()))
    }
}

/// Copies of a list's item, `len` bytes a line, that fill a buffer spelled out
/// (`BUFFER_BYTES`, as data's fills are judged), and never fewer than a line of code needs.
fn fill_copies(len: usize) -> u32 {
    let copies = BUFFER_BYTES.div_ceil(len.max(1) as u64);
    (copies.min(u32::MAX as u64) as u32).max(CODE_LINE_COPIES)
}

/// The line (from its first byte, not its indentation) is an item of a list: one value and a
/// comma after it (`CodePoint::INVALID,`, `void_p,`, `Token::U8(0),`, `"\ufffe",`; several
/// on a line too, `Bytes::new(), Bytes::new(),`), not a key given its value or an assignment
/// (judged above). The same item again gives the next slot the same value: people fill a
/// table or an argument list with one value as long as they sized it (a 256-entry decoding
/// table, eleven pointer argument types, a test's 64 arms of a `select!`: in 250 MB of human
/// code, runs of 8 to 64 such lines), so it is judged as a buffer spelled out, by its bytes.
/// Not a record (`(self.x + other.x, self.y + other.y),`, `{"key": "value", …},`: a comma
/// inside its brackets): a table's row written again is a line of code written again; nor a
/// string (`"rust-2.10.0",`): the same words said again, not a slot filled (in those 250 MB
/// one string stands 8 times in a row once, a drawing's blank row 9); nor words side by side
/// (`FOREIGN_KEY_FK IN Customers,`, a column declared again in a table SmolLM2 writes on):
/// a value is one expression, a declaration names something.
fn list_item(line: &[u8]) -> bool {
    let end = line.len()
        - line
            .iter()
            .rev()
            .take_while(|b| b.is_ascii_whitespace())
            .count();
    let line = &line[..end];
    // The deepest comma, against the depth the line ends at (a copy cut inside brackets
    // may hold one more opening than the line).
    // And the shallowest space inside an item (not after its comma): words side by side.
    let (mut depth, mut deepest, mut worded) = (0i32, i32::MIN, i32::MAX);
    let mut prev = b',';
    for &b in line {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b',' => deepest = deepest.max(depth),
            b' ' | b'\t' if !matches!(prev, b',' | b' ' | b'\t') => worded = worded.min(depth),
            _ => {}
        }
        prev = b;
    }
    let base = depth.max(0);
    let record = deepest > base;
    let string = matches!(line.first(), Some(b'"' | b'\'' | b'`'));
    line.len() > 1
        && line.ends_with(b",")
        && !line.starts_with(b",")
        && !record
        && !string
        && worded > base
}

/// The block is one statement: it holds one line break outside parentheses and square
/// brackets (braces open blocks of statements, not one). A call wrapped over
/// several lines (`$this->expectHttpRequest($url,` … `$failure);`, written three times to
/// test three retries) is one line as its writer sees it. The block is a rotation of the
/// loop, so it may begin inside the brackets: breaks count at the shallowest depth any of
/// them stands at. (A repetition inside a line, with none, is judged by the line's length:
/// see `within_a_code_line`.)
fn one_line(parts: [&[u8]; 2]) -> bool {
    let (mut depth, mut shallowest, mut breaks) = (0i32, i32::MAX, 0u32);
    for &b in parts.iter().flat_map(|p| p.iter()) {
        match b {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            b'\n' if depth < shallowest => (shallowest, breaks) = (depth, 1),
            b'\n' if depth == shallowest => breaks += 1,
            _ => {}
        }
    }
    breaks == 1
}

/// A line of the block imports or includes something (`import`, `from … import`,
/// `#include`, `use`, `using`, `require`): importing a thing again does nothing, so such a
/// line written out again is never an unrolled loop. (The block's first 256 bytes are read.)
fn imports(block: &[u8]) -> bool {
    std::iter::once(0)
        .chain(memchr::memchr_iter(b'\n', block).map(|i| i + 1))
        .any(|start| {
            let line = &block[start..];
            let line = &line[line
                .iter()
                .take_while(|&&b| b == b' ' || b == b'\t')
                .count()..];
            let line = &line[..memchr::memchr(b'\n', line).unwrap_or(line.len())];
            [
                &b"import "[..],
                b"#include",
                b"use ",
                b"using ",
                b"require ",
                b"require(",
                b"require_relative ",
            ]
            .iter()
            .any(|k| line.starts_with(k))
                || (line.starts_with(b"from ") && memchr::memmem::find(line, b" import ").is_some())
        })
}

/// What line `l` assigns: the bytes after its first `=` that is not part of `==`, `!=`, `<=`,
/// `>=` or `=>`.
pub(super) fn assigned(l: &[u8]) -> Option<&[u8]> {
    (1..l.len().saturating_sub(1))
        .find(|&i| l[i] == b'=' && !b"=!<>".contains(&l[i - 1]) && !b"=>".contains(&l[i + 1]))
        .map(|i| &l[i + 1..])
}

/// The block's first 256 bytes, in one slice.
fn joined<'b>(parts: [&[u8]; 2], buf: &'b mut [u8; 256]) -> &'b [u8] {
    let n = parts[0].len().min(buf.len());
    buf[..n].copy_from_slice(&parts[0][..n]);
    let m = parts[1].len().min(buf.len() - n);
    buf[n..n + m].copy_from_slice(&parts[1][..m]);
    &buf[..n + m]
}

/// The block, one line in any rotation, is prose: a comment that says something (after its
/// indentation a comment leader, `//`, `/*`, `*`, `#` and white space, `--`, `;`, `%` or
/// `<!--`, and a word of three letters), or a line that holds a sentence (see
/// [`holds_sentence`]), in a string or between tags. People unroll a statement a few times
/// (`point_double(r, r);`), but do not write one sentence again and again in a row: in 16,600
/// chunks of human code and documents at most three such lines alike stand in a row, all of
/// them short (`* // 'tick'`, `* experimental New snapshot release`), as a program's output
/// shown in a document may. Not `#include` or `#[derive]`: `#` and a word at once is code.
fn prose_line(line: &[u8]) -> bool {
    let Some(body) = comment_body(line) else {
        return holds_sentence(line);
    };
    let mut run = 0;
    body.iter().any(|&b| {
        run = if b.is_ascii_alphabetic() || b >= 0x80 {
            run + 1
        } else {
            0
        };
        run >= 3
    })
}

/// The line after its comment leader (`//`, `/*`, `--`, `<!--`, `#` or `*` and a space, `;`,
/// `%`); `None` for a line that opens with none.
fn comment_body(line: &[u8]) -> Option<&[u8]> {
    match line {
        [b'/', b'/' | b'*', rest @ ..]
        | [b'-', b'-', rest @ ..]
        | [b'<', b'!', b'-', b'-', rest @ ..] => Some(rest),
        [b'#' | b'*', b' ' | b'\t' | b'#' | b'!', rest @ ..] => Some(rest),
        [b';' | b'%', rest @ ..] => Some(rest),
        _ => None,
    }
}

/// The line prints something (`print(a + b)`, `console.log(x)`, `echo "$n"`, `fmt.Println(v)`):
/// an output statement with an argument. Written again it says the same thing again, as a
/// sentence does: in every file of the 13 languages (the wide corpus, 220 MB) and the other
/// human corpora, one stands three times in a row at most (`print("#" * 80)`, a random number
/// shown thrice), so it halts from `PROSE_LINE_COPIES` as a sentence does; a model prints on.
fn prints(line: &[u8]) -> bool {
    const OUTPUT: [&[u8]; 20] = [
        b"print(",
        b"print ",
        b"println!(",
        b"print!(",
        b"eprintln!(",
        b"console.log(",
        b"console.error(",
        b"console.info(",
        b"fmt.Print",
        b"fmt.Fprint",
        b"puts ",
        b"puts(",
        b"echo ",
        b"printf(",
        b"printf ",
        b"System.out.print",
        b"std::cout <<",
        b"cout <<",
        b"Console.Write",
        b"Write-Host ",
    ];
    OUTPUT.iter().any(|k| {
        line.strip_prefix(*k).is_some_and(|rest| {
            // An argument: something said, not `print()` or a bare `echo`.
            rest.iter()
                .take_while(|&&b| b != b'\n')
                .any(|b| b.is_ascii_alphanumeric())
        })
    })
}

/// What a line of prose says: the line without its comment leader (see [`comment_body`]) and
/// the white space around it.
fn said(line: &[u8]) -> &[u8] {
    trim_ascii(comment_body(line).unwrap_or(line))
}

/// The block, one line in any rotation, assigns a value that calls nothing and does not
/// read what it assigns to (`self.state[key] = key`, `ArrayLength = 1;`, `flag=True,`):
/// written again right after itself it does nothing, so no one unrolls it. In 16,400 chunks of
/// human code and documents such a line never stands twice in a row; an unrolled statement
/// calls something or reads what it changes (`r = double(r)`, `x <<= 1`). A declaration
/// (`int x = 0;`) is not one: what precedes the `=` is one name, with its fields and indices.
fn same_value_again(line: &[u8]) -> bool {
    let Some(value) = assigned(line) else {
        return false;
    };
    let target = &line[..line.len() - value.len() - 1];
    let target = &target[..target.len()
        - target
            .iter()
            .rev()
            .take_while(|b| b.is_ascii_whitespace())
            .count()];
    // A name and its fields and indices (not `x +`, `int x`, `a, b`) before the `=`.
    let name = target
        .iter()
        .take_while(|&&b| b.is_ascii_alphanumeric() || b == b'_')
        .count();
    let whole = target
        .first()
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        && target
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b"_.[]'\"".contains(&b));
    if !whole || value.contains(&b'(') {
        return false;
    }
    // The value does not read the name assigned to.
    let base = &target[..name];
    !value
        .split(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
        .any(|w| w == base)
}

/// The block, one line in any rotation, gives a key its value (`"name": "value",`,
/// `maxIdleTime: 100000`, `role_type_id: int,`, `z-index: 2;`): a name or a quoted string at
/// the line's start, a colon, and a value on the same line. An object, a mapping, a rule of
/// style or a list of parameters holds a key once, so the same line right after itself names
/// nothing new: in 16,400 chunks of human code and documents it never stands twice in a row in
/// code. Not `std::io` or `http://`, not a line that ends at its colon (`else:`, a label), and
/// not `_`, the name of a parameter left unused, which candle's dummy backends give six times
/// in a row.
fn same_key_again(line: &[u8]) -> bool {
    let key = match line.first() {
        Some(&q @ (b'"' | b'\'')) => memchr::memchr(q, &line[1..]).map(|i| i + 2),
        Some(b) if b.is_ascii_alphabetic() || *b == b'_' => Some(
            line.iter()
                .take_while(|&&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
                .count(),
        ),
        _ => None,
    };
    // `_` is the name of what has none (an unused parameter, `_: usize,` for each): it
    // stands any number of times.
    let Some(key) = key.filter(|&k| line[..k].iter().any(|&b| b != b'_')) else {
        return false;
    };
    let rest = &line[key..];
    let rest = &rest[rest.iter().take_while(|&&b| b == b' ').count()..];
    let Some((b':', value)) = rest.split_first() else {
        return false;
    };
    // A value on the line: not `::` or `://`, and not nothing (a block or a label opens).
    !matches!(value.first(), Some(b':' | b'/')) && value.iter().any(|b| !b.is_ascii_whitespace())
}

/// The block, one line in any rotation, declares a name (`Node* head_ref;`, `private int
/// color;`, `let length = 1;`): words that end in `;`, the last of them before any `=` a
/// name, the words before it a type and its modifiers, and nothing called. Declared again
/// right after itself it declares nothing new (most languages refuse it): in 16,400 chunks of
/// human code and documents it never stands twice in a row. Not a statement led by a keyword
/// that acts (`return x;`, `delete p;`, `print x;`).
fn declares_again(line: &[u8]) -> bool {
    const ACTS: &[&[u8]] = &[
        b"return",
        b"delete",
        b"goto",
        b"throw",
        b"break",
        b"continue",
        b"yield",
        b"await",
        b"print",
        b"puts",
        b"echo",
        b"say",
        b"case",
        b"else",
        b"do",
    ];
    let line = &line[..line.len()
        - line
            .iter()
            .rev()
            .take_while(|b| b.is_ascii_whitespace())
            .count()];
    let Some(statement) = line.strip_suffix(b";") else {
        return false;
    };
    if statement.contains(&b'(') {
        return false;
    }
    let declared = match memchr::memchr(b'=', statement) {
        // `x == y;`, `x += 1;`: not a declaration.
        Some(i) if matches!(statement.get(i + 1), Some(b'=')) => return false,
        Some(i) => &statement[..i],
        None => statement,
    };
    let is_name = |w: &[u8]| {
        w.first()
            .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
            && w.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
    };
    let typeish = |w: &[u8]| {
        w.iter()
            .all(|b| b.is_ascii_alphanumeric() || b"_:<>,[]*&.".contains(b))
    };
    // The words before the last (the type and its modifiers, led by no keyword that acts),
    // read as they come: nothing is collected, this runs while a guard pushes.
    let mut words = declared
        .split(|b| b.is_ascii_whitespace())
        .filter(|w| !w.is_empty());
    let Some(mut last) = words.next() else {
        return false;
    };
    if ACTS.contains(&last) {
        return false;
    }
    let mut head = false;
    for word in words {
        if !typeish(last) {
            return false;
        }
        (last, head) = (word, true);
    }
    // `Node *head`: the pointer's star belongs to the type.
    let name = &last[last.iter().take_while(|b| matches!(b, b'*' | b'&')).count()..];
    head && is_name(name)
}

/// The line a one-line block holds, from its start: the bytes after the block's line break,
/// then those before it, without the indentation.
fn line_of<'l>(block: &[u8], line: &'l mut [u8; 256]) -> &'l [u8] {
    let (i, n) = (
        memchr::memchr(b'\n', block).map_or(0, |i| i + 1),
        block.len(),
    );
    line[..n - i].copy_from_slice(&block[i..]);
    line[n - i..n].copy_from_slice(&block[..i]);
    let line = &line[..n];
    &line[line
        .iter()
        .take_while(|&&b| b == b' ' || b == b'\t' || b == b'\n')
        .count()..]
}

/// Words a line must hold in a row to hold a sentence.
const SENTENCE_WORDS: u32 = 4;

/// The line holds a sentence: `SENTENCE_WORDS` words in a row, each parted from the next by one
/// space, each letters only, of two or more, lower case but maybe its first (an apostrophe
/// inside, quotes or a bracket before, punctuation after: `school year! We are`). Code names
/// its things otherwise (`self.x`, `add(a, b)`, `MAX_LEN`).
fn holds_sentence(line: &[u8]) -> bool {
    let mut run = 0;
    line.split(|&b| b == b' ').any(|word| {
        // Quotes and brackets around it, punctuation (and the line end) after it.
        let from = word.iter().take_while(|b| b"\"'(".contains(b)).count();
        let to = word.len()
            - word
                .iter()
                .rev()
                .take_while(|b| b",.!?;:\"')\n\r".contains(b))
                .count();
        let word = &word[from.min(to)..to];
        let plain = word.len() >= 2
            && word[0].is_ascii_alphabetic()
            && word[1..]
                .iter()
                .all(|&b| b.is_ascii_lowercase() || b == b'\'');
        run = if plain { run + 1 } else { 0 };
        run >= SENTENCE_WORDS
    })
}

#[cfg(test)]
mod tests {
    use super::one_line;

    fn lines(text: &str) -> bool {
        let (a, b) = text.split_at(text.len() / 2);
        one_line([a.as_bytes(), b.as_bytes()])
    }

    #[test]
    fn a_statement_wrapped_over_lines_is_one_line() {
        assert!(lines("point_double(r, r);\n"));
        assert!(lines(
            "$this->expect($url,\n        GET,\n        $failure);\n"
        ));
        // A rotation of that block, beginning inside its brackets.
        assert!(lines(
            "        GET,\n        $failure);\n$this->expect($url,\n"
        ));
        assert!(!lines("a = f(x)\nb = g(a)\n"));
        assert!(!lines("if x:\n    return y\n"));
        assert!(!lines("    return *this;\n}\nV& operator*=(V o) {\n"));
        assert!(!lines("no break at all"));
    }

    /// Reads `text`, a one-line block in some rotation, with `reader` as `copies_to_halt` does.
    fn read(reader: fn(&[u8]) -> bool, text: &str) -> bool {
        let mut line = [0u8; 256];
        reader(super::line_of(text.as_bytes(), &mut line))
    }

    #[test]
    fn imports_are_told_in_any_rotation() {
        let imports = |t: &str| super::imports(t.as_bytes());
        assert!(imports("import os.path\n"));
        assert!(imports("_service\nimport bank_account.account_data"));
        assert!(imports("))\nfrom flask_cors import (CORS,\n    x"));
        assert!(imports("\n#include <stdio.h>"));
        assert!(!imports("point_double(r, r);\n"));
        assert!(!imports("from the start, it was\n"));
        assert!(imports("require 'json'\n"));
        assert!(!imports("required: true\n"));
    }

    #[test]
    fn assignments_that_change_nothing_the_second_time() {
        let same = |t: &str| read(super::same_value_again, t);
        assert!(same(
            "        self.state_machine[initial_state][initial_state] = initial_state\n"
        ));
        assert!(same(
            "initial_state] = initial_state\n        self.state_machine[initial_state]["
        ));
        assert!(same("    ArrayLength = 1;\n"));
        assert!(same("    allow_cache_expiration=True,\n"));
        assert!(same("curr_val_val = curr_val_val_val + 1;\n"));
        assert!(!same("    r = double(r);\n"), "calls something");
        assert!(!same("    x = x * 2\n"), "reads what it changes");
        assert!(!same("    total += step;\n"));
        assert!(!same("    if a == b:\n"));
        assert!(!same("    int count = 0;\n"), "a declaration");
        assert!(
            !same("    a, b = b, a\n"),
            "a swap changes something every time"
        );
        assert!(!same("    <div class=\"row\">\n"));
        assert!(!same("    print(a)\n"));
    }

    #[test]
    fn keys_given_again_in_any_rotation() {
        let key = |t: &str| read(super::same_key_again, t);
        assert!(key("    \"babel-loader-2.2\": \"babel-loader-2.2\",\n"));
        assert!(key("1000000\n          maxIdleTime: "));
        assert!(key("    role_type_id: int,\n"));
        assert!(key("    z-index: 2;\n"));
        assert!(key("    'tags': ['a'],\n"));
        assert!(!key("    else:\n"), "a block opens");
        assert!(!key("    std::io::stdout();\n"));
        assert!(!key("    http://example.com/\n"));
        assert!(!key("    case 3: return x;\n"));
        assert!(!key("    x = y\n"));
        assert!(!key("    - item: 1\n"), "a list item is judged as such");
        assert!(!key("        _: usize,\n"), "`_` names what has no name");
        assert!(!key("    __: &Layout,\n"));
        assert!(key("    _id: usize,\n"));
    }

    #[test]
    fn declarations_made_again_in_any_rotation() {
        let decl = |t: &str| read(super::declares_again, t);
        assert!(decl("    Node* head_ref_ref;\n"));
        assert!(decl("    Node *head;\n"));
        assert!(decl("    private int color_color;\n"));
        assert!(decl("    let resultArrayLength = 1;\n"));
        assert!(decl("Length = 1;\n    let resultArray"));
        assert!(decl("    std::vector<int> values;\n"));
        assert!(!decl("    return result;\n"));
        assert!(!decl("    delete node;\n"));
        assert!(!decl("    total += step;\n"));
        assert!(!decl("    x == y;\n"));
        assert!(!decl("    count++;\n"));
        assert!(!decl("    int f(int x);\n"), "a prototype calls");
        assert!(!decl("    my $x;\n"));
        assert!(!decl("    print \"done\";\n"));
        assert!(
            !decl("    import java.util.List;\n"),
            "an import, judged as one"
        );
    }

    #[test]
    fn comments_and_sentences_are_prose_in_any_rotation() {
        let comment = |t: &str| read(super::prose_line, t);
        assert!(comment("    # TODO: Implement this function in Python\n"));
        assert!(comment("in Python\n    # TODO: Implement this function "));
        assert!(
            comment("  Animal:\n  //"),
            "the leader cut from its words by the rotation"
        );
        assert!(!comment("  \n  //"));
        assert!(comment("-- the name of the table\n"));
        assert!(comment(" * Returns the value.\n"));
        assert!(comment("<!-- navigation -->\n"));
        assert!(!comment("#include <algorithm>\n"));
        assert!(!comment("#[derive(Debug)]\n"));
        assert!(!comment("    # 1\n"), "no word in it");
        assert!(!comment("point_double(r, r);\n"));
        assert!(!comment("x = y  # set x\n"), "code first");
        let p = "      <p class=\"text\">Welcome to the new school year! We are excited</p>\n";
        assert!(comment(p) && comment(&p[30..]));
        assert!(comment("    print(\"Hello, welcome to the program\")\n"));
        assert!(!comment("    print(\"HTTP status code: \" + str(code))\n"));
        assert!(!comment("ecp_nistz256_point_double(r, r);\n"));
        assert!(!comment(
            "    return self.items if the_list else none_of_them\n"
        ));
    }
}

#[cfg(test)]
mod fill_tests {
    use super::{copies_to_halt, CODE_LINE_COPIES};

    /// `copies_to_halt` of a one-line block, cut into two parts at every byte.
    fn copies(block: &str) -> Vec<Option<u32>> {
        (0..=block.len())
            .filter(|&c| block.is_char_boundary(c))
            .map(|c| {
                let (a, b) = block.split_at(c);
                copies_to_halt([a.as_bytes(), b.as_bytes()], |_| false)
            })
            .collect()
    }

    #[test]
    fn an_item_of_a_list_needs_a_buffer_of_bytes() {
        // 24 bytes a copy, its indentation with it: 1,536 bytes are 64 copies.
        let item = "    CodePoint::INVALID,\n";
        assert!(copies(item)
            .iter()
            .all(|&c| c == Some(1536_u32.div_ceil(24))));
        // Several items on a line, and one whose copy begins inside its brackets.
        assert!(copies("Bytes::new(), Bytes::new(),\n")
            .iter()
            .all(|c| c.unwrap() > 50));
        assert!(copies("(base),\n        <$atomic_type>::new(")
            .iter()
            .all(|c| c.unwrap() > 30));
        // A long item still needs the copies a line of code does.
        let long = format!("{},\n", "x".repeat(400));
        assert!(copies(&long).iter().all(|&c| c == Some(CODE_LINE_COPIES)));
    }

    #[test]
    fn a_record_or_a_statement_is_not_an_item() {
        for line in [
            "(self.x + other.x, self.y + other.y),\n",
            "{\"key\": \"value\", \"value\": \"value\"},\n",
            "point_double(r, r);\n",
            "\"rust-2.10.0\",\n",
            "  FOREIGN_KEY_FK IN Customers,\n",
        ] {
            assert!(
                copies(line).iter().all(|&c| c == Some(CODE_LINE_COPIES)),
                "{line:?}: {:?}",
                copies(line)
            );
        }
    }
}

#[cfg(test)]
mod said_tests {
    use super::said;

    #[test]
    fn a_line_says_its_words_without_its_comment_leader() {
        for (line, words) in [
            ("##   Still waiting...  ", "Still waiting..."),
            ("// note this", "note this"),
            ("<!-- a remark -->", "a remark -->"),
            ("plain words here", "plain words here"),
            ("# ", ""),
        ] {
            assert_eq!(said(line.as_bytes()), words.as_bytes(), "{line:?}");
        }
    }
}
