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
//! word of one or two digits is read as one number, so a counter that steps (`== 39`,
//! `== 40`) is not news. A longer number is read as its value: a change log's pull request
//! (`pull/3192`) is news, as a new name is, unless the numbers count (`80911`, `80912`, …:
//! each stepped from the last as that one did from the one before).
//!
//! "Never seen" is approximate and bounded: two generations of an 896-bit blocked Bloom
//! filter (two bits of one 64-bit word a word) remember every word of the last 128 to 256, so
//! a loop whose copies hold up to 128 words is all "seen"; a word wrongly read as seen (about
//! one in eight while a generation fills) only makes a stream look a little less new. The
//! rate is taken over the last 64 words. O(1) per byte, no allocation.
//!
//! The same pass watches names that grow: a name that is an earlier one plus the same suffix
//! (`to_f`, `to_f_with_c`, `to_f_with_c_with_c`), again and again, is a growing repeat — each
//! copy the last one and a little more, which an exact-loop detector never sees. People grow
//! names too, but by a new suffix each time, once or twice (`binary_search`,
//! `binary_search_by`, `binary_search_by_key`; `ReadFileOptions`, `ReadFileOptionsWithBuffer`,
//! `ReadFileOptionsWithBufferEncoding`): a chain counts its growths, and apart the growths in
//! a row by one suffix.

/// 64-bit words of one generation of the filter.
const GEN_WORDS: usize = 14;
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
    /// The word being read: its hash so far, whether it has bytes, and the classes of its
    /// bytes (`DIGIT`, `LETTER`, `SYMBOL`, or-ed).
    word_hash: u64,
    word_open: bool,
    word_class: u8,
    /// Bytes of the word being read (saturating).
    word_len: u16,
    /// Chain heads (a bit each) the word being read begins with, and from bit `LETTERS` on
    /// those after whose end it has a byte that is not a digit.
    extends: u8,
    /// Per chain head the word extends, the low byte of the running FNV-1a hash of the bytes
    /// after the head (a product's low byte depends only on its factors' low bytes, so the
    /// byte is kept alone).
    suffix: [u8; HEADS],
    /// The value of the word being read while it is all digits (wrapping: only compared),
    /// and the low bits of the last number of `NUMBER_NEWS` digits or more.
    number: u32,
    last_number: u16,
    /// The step to that number from the one before (`NO_STEP` when it did not fit a byte).
    last_step: i8,
    /// Words read so far (wrapping), the clock of the chains.
    words_read: u16,
    /// Names that others grew from: the latest name of each chain, and how often it grew.
    heads: [Head; HEADS],
    /// The line being read is a heading (see [`titling`](Self::titling)).
    titling: bool,
    /// Words still to read in a section whose heading named something new.
    section: u8,
    /// The words with letters of the heading being read, hashed to a byte (0: none yet), and
    /// of the two headings before it.
    heading: u8,
    headings: [u8; 2],
}

/// Words after a heading that named something new during which the section it heads is news
/// (the next heading ends it sooner): two windows of the rate, about the length of a reference
/// entry, and no longer, so that a model that degenerates under a heading of its own is only
/// that much later halted as a near loop.
const SECTION_WORDS: u8 = 2 * NOVELTY_WINDOW as u8;
/// Chains of growing names followed at once.
const HEADS: usize = 2;
/// The bit of `Novelty::extends` from which the chains' bits say a byte after the chain's
/// name was not a digit.
const LETTERS: usize = 4;
/// A step between two numbers too long to be a counter's (see `Novelty::counts`).
const NO_STEP: i8 = i8::MIN;
/// Names shorter than this do not start or extend a chain (`i`, `x1`, `tmp`).
const NAME_MIN: u16 = 8;
/// Words read without the chain growing before it is forgotten.
const CHAIN_IDLE: u16 = 96;
/// Digits from which a number is read as its value (see [`Novelty::end_word`]).
const NUMBER_NEWS: u16 = 3;
/// Multiplier of the word hash (FNV-1a's prime).
const ROLL: u64 = 0x100_0000_01b3;
/// The 32-bit FNV-1a hash the suffixes are read with.
const FNV32: u32 = 0x811c_9dc5;
const FNV32_PRIME: u32 = 0x0100_0193;

