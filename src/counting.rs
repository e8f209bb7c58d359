//! Counting: numbers that step by the same amount again and again with the same text between
//! them — `1, 2, 3, …, 144`, `age = 19` / `age = 20` / …, `if n == 12: return n // 11` /
//! `if n == 13: return n // 12` / ….
//!
//! A model that runs out of things to say often starts counting: it writes the same short
//! text once per value of a counter, to the token limit. Exact-loop detectors miss it (each
//! copy holds a new number) and so does the line ladder when the rungs are not lines of
//! their own or are too short to count. People write counts out too, but short ones (the
//! years of a copyright line, the 32 registers of a machine, a seed of 16 bytes) — and with
//! something new around them.
//!
//! The reader takes every number of the text with the text since the number before (its
//! separator, up to [`MAX_SEPARATOR`] bytes). For a lag `L` of 1 to [`LAGS`] numbers, a
//! number continues a run when it steps from the number `L` back by the amount that one
//! stepped from the number `2L` back, with the same separator as the number `L` back, and
//! some number among the last `L` moved (a block of `L` numbers written again with one or
//! more counters in it; `0, 0, 0` is a plain loop, not a count). A run of `n` numbers is
//! `n / L + 2` copies of the block: the two it first stepped from, and one per `L` numbers.
//! O(1) per byte, no allocation; a block of text without digits and far from the last number
//! costs a scan for digits.

/// Numbers in one rung at most: blocks with up to this many numbers, counters among them.
pub(crate) const LAGS: usize = 4;
/// Longest separator, in bytes, between two numbers of a count.
pub(crate) const MAX_SEPARATOR: u32 = 48;
/// Numbers remembered: enough for the number `2 * LAGS` back.
const HELD: usize = 2 * LAGS;
/// The separator hash of a separator too long to be part of a count.
const LONG: u32 = u32::MAX;
/// The hash of an empty separator (FNV-1a's offset basis).
const SEPARATOR_SEED: u32 = 0x811c_9dc5;

/// The longest count in a text, as it stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Count {
    /// Copies of the block of numbers and text, the counter stepping from each to the next.
    pub rungs: u32,
    /// Byte where the first copy begins.
    pub onset: u64,
    /// Byte after the last number of the count.
    pub end: u64,
}

/// Numbers of one text stream, read byte by byte. Compact (a guard's memory is fixed): values
/// saturate at `u32::MAX`, byte offsets are kept as their low 32 bits and read back against
/// the position, which a count never lags by 4 GiB.
#[derive(Clone, Debug)]
pub(crate) struct Counting {
    /// Bytes read.
    pos: u64,
    /// The number being read: its value so far and its first byte (low 32 bits).
    value: u32,
    start: u32,
    /// The separator being read: its hash and its length in bytes (saturating).
    separator: u32,
    separator_len: u8,
    /// Digits of the number being read (saturating; 0: none open).
    digits: u8,
    /// Numbers read (saturating at `2 * HELD`) and the ring index of the next.
    read: u8,
    next: u8,
    /// The last `HELD` numbers: values, the hashes of the separators before them, their
    /// first bytes (low 32 bits).
    values: [u32; HELD],
    separators: [u32; HELD],
    starts: [u32; HELD],
    /// Per lag (index `L - 1`): numbers in the current run (saturating), numbers since one
    /// moved from the number `L` before it, and the first byte of the run's first copy.
    run: [u16; LAGS],
    still: [u8; LAGS],
    run_onset: [u32; LAGS],
    /// The count of the newest number read: copies, first byte, end byte (low 32 bits).
    rungs: u16,
    onset: u32,
    end: u32,
}

impl Counting {
    pub fn new() -> Counting {
        Counting {
            pos: 0,
            value: 0,
            start: 0,
            separator: SEPARATOR_SEED,
            separator_len: 0,
            digits: 0,
            read: 0,
            next: 0,
            values: [0; HELD],
            separators: [0; HELD],
            starts: [0; HELD],
            run: [0; LAGS],
            still: [0; LAGS],
            run_onset: [0; LAGS],
            rungs: 0,
            onset: 0,
            end: 0,
        }
    }

