//! How much new a text stream is still saying: the share of its recent words never seen
//! before in it.
//!
//! Human structured text is regular but keeps introducing new names and values — a list of
//! declarations names a new function on every line, a changelog a new change. A model that
//! degenerates goes round in circles and stops saying anything new: its words all come back.
//! Repeated 4-grams (the near-loop coverage) see both as repetition; the rate of new words
//! tells them apart.
//!
//! Words are identifiers (letters, digits, `_` and non-ASCII bytes), so `foo(bar)` is two; a
//! word of digits alone is read as one number, so a counter that steps (`== 39`, `== 40`) is
//! not news. "Never seen" is approximate and bounded: two generations of a 1024-bit Bloom
//! filter (two bits a word) remember every word of the last 128 to 256, so a loop whose copies
//! hold up to 128 words is all "seen"; a word wrongly read as seen (under one in ten while a
//! generation fills) only makes a stream look a little less new. The rate is taken over the
//! last 64 words. O(1) per byte, no allocation.

/// 64-bit words of one generation of the filter.
const GEN_WORDS: usize = 16;
/// Words written into a generation before the older one is cleared and takes its place.
const GEN_SPAN: u8 = 128;
/// Words the rate is taken over (one bit each).
pub(crate) const NOVELTY_WINDOW: u32 = 64;

/// The new-word rate of one stream.
#[derive(Clone, Debug)]
pub(crate) struct Novelty {
    /// Two generations of seen words: bits `[cur * GEN_WORDS..][..GEN_WORDS]` take new ones.
    seen: [u64; 2 * GEN_WORDS],
    cur: u8,
    /// Words written into the current generation.
    gen_words: u8,
    /// The last `NOVELTY_WINDOW` words, newest in bit 0: set when the word was new.
    window: u64,
    /// Words read, capped at `NOVELTY_WINDOW`.
    words: u8,
    /// The word being read: its hash so far, whether it has bytes, whether they are all
    /// digits.
    word_hash: u64,
    word_open: bool,
    word_digits: bool,
}

/// The bytes words are made of.
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

impl Novelty {
    pub fn new() -> Novelty {
        Novelty {
            seen: [0; 2 * GEN_WORDS],
            cur: 0,
            gen_words: 0,
            window: 0,
            words: 0,
            word_hash: 0,
            word_open: false,
            word_digits: true,
        }
    }

    /// Forgets the stream, as if new.
    pub fn reset(&mut self) {
        *self = Novelty::new();
    }

    /// New words among the last [`NOVELTY_WINDOW`] (all of them while fewer were read).
    #[inline]
    pub fn new_words(&self) -> u32 {
        if (self.words as u32) < NOVELTY_WINDOW {
            return NOVELTY_WINDOW;
        }
        self.window.count_ones()
    }

    /// Reads bytes of the stream's text; a word may continue in the next call.
    pub fn read(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if is_word_byte(b) {
                self.word_hash = (self.word_hash ^ b as u64).wrapping_mul(0x100_0000_01b3);
                self.word_open = true;
                self.word_digits &= b.is_ascii_digit();
            } else if self.word_open {
                self.end_word();
            }
        }
    }

    /// Ends the word being read, if any (a line ended).
    pub fn end_word(&mut self) {
        if !self.word_open {
            return;
        }
        // Every number reads as the same word.
        let h = if self.word_digits {
            0x6e75_6d62
        } else {
            self.word_hash.wrapping_mul(0x9e37_79b9_7f4a_7c15)
        };
        self.word_hash = 0;
        self.word_open = false;
        self.word_digits = true;
        let new = self.remember(h);
        self.window = (self.window << 1) | new as u64;
        self.words = (self.words + 1).min(NOVELTY_WINDOW as u8);
    }

    /// Records word `h`; returns whether it was new (in neither generation).
    fn remember(&mut self, h: u64) -> bool {
        let bits = [(h >> 10) as usize % 1024, (h >> 42) as usize % 1024];
        let has = |g: usize| {
            let words = &self.seen[g * GEN_WORDS..(g + 1) * GEN_WORDS];
            bits.iter().all(|&b| words[b / 64] >> (b % 64) & 1 == 1)
        };
        let new = !has(0) && !has(1);
        if self.gen_words == GEN_SPAN {
            // The older generation is forgotten and takes the new words from now on.
            self.cur ^= 1;
            let g = self.cur as usize;
            self.seen[g * GEN_WORDS..(g + 1) * GEN_WORDS].fill(0);
            self.gen_words = 0;
        }
        let g = self.cur as usize;
        let words = &mut self.seen[g * GEN_WORDS..(g + 1) * GEN_WORDS];
        for b in bits {
            words[b / 64] |= 1 << (b % 64);
        }
        self.gen_words += 1;
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate_after(text: &str) -> u32 {
        let mut n = Novelty::new();
        n.read(text.as_bytes());
        n.end_word();
        n.new_words()
    }

    #[test]
    fn a_loop_says_nothing_new_a_declaration_list_does() {
        let looped = "if not ok: return False\n".repeat(40);
        assert_eq!(rate_after(&looped), 0);
        // A counter that steps is no news either.
        let ladder: String = (0..40)
            .map(|i| format!("if len(s) == {i}: return True\n"))
            .collect();
        assert_eq!(rate_after(&ladder), 0);
        // New names on every line.
        let decls: String = (0..40)
            .map(|i| format!("ALTER FUNCTION f{}_{}(int4) PARALLEL SAFE;\n", i * 7, i))
            .collect();
        assert!(rate_after(&decls) >= 8, "{}", rate_after(&decls));
        // Until a window of words was read, everything counts as new.
        assert_eq!(rate_after("a b c"), NOVELTY_WINDOW);
    }

    #[test]
    fn words_split_across_reads_are_one_word() {
        let mut a = Novelty::new();
        a.read(b"alpha beta gamma ".repeat(30).as_slice());
        let mut b = Novelty::new();
        for chunk in b"alpha beta gamma ".repeat(30).chunks(5) {
            b.read(chunk);
        }
        assert_eq!(a.window, b.window);
        // A long word is one word, and the same one each time.
        let long = format!("{} ", "x".repeat(100)).repeat(70);
        assert_eq!(rate_after(&long), 0);
    }
}
