//! Templates re-filled: a block of code lines whose skeletons (each line with its names,
//! numbers and words read as one placeholder) come back sibling after sibling — a test case,
//! a function, a table entry written again with new names.
//!
//! People do this too, and often: SQL function declarations, the sections of a Cargo.toml,
//! JSON schemas and test suites hold 10 to 20 siblings of one skeleton in a thousand tokens.
//! The skeleton alone cannot tell them from a model that goes on emitting sibling tests after
//! its task is done, and neither can the rate of new words (every sibling brings a new name).
//! So a long run of siblings warns, and it halts only past a budget the host sets: a host
//! that asked for one function knows that twelve siblings of it are waste.
//!
//! O(1) per line (one comparison per period), no allocation: a ring of the last
//! [`RING`] skeletons and, per period, how many lines in a row equal the line that period
//! back.

/// Skeletons remembered: blocks of up to `RING - 1` lines.
const RING: usize = 16;

/// Periods (in lines) a template may have: a block of at least two lines. A one-line skeleton
/// repeated is a list or a table, which people write at any length.
const MIN_PERIOD: usize = 2;

/// A run of siblings: the block's lines and how many copies of it came in a row.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Run {
    /// Lines in one copy.
    pub period: u32,
    /// Lines in the run, its first copy included.
    pub lines: u32,
}

impl Run {
    /// Whole copies of the block.
    pub fn copies(&self) -> u32 {
        self.lines / self.period.max(1)
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Templates {
    /// The last skeletons, the newest at `pos % RING`.
    ring: [u16; RING],
    /// Per period `p`, lines in a row that equal the line `p` back (saturating).
    matched: [u8; RING],
    /// Lines pushed since the last break (saturating at `RING`): only those are compared.
    fresh: u8,
    pos: u8,
}

impl Templates {
    pub fn new() -> Templates {
        Templates {
            ring: [0; RING],
            matched: [0; RING],
            fresh: 0,
            pos: 0,
        }
    }

    pub fn reset(&mut self) {
        *self = Templates::new();
    }

    /// A line that is not code (prose, a heading): the siblings, if any, have ended.
    pub fn interrupt(&mut self) {
        self.matched = [0; RING];
        self.fresh = 0;
    }

    /// Takes the skeleton of the next code line; returns the run of siblings it extends, the
    /// shortest block that repeats (two copies at least) and holds lines of at least two
    /// skeletons, as many as half its lines.
    pub fn push(&mut self, skeleton: u16) -> Option<Run> {
        self.pos = self.pos.wrapping_add(1);
        self.ring[self.pos as usize % RING] = skeleton;
        self.fresh = (self.fresh + 1).min(RING as u8);
        let mut found = None;
        for p in MIN_PERIOD..RING {
            if (self.fresh as usize) > p && self.back(p) == skeleton {
                self.matched[p] = self.matched[p].saturating_add(1);
            } else {
                self.matched[p] = 0;
            }
            let m = self.matched[p] as usize;
            if found.is_none() && m >= p && self.varied(p) {
                found = Some(Run {
                    period: p as u32,
                    lines: (m + p) as u32,
                });
            }
        }
        found
    }

    /// The skeleton `k` lines before the newest.
    fn back(&self, k: usize) -> u16 {
        self.ring[(self.pos as usize + RING - k) % RING]
    }

    /// The newest `p` lines hold at least two skeletons, and as many as half of `p`.
    fn varied(&self, p: usize) -> bool {
        let mut seen = [0u16; RING];
        let mut n = 0;
        for k in 0..p {
            let s = self.back(k);
            if !seen[..n].contains(&s) {
                seen[n] = s;
                n += 1;
            }
        }
        n >= 2 && 2 * n >= p
    }
}

/// The skeleton of a line (its first block of bytes, indentation left out): every run of
/// letters, digits, `_` and non-ASCII bytes reads as one placeholder, every run of spaces as
/// one space; punctuation stays. `def test_add(self):` and `def test_sub(self):` share one.
pub(crate) fn skeleton(line: &[u8], indent: u32) -> u16 {
    const WORD: u8 = b'a';
    let mut h: u32 = 0x811c_9dc5 ^ indent.wrapping_mul(0x9e37_79b9);
    let mut prev = 0u8;
    for &b in line {
        let c = if b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80 {
            WORD
        } else if matches!(b, b' ' | b'\t' | b'\r') {
            b' '
        } else {
            b
        };
        if (c == WORD || c == b' ') && c == prev {
            continue;
        }
        prev = c;
        h = (h ^ c as u32).wrapping_mul(0x0100_0193);
    }
    (h ^ (h >> 16)) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_of(lines: &[&str]) -> Option<Run> {
        let mut t = Templates::new();
        let mut last = None;
        for l in lines {
            let indent = l.len() - l.trim_start().len();
            last = t.push(skeleton(l.trim_start().as_bytes(), indent as u32));
        }
        last
    }

    #[test]
    fn siblings_with_new_names_share_a_skeleton() {
        assert_eq!(
            skeleton(b"def test_add(self):", 0),
            skeleton(b"def test_subtract_2(self):", 0)
        );
        assert_ne!(
            skeleton(b"def test_add(self):", 0),
            skeleton(b"def test_add(self):", 4)
        );
        assert_ne!(skeleton(b"x = f(a)", 0), skeleton(b"x = f(a, b)", 0));
        let mut lines = Vec::new();
        for name in ["add", "sub", "mul", "div"] {
            lines.push(format!("def test_{name}(self):"));
            lines.push(format!("    self.assertEqual({name}(1, 2), 3)"));
        }
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        assert_eq!(
            run_of(&refs),
            Some(Run {
                period: 2,
                lines: 8
            })
        );
        assert_eq!(run_of(&refs).unwrap().copies(), 4);
    }

    #[test]
    fn one_line_lists_and_interruptions_make_no_run() {
        let list = ["x = 1", "y = 2", "z = 3", "w = 4", "v = 5"];
        assert_eq!(run_of(&list), None);
        // Siblings interrupted by prose start counting again after it.
        let mut t = Templates::new();
        let sibling = |t: &mut Templates| {
            t.push(skeleton(b"fn a() {", 0));
            t.push(skeleton(b"b(c);", 4))
        };
        for _ in 0..3 {
            sibling(&mut t);
        }
        t.interrupt();
        assert_eq!(sibling(&mut t), None);
        assert_eq!(
            sibling(&mut t),
            Some(Run {
                period: 2,
                lines: 4
            })
        );
    }
}