    pub fn reset(&mut self) {
        *self = Counting::new();
    }

    /// Forgets the runs (after a breaker), keeping the position: what follows starts afresh.
    pub fn forget(&mut self) {
        let pos = self.pos;
        *self = Counting::new();
        self.pos = pos;
        self.separator_len = u8::MAX;
    }

    /// Bytes read.
    #[inline]
    pub fn pos(&self) -> u64 {
        self.pos
    }

    /// The byte whose low 32 bits are `low`, at or before the position.
    fn byte(&self, low: u32) -> u64 {
        self.pos - (self.pos as u32).wrapping_sub(low) as u64
    }

    /// The count that the last number read belongs to (zero rungs when none).
    #[inline]
    pub fn count(&self) -> Count {
        if self.rungs == 0 {
            return Count::default();
        }
        Count {
            rungs: self.rungs as u32,
            onset: self.byte(self.onset),
            end: self.byte(self.end),
        }
    }

    /// Reads the next bytes of the text.
    pub fn read(&mut self, bytes: &[u8]) {
        // No digit ahead: only the separator grows, and is hashed only while it may still
        // be part of a count.
        if self.digits == 0 && !has_digit(bytes) {
            let room = (MAX_SEPARATOR + 1).saturating_sub(self.separator_len as u32) as usize;
            for &b in &bytes[..room.min(bytes.len())] {
                self.separator = (self.separator ^ b as u32).wrapping_mul(0x0100_0193);
            }
            self.separator_len = (self.separator_len as usize + bytes.len()).min(255) as u8;
            self.pos += bytes.len() as u64;
            return;
        }
        for &b in bytes {
            if b.is_ascii_digit() {
                if self.digits == 0 {
                    self.start = self.pos as u32;
                    self.value = 0;
                }
                self.value = self
                    .value
                    .saturating_mul(10)
                    .saturating_add((b - b'0') as u32);
                self.digits = self.digits.saturating_add(1);
            } else {
                if self.digits > 0 {
                    self.end_number();
                }
                self.separator = (self.separator ^ b as u32).wrapping_mul(0x0100_0193);
                self.separator_len = self.separator_len.saturating_add(1);
            }
            self.pos += 1;
        }
    }

    /// Closes the number being read and updates the runs.
    fn end_number(&mut self) {
        let (value, start) = (self.value, self.start);
        let separator = if self.separator_len as u32 <= MAX_SEPARATOR {
            self.separator
        } else {
            LONG
        };
        self.digits = 0;
        self.separator = SEPARATOR_SEED;
        self.separator_len = 0;
        let read = self.read as usize;
        let at = |k: usize| (self.next as usize + HELD - k) % HELD;
        let mut best = (0u16, 0u32);
        for lag in 1..=LAGS {
            let slot = lag - 1;
            if read < 2 * lag {
                continue;
            }
            let (a, b) = (at(lag), at(2 * lag));
            if value != self.values[a] {
                self.still[slot] = 0;
            } else {
                self.still[slot] = self.still[slot].saturating_add(1);
            }
            let step = value as i64 - self.values[a] as i64;
            let same = separator != LONG
                && separator == self.separators[a]
                && step == self.values[a] as i64 - self.values[b] as i64;
            if !same || self.still[slot] as usize >= lag {
                self.run[slot] = 0;
                continue;
            }
            if self.run[slot] == 0 {
                // The first copy of the block is the one that holds the number 2L back.
                self.run_onset[slot] = self.starts[b];
            }
            self.run[slot] = self.run[slot].saturating_add(1);
            let rungs = self.run[slot] / lag as u16 + 2;
            if rungs > best.0 {
                best = (rungs, self.run_onset[slot]);
            }
        }
        let i = self.next as usize;
        (self.values[i], self.separators[i], self.starts[i]) = (value, separator, start);
        self.next = ((i + 1) % HELD) as u8;
        self.read = self.read.saturating_add(1).min(2 * HELD as u8);
        (self.rungs, self.onset, self.end) = (best.0, best.1, self.pos as u32);
    }
}

