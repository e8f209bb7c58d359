//! What a repeated stretch of text is made of: words, data, filler, a drawing, a rule. A loop
//! of each is judged differently (data and filler repeat by design, a drawing or a rule is
//! as wide as a screen).

use super::{CLASS, LETTER, SEPARATOR};

/// `unit` (its bytes newest first) is white space (ASCII, or one Unicode space such as the
/// no-break space of laid-out HTML), ASCII rule punctuation, or one character drawn for rules
/// and bullets: dashes, bullets, box drawing, block elements, geometric shapes.
pub(super) fn is_rule(unit: &[u8]) -> bool {
    if unit.iter().all(|&b| CLASS[b as usize] & SEPARATOR != 0) {
        return true;
    }
    // A run is seen at any byte, so the unit is some rotation of the character.
    let n = unit.len();
    (0..n).any(|r| {
        let mut bytes = [0u8; 4];
        for (k, d) in bytes[..n].iter_mut().enumerate() {
            *d = unit[(n - 1 + n - k + r) % n];
        }
        let Ok(s) = std::str::from_utf8(&bytes[..n]) else {
            return false;
        };
        // One character, or two (a unit of four bytes holds two no-break spaces).
        s.chars().all(|c| {
            c.is_whitespace()
                || matches!(c as u32,
                0x00B7 | 0x2010..=0x2015 | 0x2022 | 0x2026 | 0x2043 | 0x2500..=0x25FF
                    | 0x2E3A | 0x2E3B | 0x30FC | 0xFF0D | 0xFF3F)
        })
    })
}

/// A character-run unit that is data: digits with escape or delimiter characters (`\x00`,
/// `0, `).
pub(super) fn is_data_unit(unit: &[u8]) -> bool {
    // A digit alone repeated (`000000`) is a run like any other; a value with its delimiter
    // or escape (`\x00`, `0, `) is data.
    unit.iter().any(u8::is_ascii_digit)
        && unit.iter().any(|&b| !b.is_ascii_digit())
        && unit
            .iter()
            .all(|&b| b.is_ascii_digit() || matches!(b, b'\\' | b'x' | b'X' | b',' | b' ' | b'.'))
}

/// How much longer than other data a run of one escaped byte (see [`is_escaped_fill`]) must
/// be to halt: a byte buffer spelled out in a string literal is as long as the buffer (Go's
/// SHA-512 tests marshal a state with 136 zero bytes, 544 characters, some 400 tokens).
pub(crate) const BUFFER_FACTOR: u32 = 4;

/// Bytes past which a loop of one number written as the items of a list, or of one escaped
/// byte, is longer than a buffer spelled out: 256 bytes as `0xNN, ` (a block, a key larger
/// than a hash's block: RFC 4231's 131-byte HMAC keys of `0xaa` in rows of eight, SHA-3's
/// 200-byte messages).
pub(crate) const BUFFER_BYTES: u64 = 256 * 6;

/// `parts` one after the other in a buffer, and their length; `None` past 128 bytes (the fill
/// tests below read a few escapes' or items' worth).
fn joined(parts: [&[u8]; 2]) -> Option<([u8; 128], usize)> {
    let mut buf = [0u8; 128];
    let n = parts[0].len() + parts[1].len();
    if n > buf.len() {
        return None;
    }
    buf[..parts[0].len()].copy_from_slice(parts[0]);
    buf[parts[0].len()..n].copy_from_slice(parts[1]);
    Some((buf, n))
}

