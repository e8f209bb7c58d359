//! Blocks that nest themselves: the same lines again, each copy one level deeper
//! (`val year_sort: Book {` inside `val year_sort: Book {` inside …). Every copy differs from
//! the last in its indentation, so neither the exact-loop engine (whose tokens of indentation
//! change) nor the line engine (which reads indentation as part of a line) sees a repeat.
//!
//! People nest the same line inside itself rarely and not deeply: in 7 M tokens of human code
//! and text (`scripts/code_corpus.py`, `scripts/human_text.py`) no line comes back verbatim
//! one level deeper more than three times in a row. Models that fall into it run to the token
//! limit, 13 and 33 lines deep in the fresh prompts' streams.
//!
//! O(1) per line, no allocation: a line is known by a signature of its content (its length
//! without the indentation and four words of it), kept for the last
//! [`RING`] lines with their indentation; per period of 1 to [`MAX_PERIOD`] lines, how many
//! lines in a row equal the line that period back and stand deeper than it.

/// Longest block, in lines, whose nesting is followed.
const MAX_PERIOD: usize = 4;
/// Lines remembered: a line is compared with those up to `MAX_PERIOD` back before it takes
/// the oldest one's place.
const RING: usize = MAX_PERIOD;

/// Lines in a row, each one level deeper than the same line a period back, that warn: one
/// more than people write; and at least two nestings of the block (a retry nested once in
/// its own `except` is one).
pub(crate) const NEST_WARN: u32 = 4;
/// … and that halt, with at least three nestings of the block.
pub(crate) const NEST_HALT: u32 = 8;

/// Lines in a row that warn and that halt for a block of `period` lines.
pub(crate) fn nest_bounds(period: u32) -> (u32, u32) {
    (NEST_WARN.max(2 * period), NEST_HALT.max(3 * period))
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Nesting {
    /// Signatures and indentations (in columns, at most 255) of the last lines signed, at
    /// `line % RING`. Lines are those the line engine counts (a blank line or a lone `}` is
    /// not one, and is skipped here as there); one that is not signed (prose, a line at the
    /// margin or longer than the buffer) is a [`gap`](Self::gap) that ends every run: a line
    /// a period back is compared only within the lines signed in a row since (`stretch` of
    /// them, at most `RING`).
    sig: [u16; RING],
    indent: [u8; RING],
    stretch: u8,
    /// Per period (1 to `MAX_PERIOD` lines), the lines in a row that nested (at most 255).
    runs: [u8; MAX_PERIOD],
}

/// How deep a block has nested itself: the period in lines, and the lines in a row that stood
/// one copy deeper than the same line a period back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Nest {
    pub period: u32,
    pub run: u32,
}

impl Nesting {
    pub fn reset(&mut self) {
        *self = Nesting::default();
    }

    /// Reads line `line` (an index that grows by one a line, gaps included), signed `sig` (see
    /// [`signature`]) and indented `indent` columns; returns the deepest nesting it continues.
    pub fn push(&mut self, line: u64, sig: u16, indent: u32) -> Nest {
        let indent = indent.min(u8::MAX as u32) as u8;
        if self.stretch == 0 {
            // After a gap: every run ended there.
            self.runs = [0; MAX_PERIOD];
        }
        let mut best = Nest::default();
        for (k, run) in self.runs.iter_mut().enumerate() {
            let p = k + 1;
            let back = (line.wrapping_sub(p as u64) % RING as u64) as usize;
            let nested =
                p <= self.stretch as usize && self.sig[back] == sig && indent > self.indent[back];
            *run = if nested { run.saturating_add(1) } else { 0 };
            if *run as u32 > best.run {
                best = Nest {
                    period: p as u32,
                    run: *run as u32,
                };
            }
        }
        let at = (line % RING as u64) as usize;
        (self.sig[at], self.indent[at]) = (sig, indent);
        self.stretch = (self.stretch + 1).min(RING as u8);
        best
    }

    /// A line not signed: the lines before it are not compared with those after.
    #[inline]
    pub fn gap(&mut self) {
        self.stretch = 0;
    }
}

/// A line's signature without its indentation: its length and four words of it after the
/// leading white space, the first and the last eight bytes and two between (a line of up to
/// 32 bytes whole, a longer one sampled). 0 for a line with nothing but white space.
pub(crate) fn signature(line: &[u8]) -> u16 {
    // Indentation eight spaces at a time, then byte by byte.
    let mut lead = 0;
    while line.len() >= lead + 8 && line[lead..lead + 8] == [b' '; 8] {
        lead += 8;
    }
    while lead < line.len() && matches!(line[lead], b' ' | b'\t') {
        lead += 1;
    }
    let body = &line[lead..];
    let n = body.len();
    let words = if n >= 8 {
        let word = |at: usize| u64::from_le_bytes(body[at..at + 8].try_into().expect("8 bytes"));
        let last = n - 8;
        [word(0), word(last / 3), word(2 * last / 3), word(last)]
    } else if n > 0 {
        let mut w = [0u8; 8];
        w[..n].copy_from_slice(body);
        [u64::from_le_bytes(w), 0, 0, 0]
    } else {
        return 0;
    };
    let mut h = (n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for w in words {
        h = (h ^ w).wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 29;
    }
    (h >> 48) as u16 | 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nest(lines: &[&str]) -> Nest {
        let mut n = Nesting::default();
        let mut last = Nest::default();
        for (i, l) in lines.iter().enumerate() {
            let indent = (l.len() - l.trim_start().len()) as u32;
            let sig = signature(l.as_bytes());
            if sig != 0 {
                last = n.push(i as u64, sig, indent);
            } else {
                n.gap();
            }
        }
        last
    }

    #[test]
    fn a_block_one_level_deeper_each_copy_nests() {
        let mut lines = Vec::new();
        for depth in 0..5 {
            let pad = "    ".repeat(depth);
            lines.push(format!("{pad}val year: Int = year"));
            lines.push(format!("{pad}val book_sort: Book {{"));
        }
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        assert_eq!(nest(&lines), Nest { period: 2, run: 8 });
    }

    #[test]
    fn the_same_depth_other_lines_or_shallower_do_not_nest() {
        assert_eq!(nest(&["x = f(x)", "x = f(x)", "x = f(x)"]).run, 0);
        assert_eq!(
            nest(&["for a in b:", "    for c in a:", "        for d in c:"]).run,
            0
        );
        assert_eq!(nest(&["        }", "    }", "}"]).run, 0);
        assert_eq!(nest(&["", "    ", "        "]).run, 0);
        // Lines not signed in between end the run.
        assert_eq!(
            nest(&["  a = b", "    a = b", "", "", "", "", "      a = b"]).run,
            0
        );
        assert_ne!(signature(b"  let a = b;"), signature(b"  let a = c;"));
        assert_ne!(
            signature(br#"if test "$major" -eq "$req_major"; then"#),
            signature(br#"if test "$minor" -eq "$req_minor"; then"#)
        );
        assert_eq!(signature(b"\tlet a = b;"), signature(b"        let a = b;"));
    }
}