/// Classes of bytes: `WORD`, the bytes words are made of (ASCII letters and digits, `_`,
/// and non-ASCII bytes), and among them ASCII digits; letters (ASCII ones, and the bytes of
/// characters of up to three bytes, the letters of every script); the lead bytes of
/// four-byte characters (emoji and other pictographs). `_` is a word byte of no class.
const DIGIT: u8 = 1;
const LETTER: u8 = 2;
const SYMBOL: u8 = 4;
const WORD: u8 = 8;
static BYTE_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = if c.is_ascii_digit() {
            WORD | DIGIT
        } else if c.is_ascii_alphabetic() || (c >= 0x80 && c < 0xf0) {
            WORD | LETTER
        } else if c >= 0xf0 {
            WORD | SYMBOL
        } else if c == b'_' {
            WORD
        } else {
            0
        };
        b += 1;
    }
    t
};

/// How a chain of names grew.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Growth {
    /// Times it grew.
    pub grown: u32,
    /// Times in a row, to the latest, it grew by one suffix.
    pub same: u32,
    /// Bytes the last growth added, and the length of the latest name.
    pub unit: u32,
    pub len: u32,
}

/// The latest name of a chain of names, each an earlier one plus a suffix.
#[derive(Clone, Copy, Debug, Default)]
struct Head {
    /// Its length and running hash (the low bits of the word hash before the final mix): a
    /// word whose running hash equals it at this length begins with it.
    len: u16,
    hash: u32,
    /// Times the chain grew, times in a row it grew by the suffix it grew by last, and
    /// `words_read` when it last grew (or started).
    grown: u8,
    same: u8,
    at: u16,
    /// Bytes the last growth added, and the low byte of their hash (with the length, enough
    /// to tell one suffix from another but for one pair in 256 of one length).
    unit: u16,
    suffix: u8,
    /// The low bits of the hash of the name it grew from last (its length is `len - unit`;
    /// 0 before it grew).
    from_hash: u16,
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
            word_class: 0,
            word_len: 0,
            extends: 0,
            suffix: [0; HEADS],
            number: 0,
            last_number: 0,
            last_step: NO_STEP,
            words_read: 0,
            heads: [Head::default(); HEADS],
            titling: false,
            section: 0,
            heading: 0,
            headings: [0; 2],
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

    /// Whether the words read next are a heading's: a new one among them makes the section it
    /// heads news (see [`in_new_section`](Self::in_new_section)).
    #[inline]
    pub fn titling(&mut self, heading: bool) {
        if heading && !self.titling {
            // A heading ends the section before it.
            self.section = 0;
            self.heading = 0;
        } else if !heading && self.titling {
            // A heading unlike the two before it names something new, though its name was
            // read as seen (the filter takes about one new word in eight for an old one).
            if self.heading != 0 && !self.headings.contains(&self.heading) {
                self.section = SECTION_WORDS;
            }
            self.headings = [self.heading, self.headings[0]];
        }
        self.titling = heading;
    }

    /// Within [`SECTION_WORDS`] of a heading that named something new: reference
    /// documentation describes each item of a family in the same words (`### \`\\texdimenmmup\``,
    /// then `### \`\\texdimenpcup\``, each "Produces a decimal … larger than the original
    /// one"), and the section's new name is what it says, however few its new words.
    #[inline]
    pub fn in_new_section(&self) -> bool {
        self.section > 0
    }

    /// Words read so far (wrapping at 2^16), to measure a stretch of text in words.
    #[inline]
    pub fn words_read(&self) -> u16 {
        self.words_read
    }

    /// New words among the last `k` read (at most the window's 64, and those read).
    #[inline]
    pub fn new_in_last(&self, k: u32) -> u32 {
        let k = k.min(NOVELTY_WINDOW).min(self.words as u32);
        if k == 0 {
            return 0;
        }
        (self.window & (u64::MAX >> (64 - k))).count_ones()
    }