/// The text is one escaped byte written again and again (`\x00\x00`, `\0\0`, `\u0000`),
/// wherever in an escape it begins and ends (`x00\x00\x0`), with one whole escape in it at
/// least: a byte buffer spelled out in a string literal.
pub(crate) fn is_escaped_fill(parts: [&[u8]; 2]) -> bool {
    let Some((buf, n)) = joined(parts) else {
        return false;
    };
    let text = &buf[..n];
    // One whole escape: from a backslash to the next.
    let Some(k) = text.iter().position(|&b| b == b'\\') else {
        return false;
    };
    let Some(p) = text[k + 1..]
        .iter()
        .position(|&b| b == b'\\')
        .map(|j| j + 1)
    else {
        return false;
    };
    let hex = |d: &[u8]| d.iter().all(u8::is_ascii_hexdigit);
    let valid = match &text[k + 1..k + p] {
        [b'x', d @ ..] => (1..=2).contains(&d.len()) && hex(d),
        [b'u', d @ ..] => d.len() == 4 && hex(d),
        d => (1..=3).contains(&d.len()) && d.iter().all(|b| (b'0'..=b'7').contains(b)),
    };
    // And every byte, before it and after, where that escape repeated would put it.
    valid
        && (0..n).all(|i| {
            let j = k + (i as isize - k as isize).rem_euclid(p as isize) as usize;
            text[i] == text[j]
        })
}

/// The text is one digit or a pair of them written on and on in a literal, wrapped over
/// lines (`"0000…0000" +`, `000…000\`, `7878…78`, `00 00 00`, `\xff\xff" +`): its letters
/// and digits are hex digits (an escape's `x` too, and a digit or an `x` among them)
/// repeating a unit of at most four bytes, sixteen of them at least, and nothing but quotes,
/// backslashes, `+`, commas and white space between them: a number or a buffer spelled out
/// to its length (a float parser's thousand zeros).
pub(crate) fn is_digit_fill(parts: [&[u8]; 2]) -> bool {
    // The first 256 of them are enough to tell.
    let mut digits = [0u8; 256];
    let mut m = 0;
    for &b in parts.iter().flat_map(|p| p.iter()) {
        if m == digits.len() {
            break;
        }
        if b.is_ascii_hexdigit() || b == b'x' {
            digits[m] = b;
            m += 1;
        } else if !(b"\"'\\+, \t\r\n".contains(&b)) {
            return false;
        }
    }
    let digits = &digits[..m];
    m >= 16
        && digits.iter().any(|b| b.is_ascii_digit() || *b == b'x')
        && (1..=4).any(|p| (p..m).all(|i| digits[i] == digits[i - p]))
}

/// The text is one number written again and again as the items of a list (`0x00, 0x00,`, on
/// as many lines as it takes), wherever in an item it begins and ends, with two whole items
/// at least: a byte buffer or a blank bitmap spelled out in code, as long as the buffer. The
/// number is one a buffer holds: hex, or at most five decimal digits (65535). A longer
/// decimal written again and again is no buffer: in 459 MB of source one stands five times
/// in a row (`50790`), never eight.
pub(crate) fn is_list_fill(parts: [&[u8]; 2]) -> bool {
    let Some((buf, n)) = joined(parts) else {
        return false;
    };
    let text = &buf[..n];
    let number = |d: &[u8]| match d {
        [b'0', b'x' | b'X', h @ ..] => !h.is_empty() && h.iter().all(u8::is_ascii_hexdigit),
        _ => (1..=5).contains(&d.len()) && d.iter().all(u8::is_ascii_digit),
    };
    // The fragments between separators, by where they stand: cut by the text's start (a suffix
    // of the item), by its end (a prefix), or whole (the item itself); between each two, one
    // comma.
    let (mut item, mut whole) = (None::<&[u8]>, 0);
    let (mut head, mut tail) = (None::<&[u8]>, None::<&[u8]>);
    let (mut at, mut prev_end) = (0, None::<usize>);
    for frag in text.split(|&b| b == b',' || b.is_ascii_whitespace()) {
        let (start, end) = (at, at + frag.len());
        at = end + 1;
        if frag.is_empty() {
            continue;
        }
        if prev_end.is_some_and(|p| text[p..start].iter().filter(|&&b| b == b',').count() != 1) {
            return false;
        }
        prev_end = Some(end);
        if start == 0 {
            head = Some(frag);
        } else if end == n {
            tail = Some(frag);
        } else if item.is_some_and(|i| i != frag) {
            return false;
        } else {
            (item, whole) = (Some(frag), whole + 1);
        }
    }
    item.is_some_and(|item| {
        whole >= 2
            && number(item)
            && head.map_or(true, |h| item.ends_with(h))
            && tail.map_or(true, |t| item.starts_with(t))
    })
}