/// Whether any byte is an ASCII digit, eight bytes at a time.
#[inline]
fn has_digit(bytes: &[u8]) -> bool {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    let mut chunks = bytes.chunks_exact(8);
    let mut any = 0u64;
    for chunk in &mut chunks {
        let x = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        // A byte is a digit when, with '0' taken away, it is below 10 (and was below 0x80).
        let a = x ^ ZEROS;
        any |= !((a | HIGH) - 0x0a0a_0a0a_0a0a_0a0a) & !a & HIGH;
    }
    any != 0 || chunks.remainder().iter().any(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count_of(text: &str) -> Count {
        let mut c = Counting::new();
        c.read(text.as_bytes());
        c.read(b" ");
        c.count()
    }

    #[test]
    fn a_list_that_counts() {
        let text: String = (1..=40).map(|n| format!("{n}, ")).collect();
        let c = count_of(&text);
        assert_eq!(c.rungs, 40, "{c:?}");
        assert_eq!(c.onset, 0, "{c:?}");
    }

    #[test]
    fn lines_that_count() {
        let text: String = (19..=60).map(|n| format!("age = {n}\n")).collect();
        assert!(count_of(&text).rungs >= 39);
    }

    #[test]
    fn a_block_with_two_counters() {
        let text: String = (2..=30)
            .map(|n| format!("    if n == {n}:\n        return n // {}\n", n - 1))
            .collect();
        let c = count_of(&text);
        assert!(c.rungs >= 25, "{c:?}");
    }

    #[test]
    fn a_constant_column_beside_a_counter() {
        let text: String = (1..=30).map(|n| format!("({n}, 1000, 7), ")).collect();
        assert!(count_of(&text).rungs >= 26);
    }

    #[test]
    fn zeros_and_values_are_not_counts() {
        let zeros: String = (0..60).map(|_| "0, ").collect();
        assert_eq!(count_of(&zeros).rungs, 0);
        let primes = "2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67";
        assert!(count_of(primes).rungs <= 1);
        let table = "0x3a, 0x91, 0x07, 0xc4, 0x55, 0x2e, 0x8b, 0x10, 0xfe, 0x63, 0x79, 0x0d";
        assert!(count_of(table).rungs <= 1);
    }

    #[test]
    fn a_changed_separator_ends_the_count() {
        let mut text: String = (1..=10).map(|n| format!("{n}, ")).collect();
        text += "and then ";
        text += &(11..=14).map(|n| format!("{n}; ")).collect::<String>();
        assert_eq!(count_of(&text).rungs, 4, "only 11; 12; 13; 14; count");
    }

    #[test]
    fn far_apart_numbers_are_no_count() {
        let filler = "x".repeat(MAX_SEPARATOR as usize + 1);
        assert!(std::mem::size_of::<Counting>() <= 160);
        let text: String = (1..=30).map(|n| format!("{n}{filler}")).collect();
        assert_eq!(count_of(&text).rungs, 0);
    }

    #[test]
    fn digits_are_found_anywhere() {
        for len in 0..40 {
            for at in 0..len {
                for d in [b'0', b'5', b'9'] {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = d;
                    assert!(has_digit(&bytes), "{len} {at}");
                }
            }
            // Bytes around the digits, and high bytes, are not digits.
            let others: Vec<u8> = (0..len)
                .map(|i| [b'/', b':', 0xb0, 0xb9, b' '][i % 5])
                .collect();
            assert!(!has_digit(&others), "{others:?}");
        }
    }

    #[test]
    fn chunking_does_not_matter() {
        let text: String = (1..=50).map(|n| format!("item {n}; ")).collect();
        let whole = count_of(&text);
        let mut c = Counting::new();
        for chunk in text.as_bytes().chunks(7) {
            c.read(chunk);
        }
        c.read(b" ");
        assert_eq!(c.count(), whole);
    }
}