    /// Reads bytes of the stream's text; a word may continue in the next call, unless
    /// `ends` says the text ends (a line) after them.
    pub fn read(&mut self, bytes: &[u8], ends: bool) {
        let mut i = 0;
        while i < bytes.len() {
            // The word bytes from `i` on, hashed in a loop of two operations a byte.
            let start = i;
            let mut hash = self.word_hash;
            let mut class = 0;
            while i < bytes.len() && BYTE_CLASS[bytes[i] as usize] & WORD != 0 {
                class |= BYTE_CLASS[bytes[i] as usize];
                hash = (hash ^ bytes[i] as u64).wrapping_mul(ROLL);
                i += 1;
            }
            if i > start {
                let part = &bytes[start..i];
                let (before, len_before) = (self.word_hash, self.word_len);
                let continuing = self.word_open;
                if class & !WORD == DIGIT {
                    // A number's value so far (a word of digits may come in several reads).
                    let so_far = if continuing { self.number } else { 0 };
                    self.number = (part.iter())
                        .filter(|b| b.is_ascii_digit())
                        .fold(so_far, |n, &b| {
                            n.wrapping_mul(10).wrapping_add((b - b'0') as u32)
                        });
                }
                self.word_open = true;
                self.word_hash = hash;
                self.word_len = self.word_len.saturating_add(part.len() as u16);
                self.word_class |= class & !WORD;
                if self.word_len >= NAME_MIN && self.heads.iter().any(|h| h.len > 0) {
                    if continuing {
                        // A word split across reads (lines are read in blocks): byte by byte.
                        self.track_bytes(part, before, len_before);
                    } else {
                        self.track_prefix(part);
                    }
                }
            }
            if i < bytes.len() || (ends && self.word_open) {
                // A byte (or the end of the line) that ends the word.
                self.end_word();
                i += 1;
            }
        }
    }

    /// Ends the word being read, if any (a line ended).
    pub fn end_word(&mut self) {
        if !self.word_open {
            return;
        }
        // A number of one or two digits reads as the same word (a counter, an index, a small
        // count); a longer one as its value, news unless it was seen or it counts: a change
        // log's pull requests are news, a counter of ports, years or codes is not.
        let long_number = self.word_class == DIGIT && self.word_len >= NUMBER_NEWS;
        let h = if long_number {
            number_hash(self.number)
        } else if self.word_class == DIGIT {
            0x6e75_6d62
        } else {
            self.word_hash.wrapping_mul(0x9e37_79b9_7f4a_7c15)
        };
        let seen = !self.is_new(h);
        // (A number seen still moves the count on: see `counts`.)
        let counts = long_number && self.counts(self.number, seen);
        let new = !seen && !counts;
        if self.titling {
            if self.word_class & LETTER != 0 {
                self.heading = (self.heading.rotate_left(3) ^ (h >> 56) as u8).max(1);
            }
            if new {
                self.section = SECTION_WORDS;
            }
        } else {
            self.section = self.section.saturating_sub(1);
        }
        self.grow(new);
        self.word_hash = 0;
        self.word_open = false;
        self.word_class = 0;
        self.word_len = 0;
        self.extends = 0;
        self.words_read = self.words_read.wrapping_add(1);
        self.remember(h);
        self.window = (self.window << 1) | new as u64;
        self.words = (self.words + 1).min(NOVELTY_WINDOW as u8);
    }

    /// Number `n` (of `NUMBER_NEWS` digits or more) stepped from the last such number as
    /// that one stepped from the number before: it counts. A change log's pull requests step
    /// unevenly; a counter of ports, years or codes by one step, of 127 at most. A number
    /// `seen` among the recent words is no step (`5000` on every line between the rungs),
    /// unless it is the count's next (the filter takes about one new word in eight for one
    /// seen).
    #[cold]
    fn counts(&mut self, n: u32, seen: bool) -> bool {
        let step =
            i8::try_from((n as u16).wrapping_sub(self.last_number) as i16).unwrap_or(NO_STEP);
        let again = step != NO_STEP && step == self.last_step;
        if !seen || again {
            (self.last_number, self.last_step) = (n as u16, step);
        }
        again
    }

    /// The longest-growing chain of names.
    pub fn growth(&self) -> Growth {
        let h = self
            .heads
            .iter()
            .max_by_key(|h| (h.grown, h.same))
            .copied()
            .unwrap_or_default();
        Growth {
            grown: h.grown as u32,
            same: h.same as u32,
            unit: h.unit as u32,
            len: h.len as u32,
        }
    }

    /// Which chain heads the word that begins with `part` begins with, and after which of
    /// them it has a byte that is not a digit. A rehash of a prefix per head, for long words
    /// only.
    fn track_prefix(&mut self, part: &[u8]) {
        for (k, h) in self.heads.iter().enumerate() {
            let n = h.len as usize;
            if n == 0 || n > part.len() {
                continue;
            }
            let prefix = part[..n]
                .iter()
                .fold(0u64, |a, &b| (a ^ b as u64).wrapping_mul(ROLL));
            if prefix as u32 == h.hash {
                self.extends |= 1 << k;
                if part[n..].iter().any(|b| !b.is_ascii_digit()) {
                    self.extends |= 1 << (LETTERS + k);
                }
                self.suffix[k] = part[n..]
                    .iter()
                    .fold(FNV32 as u8, |a, &b| (a ^ b).wrapping_mul(FNV32_PRIME as u8));
            }
        }
    }