/// The text is a word: letters (any non-ASCII byte counts as one) and spaces only, at least one
/// letter.
pub(crate) fn is_word(parts: [&[u8]; 2]) -> bool {
    let mut letters = false;
    for &c in parts[0].iter().chain(parts[1]) {
        match CLASS[c as usize] {
            LETTER => letters = true,
            _ if c == b' ' => {}
            _ => return false,
        }
    }
    letters
}

/// The text is data: it has a digit and holds no word, a word being three letters in a row in
/// a token that is not a number (a number has a digit and hex digits only, after an optional
/// `0x`). So numbers, hex, base64, regular expressions with digits and `0x0, 0x0` are data;
/// `sha256`, `n.mul` and `# #` are not. Bytes of multi-byte characters are letters.
pub(crate) fn is_data(parts: &[&[u8]]) -> bool {
    // The current token: its longest run of letters, the current run, whether it is hex
    // only, whether it has a digit. Data has a digit somewhere (`# # #` is not data).
    let (mut longest, mut run, mut hex, mut digit) = (0u32, 0u32, true, false);
    let mut any_digit = false;
    let is_word = |longest: u32, hex: bool, digit: bool| longest >= 3 && !(hex && digit);
    for &c in parts.iter().copied().flatten() {
        if c.is_ascii_digit() {
            (run, digit, any_digit) = (0, true, true);
        } else if c.is_ascii_alphabetic() || c >= 0x80 {
            run += 1;
            longest = longest.max(run);
            hex &= c.is_ascii_hexdigit() || ((c | 0x20) == b'x' && digit);
        } else {
            if is_word(longest, hex, digit) {
                return false;
            }
            (longest, run, hex, digit) = (0, 0, true, false);
        }
    }
    any_digit && !is_word(longest, hex, digit)
}

/// A loop's copy with its tokens whole. A copy may be cut anywhere in a token, and a cut
/// `0xaa` reads as the word `xaa`, a cut `Token::U8(0)` as `::U8(0)`: as copies follow each
/// other, the copy is turned round at its first byte that is no part of a word or a number,
/// so that the token its end cuts and the one its start cuts are one again (`xaa, 0xaa, …,
/// 0` is read as `, 0xaa, …, 0xaa`; `ffff, 0xffff` as `, 0xffffffff`). When the copy's
/// bytes are not quite one turn (they may begin a byte late), what it begins with is left
/// out if it is the end of a token the copy holds whole (`xaa, 0xaa, …,\n` is read from its
/// first comma). A copy without such a byte is left as it is.
pub(crate) fn whole_tokens<'t>(parts: [&'t [u8]; 2]) -> [&'t [u8]; 4] {
    let cut = |b: &u8| !b.is_ascii_alphanumeric() && *b != b'_' && *b < 0x80;
    let [a, b] = parts;
    let n = a.len() + b.len();
    let at = |k: usize| if k < a.len() { a[k] } else { b[k - a.len()] };
    let slice = |from: usize, to: usize| -> [&'t [u8]; 2] {
        let (a_from, a_to) = (from.min(a.len()), to.min(a.len()));
        let (b_from, b_to) = (from.max(a.len()) - a.len(), to.max(a.len()) - a.len());
        [&a[a_from..a_to], &b[b_from..b_to]]
    };
    let Some(first) = (0..n).find(|&k| cut(&at(k))) else {
        return [a, b, &[], &[]];
    };
    // The head ends a longer token held whole between the cuts: the copy begins late.
    let head_ends_a_token = first > 0 && {
        // Each token that a cut ends (not the tail, which the copy's end may cut).
        let mut start = first + 1;
        (first + 1..n).any(|k| {
            if !cut(&at(k)) {
                return false;
            }
            let ends = k - start > first && (0..first).all(|i| at(k - first + i) == at(i));
            start = k + 1;
            ends
        })
    };
    if head_ends_a_token {
        let last = (0..n).rev().find(|&k| cut(&at(k))).unwrap_or(first);
        let [x, y] = slice(first, last + 1);
        return [x, y, &[], &[]];
    }
    let ([x, y], [z, w]) = (slice(first, n), slice(0, first));
    [x, y, z, w]
}

