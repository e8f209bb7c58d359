//! Names that stutter: a loop whose copy is one part of a name — `create_yaml_yaml_yaml…`,
//! `offTypeTypeType…`, `java.util.util.util…`, `nginx-dev-dev-dev…`.
//!
//! A model caught inside a name writes the same part on, a token or two a copy, often to the
//! token limit. As a loop it is short and sits inside a line, where loops of code are excused
//! until the line is longer than people write lines (the `_yaml` loop waited for its 38th
//! copy). People say a part of a name again on purpose, but not for long: a test of a long
//! name (`_TEST` eight times in a file name, a 253-byte host name of seven equal labels), a
//! walk up a tree (`super::super::super::super::`, `.parent` four times). In 39,750 source
//! files (459 MB: the cargo registry, Python's library, Go's, npm's JavaScript) and every
//! chunk of the human corpora (test files included: at most three), no name says a part more
//! than eight times in a row (`scripts/name_stutters.py`); the models' run on to dozens and
//! hundreds.
//!
//! So a loop whose copy is one unit of a name is judged by how many copies it has, wherever
//! it stands: a warning from [`STUTTER_WARN`], a halt from [`STUTTER_HALT`]. A unit is a part
//! and the joint before it (a run of `_`, `.`, `-`, `/`, `:`; none before a capital that
//! follows a small letter, `off|Type`); the part is a word of two letters that differ — small
//! letters, capitals, or a capital and small letters: not a number, not `xxxx`, not base64
//! (`Y2Nj`, `GBg`), whose loops are data.

/// Copies of a unit that warn, and that halt: past the eight people write at most.
pub(crate) const STUTTER_WARN: u32 = 6;
pub(crate) const STUTTER_HALT: u32 = 10;

/// Longest copy of a loop read, in bytes.
const MAX_COPY: usize = 128;

/// Byte classes.
const BREAK: u8 = 0;
const LOWER: u8 = 1;
const UPPER: u8 = 2;
/// A digit or a non-ASCII byte: part of a name, not a letter.
const OTHER: u8 = 3;
const JOINT: u8 = 4;

/// The class of byte `b`.
fn class(b: u8) -> u8 {
    match b {
        b'a'..=b'z' => LOWER,
        b'A'..=b'Z' => UPPER,
        b'0'..=b'9' | 0x80..=0xff => OTHER,
        b'_' | b'.' | b'-' | b'/' | b':' => JOINT,
        _ => BREAK,
    }
}

/// The units of a name in `copy` (one copy of a loop, its bytes in order, cut at any byte),
/// if it is one unit of a name or a few copies of one (a tokenizer's pieces need not end
/// where units do): read round, it holds name bytes only, units begin at evenly spaced places
/// (a joint after a byte that is not one, or a capital after a small letter) and each is the
/// same, and their part is a word that says something. Returns how many units it holds.
pub(crate) fn units_in(copy: [&[u8]; 2]) -> Option<u32> {
    let n = copy[0].len() + copy[1].len();
    if !(2..=MAX_COPY).contains(&n) {
        return None;
    }
    let byte = |k: usize| {
        let k = k % n;
        if k < copy[0].len() {
            copy[0][k]
        } else {
            copy[1][k - copy[0].len()]
        }
    };
    let class_at = |k: usize| class(byte(k));
    // Where units begin: the first place, the second, and how many.
    let (mut first, mut second, mut starts) = (None, None, 0);
    for k in 0..n {
        let (before, this) = (class_at(k + n - 1), class_at(k));
        if this == BREAK {
            return None;
        }
        if (this == JOINT && before != JOINT) || (this == UPPER && before == LOWER) {
            match first {
                None => first = Some(k),
                Some(_) if second.is_none() => second = Some(k),
                _ => {}
            }
            starts += 1;
        }
    }
    let first = first?;
    let unit = second.map_or(n, |s| s - first);
    if n % unit != 0 || starts != n / unit || (0..n - unit).any(|k| byte(k) != byte(k + unit)) {
        return None;
    }
    says((0..unit).map(|k| byte(first + k))).then_some((n / unit) as u32)
}

/// Whether a unit (a joint and a part) says something: its part is a word — small letters,
/// capitals, or one capital and small letters — with two letters that differ.
fn says(unit: impl Iterator<Item = u8>) -> bool {
    let (mut first, mut mixed, mut caps, mut small, mut letters) = (0, false, false, false, 0);
    for b in unit {
        match class(b) {
            JOINT if letters == 0 => continue,
            LOWER => small = true,
            UPPER if letters > 0 => caps = true,
            UPPER => {}
            _ => return false,
        }
        let folded = b | 0x20;
        if letters == 0 {
            first = folded;
        } else if folded != first {
            mixed = true;
        }
        letters += 1;
    }
    mixed && !(caps && small)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_unit(copy: &str) -> bool {
        units_in([copy.as_bytes(), b""]).is_some()
    }

    #[test]
    fn a_copy_of_a_loop_is_one_unit_however_it_is_cut() {
        for unit in [
            "_yaml",
            "Type",
            ".twohundredandfiftyfourcharacters",
            "::util",
            "-dev",
            "/server",
            "_TEST",
        ] {
            for cut in 0..unit.len() {
                let (a, b) = unit.as_bytes().split_at(cut);
                let rotated = [b, a].concat();
                assert_eq!(
                    units_in([&rotated[..1], &rotated[1..]]),
                    Some(1),
                    "{unit} at {cut}"
                );
                let three = rotated.repeat(3);
                assert_eq!(
                    units_in([&three[..5], &three[5..]]),
                    Some(3),
                    "{unit} at {cut}"
                );
            }
        }
    }

    #[test]
    fn other_loops_are_not_units_of_a_name() {
        for copy in [
            "_yaml_json",     // two units
            "_yaml_yaml_yam", // not whole units
            "yaml yaml",      // two names
            "yamlyaml",       // no place a unit begins
            "TypeOff",        // two parts
            "_v2",            // no word
            "_xxxx",          // one letter
            "_a",             // one letter
            "Y2Nj",           // base64
            "GBgY",           // base64
            "_GBg",           // no word: capitals after its first letter, and small letters
            ", 0x00",         // data
            "(x)",
            "",
        ] {
            assert!(!one_unit(copy), "{copy}");
        }
    }
}