    /// [`track_prefix`](Self::track_prefix) for the next bytes `part` of a word split across
    /// reads, whose hash and length before them were `hash` and `len`.
    fn track_bytes(&mut self, part: &[u8], mut hash: u64, mut len: u16) {
        for &b in part {
            hash = (hash ^ b as u64).wrapping_mul(ROLL);
            len = len.saturating_add(1);
            for (k, h) in self.heads.iter().enumerate() {
                if h.len == len && h.hash == hash as u32 {
                    self.extends |= 1 << k;
                    self.suffix[k] = FNV32 as u8;
                } else if self.extends & (1 << k) != 0 && h.len < len {
                    if !b.is_ascii_digit() {
                        self.extends |= 1 << (LETTERS + k);
                    }
                    self.suffix[k] = (self.suffix[k] ^ b).wrapping_mul(FNV32_PRIME as u8);
                }
            }
        }
    }

    /// Ends the word for the chains of growing names: a name that begins with a chain's
    /// latest and is at least two bytes longer, not by digits only (a counter), extends it;
    /// one that extends none and is `new` to the stream starts a chain in place of the idlest
    /// that has not grown (or of the idlest of all when every chain has): a chain that grew is
    /// evidence under way, and the other long words of its copies, `m_ptr_max_size`,
    /// `unsigned`, come back in every copy and must not push it out. Names shorter than
    /// `NAME_MIN` are left alone.
    fn grow(&mut self, new: bool) {
        let len = self.word_len;
        // A name has a letter, and no emoji (`🇦🇦` grown by `🇦` is test data, not a name).
        if len < NAME_MIN || self.word_class & (LETTER | SYMBOL) != LETTER {
            return;
        }
        let now = self.words_read;
        for h in &mut self.heads {
            if now.wrapping_sub(h.at) > CHAIN_IDLE {
                *h = Head::default();
            }
        }
        let hash = self.word_hash as u32;
        let (extends, suffix) = (self.extends, self.extends >> LETTERS);
        for (k, h) in self.heads.iter_mut().enumerate() {
            let from = h.grown > 0 && h.len - h.unit == len && h.from_hash == hash as u16;
            if (h.len == len && h.hash == hash) || from {
                // The chain's latest name again, or the one it grew from (the line that grows
                // a name often names its older form: `x_scaled_scaled = scale(x_scaled)`):
                // neither growth nor a new chain.
                h.at = now;
                return;
            }
            if extends & suffix & (1 << k) != 0 && len >= h.len + 2 {
                let (unit, sfx) = (len - h.len, self.suffix[k]);
                let again = h.grown > 0 && unit == h.unit && sfx == h.suffix;
                h.same = if again { h.same.saturating_add(1) } else { 1 };
                h.grown = h.grown.saturating_add(1);
                h.from_hash = h.hash as u16;
                (h.unit, h.suffix, h.len, h.hash, h.at) = (unit, sfx, len, hash, now);
                return;
            }
        }
        // A name that came back before (`unsigned`, `max_size` in every copy) is an old one,
        // not one being made: it starts no chain.
        if !new {
            return;
        }
        let idlest = self
            .heads
            .iter_mut()
            .min_by_key(|h| (h.len != 0, h.at.wrapping_sub(now)))
            .expect("heads");
        *idlest = Head {
            len,
            hash,
            at: now,
            ..Head::default()
        };
    }

    /// Word `h` is in neither generation of the filter: new to the stream.
    fn is_new(&self, h: u64) -> bool {
        let (w, mask) = slot(h);
        let seen = |g: usize| self.seen[g * GEN_WORDS + w] & mask == mask;
        !seen(0) && !seen(1)
    }

    /// Records word `h`.
    fn remember(&mut self, h: u64) {
        let (w, mask) = slot(h);
        if self.gen_words == GEN_SPAN {
            // The older generation is forgotten and takes the new words from now on.
            self.cur ^= 1;
            let g = self.cur as usize;
            self.seen[g * GEN_WORDS..(g + 1) * GEN_WORDS].fill(0);
            self.gen_words = 0;
        }
        self.seen[self.cur as usize * GEN_WORDS + w] |= mask;
        self.gen_words += 1;
    }
}