/// The text is filler: its words are all literal constants (`NULL`, `nullptr`, `None`, `nil`,
/// `true`, `false`, `undefined`), among digits and punctuation: a table's empty slots
/// (`NULL,` seventy-five times in numpy's API table) say as little as zeros do.
pub(crate) fn is_filler(parts: &[&[u8]]) -> bool {
    const LITERALS: &[&[u8]] = &[
        b"NULL",
        b"null",
        b"nullptr",
        b"nil",
        b"None",
        b"true",
        b"false",
        b"True",
        b"False",
        b"undefined",
    ];
    let mut word = [0u8; 16];
    let (mut len, mut words) = (0usize, 0usize);
    for c in parts
        .iter()
        .copied()
        .flatten()
        .copied()
        .chain(std::iter::once(b' '))
    {
        if c >= 0x80 {
            return false;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            if len == word.len() {
                return false;
            }
            word[len] = c;
            len += 1;
        } else if len > 0 {
            if !LITERALS.contains(&&word[..len]) {
                return false;
            }
            words += 1;
            len = 0;
        }
    }
    words > 0
}

/// The text is a drawing: rows of spaces, punctuation and the drawing characters of Unicode
/// (box drawing, U+2500 to U+257F, and block elements, U+2580 to U+259F), at least one line
/// break and no letter or digit (ASCII art, a chart's axis and bars, a table's frame, a
/// terminal UI's expected buffer, a spinner's frames). The text may begin or end inside a
/// character.
pub(crate) fn is_drawing(parts: [&[u8]; 2]) -> bool {
    // 0: between characters; 1: after the lead byte `E2`; 2: one continuation byte to come;
    // 3: one continuation byte of a block element (`80` to `9F`) to come.
    let (mut state, mut begun, mut rows) = (0u8, false, false);
    for &c in parts[0].iter().chain(parts[1]) {
        state = match (state, c) {
            // The tail of a character cut at the text's start.
            (0, 0x80..=0xbf) if !begun => 0,
            (0, 0xe2) => 1,
            (0, _) if c.is_ascii_alphanumeric() || c >= 0x80 => return false,
            (0, _) => 0,
            (1, 0x94 | 0x95) => 2,
            (1, 0x96) => 3,
            (2, 0x80..=0xbf) | (3, 0x80..=0x9f) => 0,
            _ => return false,
        };
        begun |= !(0x80..0xc0).contains(&c);
        rows |= c == b'\n';
    }
    rows
}

/// The text is empty comments: each of its lines, white space aside, is blank or a comment
/// leader with nothing after it (`#`, `##`, `//`, `--`, `;`, `*`, `%`, `!`), and one is; its
/// first and last lines may be cut inside a leader (a block of symbols begins and ends where
/// the tokens do: `/\n/`). A drawing by [`is_drawing`]'s reading, but not a picture: an empty
/// comment parts the paragraphs of a comment, and in 16,600 chunks of human code and documents
/// no more than three of them stand in a row.
pub(crate) fn is_empty_comment(parts: [&[u8]; 2]) -> bool {
    // Per line: the leader's byte, its length, whether white space followed it, and whether
    // anything else came.
    let (mut leader, mut len, mut spaced, mut other, mut any) = (0u8, 0usize, false, false, false);
    let mut line_ok = |leader: u8, len: usize, other: bool, cut: bool| {
        let whole = match leader {
            b'#' | b';' | b'%' | b'!' => len <= 3,
            b'/' => (2..=3).contains(&len),
            b'-' => len == 2,
            b'*' => len == 1,
            _ => false,
        };
        let part = cut && matches!(leader, b'/' | b'-') && len == 1;
        let ok = len == 0 || (!other && (whole || part));
        any |= len > 0 && !other && whole;
        ok
    };
    let mut first = true;
    for &c in parts[0].iter().chain(parts[1]) {
        match c {
            b'\n' => {
                if !line_ok(leader, len, other, first) {
                    return false;
                }
                (leader, len, spaced, other, first) = (0, 0, false, false, false);
            }
            b' ' | b'\t' | b'\r' => spaced |= len > 0,
            _ if len == 0 => (leader, len) = (c, 1),
            _ if c == leader && !spaced => len += 1,
            _ => other = true,
        }
    }
    line_ok(leader, len, other, true) && any
}

/// The text is a rule drawn with a pattern of rule punctuation and single letters
/// (`=x=x=x=`, `-o-o-o-`, `*v*v*`): a decoration, not words. Every letter stands alone between
/// rule characters (`=-~*_+#.:^`), and there is no digit, no white space and no other byte:
/// not a list (`a,a,a,`), a tag (`<p></p>`), an escape (`\r\n`) or a path (`a/b/`). A line end
/// may close it. Only patterns with a letter: rules of punctuation alone are
/// [`is_rule_text`]'s or [`is_drawing`]'s.
pub(crate) fn is_drawn_pattern(parts: [&[u8]; 2]) -> bool {
    // One pass, which most text leaves at its second byte (two letters in a row).
    let (mut letters, mut after_letter, mut ended) = (0, false, false);
    for &c in parts[0].iter().chain(parts[1]) {
        // The line may have ended with the newest token: nothing but its end comes after it.
        if c == b'\n' || c == b'\r' {
            ended = true;
            continue;
        }
        let letter = c.is_ascii_alphabetic();
        if ended || (letter && after_letter) || (!letter && !b"=-~*_+#.:^".contains(&c)) {
            return false;
        }
        letters += letter as usize;
        after_letter = letter;
    }
    letters > 0
}

/// The text is one horizontal rule: rule characters and spaces on one line (see [`is_rule`]);
/// bytes of a character cut at either end are ignored.
pub(crate) fn is_rule_text(parts: [&[u8]; 2]) -> bool {
    // Most text begins with a letter or a digit, which no rule holds.
    let first = parts.iter().find_map(|p| p.first());
    if first.is_some_and(u8::is_ascii_alphanumeric) {
        return false;
    }
    if parts.iter().any(|p| memchr::memchr(b'\n', p).is_some()) {
        return false;
    }
    let mut rules = 0;
    // A character cut by the ring's seam, its bytes at the end of one part and the start of the
    // other, is read whole.
    let [a, b] = parts;
    let lead = a.len().saturating_sub(3)..a.len();
    // A lead byte of a character of up to four bytes (0xf8 and up begin none).
    let cut = lead.rev().find(|&k| a[k] >= 0xc0).filter(|&k| {
        let len = a[k].leading_ones() as usize;
        len <= 4 && k + len > a.len() && k + len - a.len() <= b.len()
    });
    let mut seam = [0u8; 4];
    let (a, seam, b) = match cut {
        Some(k) => {
            let from_b = k + a[k].leading_ones() as usize - a.len();
            let n = a.len() - k + from_b;
            seam[..a.len() - k].copy_from_slice(&a[k..]);
            seam[a.len() - k..n].copy_from_slice(&b[..from_b]);
            (&a[..k], &seam[..n], &b[from_b..])
        }
        None => (a, &seam[..0], b),
    };
    for part in [a, seam, b] {
        for chunk in part.utf8_chunks() {
            for c in chunk.valid().chars() {
                let mut buf = [0u8; 4];
                let bytes = c.encode_utf8(&mut buf).as_bytes();
                let mut rev = [0u8; 4];
                for (d, s) in rev.iter_mut().zip(bytes.iter().rev()) {
                    *d = *s;
                }
                if !is_rule(&rev[..bytes.len()]) {
                    return false;
                }
                rules += 1;
            }
        }
    }
    rules > 0
}