/// The word hash of a number's value (see [`Novelty::end_word`]).
fn number_hash(n: u32) -> u64 {
    // SplitMix64's finaliser: neighbouring values land far apart in the filter.
    let mut z = (n as u64 ^ 0x6e75_6d62_0000_0000).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Where word `h` lies in a generation of the filter, a blocked one: the 64-bit word that
/// holds its two bits, and those bits.
fn slot(h: u64) -> (usize, u64) {
    let w = (((h >> 32) * GEN_WORDS as u64) >> 32) as usize;
    (w, (1u64 << (h & 63)) | (1u64 << ((h >> 6) & 63)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate_after(text: &str) -> u32 {
        let mut n = Novelty::new();
        n.read(text.as_bytes(), true);
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
    fn a_long_number_is_news_unless_it_counts() {
        // Release notes whose entries differ only in their pull requests' numbers.
        let notes: String = [
            3184, 3190, 3194, 3192, 3196, 3151, 3198, 3205, 3213, 3224, 3233,
        ]
        .iter()
        .cycle()
        .take(40)
        .enumerate()
        .map(|(i, n)| {
            format!(
                "* Add a build by @dev in https://github.com/o/r/pull/{}\n",
                n + 100 * (i as u32 / 11)
            )
        })
        .collect();
        assert!(rate_after(&notes) >= 4, "{}", rate_after(&notes));
        // Ports, years or status codes counted up or down are no news, nor is a number again.
        for step in [1i32, -1] {
            let ladder: String = (0..40)
                .map(|i| format!("    - port: {}\n", 8080 + step * i))
                .collect();
            assert_eq!(rate_after(&ladder), 0, "step {step}");
        }
        // Split across reads, digit by digit, as a tokenizer may feed it.
        let mut n = Novelty::new();
        for i in 0..40 {
            for part in ["year", " = ", "2", "0", &format!("{}", 30 + i), ";\n"] {
                n.read(part.as_bytes(), false);
            }
        }
        assert_eq!(n.new_words(), 0);
    }

    #[test]
    fn names_that_grow_are_told_from_names_that_differ() {
        let grown = |text: &str| {
            let mut n = Novelty::new();
            n.read(text.as_bytes(), true);
            n.end_word();
            let g = n.growth();
            (g.grown, g.same)
        };
        let mut text = String::new();
        let mut name = String::from("celsius_to_fahrenheit");
        for _ in 0..5 {
            text += &format!("def {name}(c):\n    return {name}(c)\n\n");
            name += "_with_c";
        }
        assert_eq!(grown(&text), (4, 4));
        assert_eq!(
            grown("hero_env hero_env_env hero_env_env_env x hero_env_env_env_env"),
            (3, 3)
        );
        // A new suffix each time: growth, but not by one suffix again.
        assert_eq!(
            grown("binary_search binary_search_by binary_search_by_key"),
            (2, 1)
        );
        assert_eq!(
            grown("ReadFileOptions ReadFileOptionsWithBuffer ReadFileOptionsWithBufferEncoding"),
            (2, 1)
        );
        // Split across reads, the suffix is the same.
        let mut n = Novelty::new();
        for part in [
            "to_fahrenheit to_fahren",
            "heit_with_c to_fahrenheit_with",
            "_c_with_c ",
        ] {
            n.read(part.as_bytes(), false);
        }
        assert_eq!((n.growth().grown, n.growth().same), (2, 2));
        // Siblings and reuse are not growth; nor are short names or counters.
        let siblings = "ltree_lt ltree_le ltree_eq ltree_ge ltree_gt ltree_ne ltree_cmp";
        assert_eq!(grown(siblings), (0, 0));
        assert_eq!(grown("handler1 handler12 handler123 handler1234"), (0, 0));
        assert_eq!(grown("test_parse test_parse test_parse_empty"), (1, 1));
    }

    #[test]
    fn words_split_across_reads_are_one_word() {
        let mut a = Novelty::new();
        a.read(b"alpha beta gamma ".repeat(30).as_slice(), false);
        let mut b = Novelty::new();
        for chunk in b"alpha beta gamma ".repeat(30).chunks(5) {
            b.read(chunk, false);
        }
        assert_eq!(a.window, b.window);
        // A long word is one word, and the same one each time.
        let long = format!("{} ", "x".repeat(100)).repeat(70);
        assert_eq!(rate_after(&long), 0);
    }
}