/// The text is made of one of the characters reStructuredText recommends for a section's
/// underline that no rule is drawn with (`""""`, Sphinx's fifth level; `''''`; `::::`): as
/// long as a title, it is a rule. Not a rule character (see [`is_rule`]): as a line's first
/// bytes `"""` opens a Python docstring.
pub(crate) fn is_underline(parts: [&[u8]; 2]) -> bool {
    let mut bytes = parts.iter().flat_map(|p| p.iter());
    let first = bytes.next().copied();
    matches!(first, Some(b'"' | b'\'' | b':')) && bytes.all(|&b| Some(b) == first)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `s` as the two parts of a ring, cut at byte `at`.
    fn cut(s: &str, at: usize) -> [&[u8]; 2] {
        let (a, b) = s.as_bytes().split_at(at);
        [a, b]
    }

    #[test]
    fn box_drawing_and_block_elements_draw_and_other_scripts_do_not() {
        for yes in [
            "    \"│                │\",\n",
            "┌──────┐\n│      │\n└──────┘\n",
            "  \"█████▁▁▁▁▁\",\n",
            "░░▒▒▓▓\n",
        ] {
            // However the text is cut, inside a character too.
            for at in 0..=yes.len() {
                assert!(is_drawing(cut(yes, at)), "{yes:?} cut at {at}");
            }
            // And from inside its first character.
            assert!(is_drawing([&yes.as_bytes()[1..], b""]) || yes.is_char_boundary(1));
        }
        for no in [
            "│ é │\n",
            "│ 猫 │\n",
            "│ x │\n",
            "│ 1 │\n",
            "│ … │\n",
            "│    │",
            "★ ★\n",
        ] {
            for at in 0..=no.len() {
                assert!(!is_drawing(cut(no, at)), "{no:?} cut at {at}");
            }
        }
    }

    #[test]
    fn empty_comments_are_told_from_drawings() {
        let empty = |s: &str| is_empty_comment(cut(s, s.len() / 2));
        for yes in [
            "#  \n", "#\n\n", "  //\n", " *\n", "--\n", ";;\n", "%\n#\n", "##\n", "/\n//\n/",
            "-\n--\n",
        ] {
            assert!(empty(yes), "{yes:?}");
        }
        for no in [
            "\n\n",
            "#   #\n",
            "| |\n",
            "##########\n",
            "-\n",
            "---\n",
            "/\n",
            "**\n",
            "# a\n",
            "#-\n",
        ] {
            assert!(!empty(no), "{no:?}");
        }
    }

    #[test]
    fn patterns_of_rule_punctuation_and_single_letters_are_drawn() {
        let drawn = |s: &str| is_drawn_pattern(cut(s, s.len() / 2));
        for yes in [
            "=x=x=x=",
            "x=x=x=x",
            "-o-o-o-",
            "*v*v*v*",
            "=-x-=-x-=",
            "=x=x=x=\n",
            "=x\n",
        ] {
            assert!(drawn(yes), "{yes:?}");
        }
        for no in [
            "hahaha",
            "=xx=xx=",
            "a,a,a,a",
            "1=1=1=1",
            "=x= =x=",
            "======",
            "x=yx=yx=y",
            "=a=\n=b=",
            "<p></p><p>",
            "\\r\\n\\t\\r",
            "a/b/c/",
            "|a|a|",
        ] {
            assert!(!drawn(no), "{no:?}");
        }
    }

    #[test]
    fn escaped_fills_are_one_escape_again_and_again() {
        let fill = |s: &str| is_escaped_fill(cut(s, s.len() / 2));
        for yes in [
            r"\x00\x00",
            r"\x00\",
            r"x00\x00\x0",
            r"0\x00\x",
            r"\0\0\0",
            r"\u0000\u0000",
            r"\xff\xff\xff",
        ] {
            assert!(fill(yes), "{yes}");
        }
        for no in [
            r"\x00",
            r"x00\x",
            r"\x00\x01",
            r"\n\n\n",
            r"\xzz\xzz",
            r"0, 0, ",
            r"\x00 \x00 ",
            r"\\\\",
            "",
        ] {
            assert!(!fill(no), "{no}");
        }
    }

    #[test]
    fn list_fills_are_one_number_again_and_again() {
        let fill = |s: &str| is_list_fill(cut(s, s.len() / 3));
        for yes in [
            "0x00, 0x00, 0x00, ",
            "x00, 0x00, 0x00, 0x",
            "00,\n   0x00, 0x00, 0",
            "0, 0, 0, 0",
            "255,255,255,",
            " 0x00, 0x00, 0x00",
            "65535, 65535, 65535, ",
        ] {
            assert!(fill(yes), "{yes:?}");
        }
        for no in [
            "0x00, 0x01, 0x00, ",
            "0x00 0x00 0x00 ",
            "0x00,, 0x00, 0x00",
            "a, a, a, a, ",
            "0x, 0x, 0x, ",
            "1x00, 0x00, 0x00, ",
            "0x00, 0x00, ",
            r"\x00\x00\x00",
            "1234567890, 1234567890, 1234567890, ",
            "",
        ] {
            assert!(!fill(no), "{no:?}");
        }
    }

    #[test]
    fn a_copy_is_read_with_its_tokens_whole() {
        for copy in [
            "xaa, 0xaa, 0xaa, 0xaa,\n\t\t\t0",
            "xaa, 0xaa, 0xaa,\n\t\t\t0xaa, 0xaa, 0xaa,\n",
        ] {
            assert!(
                !is_data(&[copy.as_bytes()]),
                "cut inside a number, `xaa` is a word"
            );
            for k in 0..copy.len() {
                let (a, b) = copy.as_bytes().split_at(k);
                assert!(is_data(&whole_tokens([a, b])), "{copy:?} split at {k}");
            }
        }
        let copy = "ULL, NULL, N";
        assert!(is_filler(&whole_tokens([copy.as_bytes(), b""])));
        assert_eq!(whole_tokens([b"abc", b"def"]).concat(), b"abcdef");
        assert_eq!(whole_tokens([b"ab, c", b"d, ef"]).concat(), b", cd, efab");
        // A name the copy begins with is whole, not cut: no data.
        for k in 0..17 {
            let copy = b"Token::U8(0),\n    ";
            let (a, b) = copy.split_at(k);
            assert!(!is_data(&whole_tokens([a, b])), "cut at {k}");
        }
        // One token and its separator, cut anywhere: turned round.
        for k in 0..12 {
            let copy = b"0xffffffff, ";
            let turned = [&copy[k..], &copy[..k]].concat();
            let (a, b) = turned.split_at(5.min(turned.len()));
            assert!(is_data(&whole_tokens([a, b])), "cut at {k}");
        }
    }

    #[test]
    fn digits_written_on_in_a_literal_are_a_fill() {
        for text in [
            "0000000000000000000000\\\n000000000000",
            "\"0000000000000000\" +\n\t\"00000000",
            "78787878\" +\n\t\t\t\"7878787878787878",
            "00 00 00 00 00 00 00 00\n\t00 00 00",
            "\\xff\\xff\\xff\" +\n\t\t\"\\xff\\xff\\xff\\xff",
        ] {
            assert!(is_digit_fill([text.as_bytes(), b""]), "{text:?}");
        }
        for text in [
            "1234567890123456789012345",
            "deadbeefdeadbeefdeadbeef",
            "0000000000000000 and 0000000000000",
            "0x00, 0x01, 0x00, 0x01",
        ] {
            assert!(!is_digit_fill([text.as_bytes(), b""]), "{text:?}");
        }
    }

    proptest::proptest! {
        /// Any bytes, cut anywhere into the two parts of the ring: every reader of a copy
        /// answers without a panic.
        #[test]
        fn any_copy_is_read_without_a_panic(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
            cut in 0usize..200,
        ) {
            let (a, b) = bytes.split_at(cut.min(bytes.len()));
            let whole = whole_tokens([a, b]);
            proptest::prop_assert!(whole.iter().map(|p| p.len()).sum::<usize>() <= bytes.len());
            let _ = (is_data(&whole), is_filler(&whole), is_data(&[a, b]));
            let _ = (is_rule_text([a, b]), is_list_fill([a, b]), is_escaped_fill([a, b]));
            let _ = is_digit_fill([a, b]);
            let _ = crate::stutter::units_in([a, b]);
        }
    }

    #[test]
    fn a_rule_cut_by_the_seam_of_the_ring_is_a_rule() {
        // The bytes a two-token loop of `░` (`e2 96`, `91`) shows, cut at both ends: the one
        // whole character lies across the seam.
        let (a, b) = ([0x96, 0x91, 0xe2], [0x96, 0x91, 0xe2, 0x96]);
        assert!(is_rule_text([&a, &b]));
        let rule = "░░░░░░".as_bytes();
        for k in 0..rule.len() {
            let (a, b) = rule.split_at(k);
            assert!(is_rule_text([a, b]), "cut at {k}");
        }
        assert!(!is_rule_text([&rule[..4], b"x"]));
        // Bytes no character begins with, at the seam: no rule, and no panic.
        for lead in [0xf8u8, 0xfc, 0xfe, 0xff, 0xc0] {
            assert!(!is_rule_text([&[0x96, lead], &[0x80; 9]]), "{lead:#x}");
        }
    }

    /// The unit as `char_finding` sees it: the last `n` bytes of `s`, newest first.
    fn unit(s: &str, n: usize) -> Vec<u8> {
        s.as_bytes().iter().rev().take(n).copied().collect()
    }

    #[test]
    fn data_has_no_words() {
        for data in [
            ", 0x00",
            "0x0, 0x0},\n\t{0x",
            "][0-9",
            "1234567890abcdef",
            "Y2Nj",
            "),[\\t\\ ]*(0x[^,]+",
            ", 0",
            "3.14, 2e10, -7",
            "0xdeadbeef",
        ] {
            assert!(is_data(&[data.as_bytes()]), "{data:?}");
        }
        for words in [
            "let n = n.wrapping_mul(n);",
            "the cat",
            "foo(1)",
            "éàü",
            "sha256",
            "facade",
        ] {
            assert!(!is_data(&[words.as_bytes()]), "{words:?}");
        }
    }

    #[test]
    fn rules_are_recognised_at_any_byte_of_the_character() {
        for s in [
            "━━━",
            "━━━\u{94}"[..9].as_ref(),
            "——",
            "••",
            "--",
            "  ",
            "==",
            "^^",
        ] {
            let n = s.chars().next().unwrap().len_utf8();
            for cut in 0..n {
                let t = &s.as_bytes()[..s.len() - cut];
                let u: Vec<u8> = t.iter().rev().take(n).copied().collect();
                assert!(is_rule(&u), "{s:?} cut {cut}");
            }
        }
        assert!(!is_rule(&unit("aaa", 1)));
        assert!(!is_rule(&unit("ああ", 3)));
        assert!(!is_rule(&unit("!!", 1)));
        assert!(is_underline([b"\"\"", b"\"\"\""]) && is_underline([b"::::", b""]));
        assert!(!is_underline([b"\"'", b""]) && !is_underline([b"", b""]));
        assert!(
            !is_underline([b"!!!!", b""]),
            "not every punctuation: `!!!!` is a model's loop"
        );
    }
}
