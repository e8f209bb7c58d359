//! Findings on whole lines: blocks of lines repeated with their numbers compared (counter
//! ladders and counts), templates re-filled sibling after sibling, blocks that nest
//! themselves, and names that grow.

use super::nesting::{nest_bounds, Nest};
use super::{
    patient, trim_ascii, Numbers, TextState, INDEXED_LADDER_COPIES, MARKUP_LADDER_COPIES,
    NAMED_LADDER_COPIES, NOTHING_NEW, TEXT_RING,
};
use crate::engine::Finding;
use crate::template::Run;
use crate::verdict::{Action, LoopKind};

/// Times a chain of names grows (each an earlier one plus a suffix) before a warning, and
/// before a halt: three names that grow can be a person's naming (`parse`, `parse_int`,
/// `parse_int_radix`), each growth by a new suffix; a name grown twice in a row by the same
/// suffix (`to_f_with_c_with_c`), or three times whatever the suffixes, warns; five names
/// are a loop, and so are four grown three times in a row by one suffix (`is_empty`,
/// `is_empty_value`, `…_value_value`, `…_value_value_value`: a chain can start late, at a
/// name of `NAME_MIN` bytes, and people add a new suffix each time).
const GROWTH_WARN: u32 = 3;
const GROWTH_SAME_WARN: u32 = 2;
const GROWTH_HALT: u32 = 4;
const GROWTH_SAME_HALT: u32 = 3;
/// Copies of a block with a counter in it (`age = 19`, `age = 20`, …) that warn and that halt,
/// while the copies say nothing new. People write out short counts (a 16-byte seed, the years
/// of a copyright line, the versions a parser supports) and name something new in longer ones
/// (a machine's 32 registers); models run theirs to the token limit. The halt is the line
/// ladder's 24; the warning comes only past the length of counts people write.
const COUNT_WARN: u32 = 20;
const COUNT_HALT: u32 = 24;
/// Copies of a repeated block of lines whose numbers are compared: the newest `SAME_COPIES`
/// tell lines written again (numbers the same) from a count; a ladder must step the same way
/// over every copy held, up to `NUMBER_COPIES` (as many as the text ring holds of a ladder of
/// one short line). A list of links to pull requests whose numbers rose by one for the last
/// six lines but by 2, 3 or 20 before (tokio's changelog) is a list, not a count; lines that
/// settled on one number after a few others (`sleep(1)  # 1000ms`, then `# 100ms` again and
/// again) are lines written again from where they settled.
const SAME_COPIES: usize = 6;
const NUMBER_COPIES: usize = 32;

/// Numbers read from one copy of a repeated block: at most this many. A ladder's numbers must
/// all step alike, and the numbers past the eighth are where unrolled code keeps what
/// rotates (two rounds of SHA-512 for POWER name the eight working registers, rotated, from
/// the tenth number of the block on).
const COPY_NUMBERS: usize = 16;

/// How the numbers of a repeated block change over its copies (see
/// `TextState::ladder_numbers`).
#[derive(Clone, Copy, Debug)]
pub(super) struct Ladder {
    pub numbers: Numbers,
    /// With a ladder, the copies it covers from the newest (`u32::MAX`: every copy held steps
    /// alike, and the ladder may go back further); 0 otherwise.
    pub regular: u32,
    /// With a ladder whose numbers are one count through its copies, the numbers of a copy
    /// (its rungs); 0 otherwise.
    pub counts: u32,
    /// With a ladder, a number that steps is part of a name (`opACC7`, `KEY_F7`, `$t2` for
    /// register 10: see `CopyNumbers::glued`): lines declaring numbered names, the other
    /// numbers their values, not lines counting. With numbers that vary otherwise, every
    /// number that changed is part of a name: a list of names (part numbers, models), each
    /// line naming its own thing.
    pub in_names: bool,
}

impl Ladder {
    /// Numbers that are no ladder.
    fn not(numbers: Numbers) -> Ladder {
        Ladder {
            numbers,
            regular: 0,
            counts: 0,
            in_names: false,
        }
    }
}

/// The numbers of one copy of a repeated block, in order (see `TextState::numbers`).
#[derive(Clone, Copy, Default)]
struct CopyNumbers {
    values: [u64; COPY_NUMBERS],
    /// Numbers in the copy (all of them, though only the first `COPY_NUMBERS` are held).
    count: usize,
    /// The numbers (bit i for number i) that are parts of a version or an address: two dots
    /// or more (`2.8.23`, `10.0.0.1`).
    versions: u16,
    /// The numbers that belong to a line's first group, numbers joined by one `.`, `-`, `:`
    /// or `/` (`2012-06-01`, `433469`), where a line keeps its key if it has one; and those
    /// that open a line.
    keys: u16,
    key_starts: u16,
    /// The numbers that are part of a name: right after a letter or `_` (`opACC7`), or after
    /// a `-` that follows a letter (`cs-mode-m680x-6301`, a kebab-case name).
    glued: u16,
}

impl TextState {
    /// A run of siblings as evidence: a warning at `template_warn` copies, a halt once the
    /// copies exceed the host's `template_budget`. Its onset is the run's first line (the
    /// line being ended is the line engine's next).
    pub(super) fn template_finding(&self, run: Run) -> Finding {
        let copies = run.copies();
        let (warn, budget) = (self.template_warn as u32, self.template_budget as u32);
        // Markup re-filled (an XML database's entries, a table's rows) is how documents are
        // written: it has no loop statement to write instead. It waits for the budget.
        let level = if budget > 0 && copies > budget {
            Action::Halt
        } else if warn > 0 && copies >= warn && !self.block_of_markup(run.period) {
            Action::Warn
        } else {
            return Finding::default();
        };
        Finding {
            level,
            kind: LoopKind::TemplateRunaway,
            period: run.period,
            span: run.lines,
            onset: (self.lines.pos() + 1).saturating_sub(run.lines as u64),
            confidence: 1.0 - 0.5f32.powi(copies.min(30) as i32 / 2),
        }
    }

    /// How the numbers change over the copies of the block of `period` lines that the line
    /// engine just found repeating, as many as are held (at least three, at most
    /// `NUMBER_COPIES`); `end` is the byte after the last line. The steps between the newest
    /// `SAME_COPIES` must agree for a ladder, and those before them as far back as the
    /// ladder goes. Reads the held bytes: a pass over the copies, once per line finding.
    pub(super) fn numbers(&self, period: u32, copies_found: u32, end: u64) -> Numbers {
        self.ladder_numbers(period, copies_found, end).numbers
    }

    /// [`numbers`](Self::numbers), and with a ladder the copies it covers (a ladder counts
    /// from its last irregular step: a divisor list that skips from 25 to 31 and then steps by
    /// two, as the same lines begun at 31 would) and whether its numbers are one count through
    /// the copies (see [`Ladder`]).
    pub(super) fn ladder_numbers(&self, period: u32, copies_found: u32, end: u64) -> Ladder {
        let now = self.lines.pos();
        let p = period as u64;
        let wanted = (copies_found as usize).clamp(3, NUMBER_COPIES);
        if p == 0 || now < wanted as u64 * p {
            return Ladder::not(Numbers::Unknown);
        }
        // Copy k (0 the newest) spans lines now-(k+1)p .. now-kp, read with keys or not.
        let copy_at = |k: usize, keys: bool| {
            let kk = k as u64;
            let from = self.line_byte_before(now.checked_sub((kk + 1) * p)?, end)?;
            let to = if k == 0 {
                end
            } else {
                self.line_byte_before(now - kk * p, end)?
            };
            if to < from || end - from > TEXT_RING as u64 {
                return None;
            }
            Some(if keys {
                self.copy_numbers::<true>(from, to)
            } else {
                self.copy_numbers::<false>(from, to)
            })
        };
        // The newest copy ends with its last line, but the lines the line engine skips that
        // follow it (`}`, `if n % 31 == 0:`: too few letters) are not there yet: a newest copy
        // with fewer numbers than the one before is left out, and the copies before it read.
        let (first, second) = (copy_at(0, true), copy_at(1, true));
        let skip = matches!((first, second), (Some(a), Some(b)) if a.count < b.count) as usize;
        let mut read = [CopyNumbers::default(); NUMBER_COPIES];
        let mut held = 0;
        for (j, slot) in read.iter_mut().enumerate().take(wanted - skip) {
            // Keys are looked for among the newest copies only (see `keyed` below).
            let copy = match j + skip {
                0 => first,
                1 => second,
                k => copy_at(k, j < SAME_COPIES),
            };
            let Some(copy) = copy else {
                break;
            };
            *slot = copy;
            held += 1;
        }
        let read = &read[..held];
        if held < 3 {
            // Two copies of a long block are all the text ring holds: their numbers tell a
            // ladder only when they are one count through both.
            let n = read.first().map_or(0, |c| c.count.min(COPY_NUMBERS));
            let counts = if held == 2 && read[1].count == read[0].count {
                counts_through(read, n)
            } else {
                0
            };
            return if counts > 0 {
                Ladder {
                    numbers: Numbers::Ladder,
                    regular: u32::MAX,
                    counts,
                    in_names: false,
                }
            } else {
                Ladder::not(Numbers::Unknown)
            };
        }
        let recent = held.min(SAME_COPIES);
        let newest = &read[0];
        if read[..recent].iter().any(|c| c.count != newest.count) {
            return Ladder::not(Numbers::Varied);
        }
        let n = newest.count.min(COPY_NUMBERS);
        let step = |k: usize, i: usize| step(read, k, i);
        let same_step =
            |upto: usize| (1..upto - 1).all(|k| (0..n).all(|i| step(k, i) == step(0, i)));
        if !same_step(recent) {
            if keyed(&read[..recent]) {
                Ladder::not(Numbers::Records)
            } else {
                // Every number that changed is part of a name: each copy names its own thing.
                let changed = |i: usize| (0..recent - 1).any(|k| step(k, i) != 0);
                Ladder {
                    in_names: (0..n)
                        .filter(|&i| changed(i))
                        .all(|i| newest.glued & 1 << i != 0),
                    ..Ladder::not(Numbers::Varied)
                }
            }
        } else if (0..n).all(|i| step(0, i) == 0) {
            Ladder::not(Numbers::Same)
        } else if (0..n).any(|i| step(0, i) != 0 && newest.is_version(i)) {
            // A list of versions or addresses steps by design (release notes, `redis 2.8.22`,
            // `2.8.23`): its entries name different things, as a table's rows do.
            Ladder::not(Numbers::Records)
        } else {
            // Copies 0..regular step alike: the ladder since its last irregular step.
            let mut regular = recent;
            while regular < held
                && read[regular].count == newest.count
                && (0..n).all(|i| step(regular - 1, i) == step(0, i))
            {
                regular += 1;
            }
            // All held step alike: the ladder may go back further than the copies held. A
            // newest copy left out is one of the ladder's.
            let copies = if regular == held {
                u32::MAX
            } else {
                (regular + skip) as u32
            };
            // (Some number steps: the numbers are no ladder otherwise.)
            Ladder {
                numbers: Numbers::Ladder,
                regular: copies,
                counts: counts_through(read, n),
                in_names: (0..n).any(|i| step(0, i) != 0 && newest.glued & 1 << i != 0),
            }
        }
    }

    /// The newest two copies of the repeated block of `period` lines (`end` the byte after the
    /// last) hold an index comment: a comment that says only a number, with at most a few
    /// bytes after it on its line (`#  65 A`, `// 12`), or a `/* 58 */` before the code. People
    /// number a table's entries so that a reader can look one up (a key map's 256 bytes, a
    /// signal table); a table so laid out is written on purpose, as long as its domain.
    pub(super) fn indexed(&self, period: u32, end: u64) -> bool {
        let now = self.lines.pos();
        now.checked_sub(2 * period as u64)
            .and_then(|line| self.line_byte_before(line, end))
            .is_some_and(|from| self.index_comment_in(from, end))
    }

    /// A line of the held bytes `from..end` (the line `from` falls in read whole) is an index
    /// comment (see [`indexed`](Self::indexed)), and the entry it numbers is there too (another
    /// line that says something, or code after the comment on its line): comments that say
    /// only numbers, one after another (`# 2016`, `# 2017`, …), number nothing, and are a
    /// count like any other.
    fn index_comment_in(&self, from: u64, end: u64) -> bool {
        // The ring holds the bytes being scanned (up to `end`) and those before them.
        if end < from || end - from > TEXT_RING as u64 {
            return false;
        }
        // Back to the start of the line `from` is in, as far as the bytes are held.
        let held = end.saturating_sub(TEXT_RING as u64);
        let mut start = from;
        while start > held && self.ring[(start - 1) as usize % TEXT_RING] != b'\n' {
            start -= 1;
        }
        let mut line = [0u8; 64];
        let mut len = 0;
        let (mut index, mut entry) = (false, false);
        for at in start..=end {
            let b = if at < end {
                self.ring[at as usize % TEXT_RING]
            } else {
                b'\n'
            };
            if b != b'\n' {
                if len < line.len() {
                    line[len] = b;
                }
                len += 1;
                continue;
            }
            let text = &line[..len.min(line.len())];
            if index_comment(text) {
                index = true;
                // `/* 58 */ {…}`: the entry after the comment, on its line.
                entry |= memchr::memmem::find(text, b"*/")
                    .is_some_and(|at| !trim_ascii(&text[at + 2..]).is_empty());
            } else if !trim_ascii(text).is_empty() {
                entry = true;
            }
            if index && entry {
                return true;
            }
            len = 0;
        }
        false
    }

    /// The numbers of the held bytes `from..to` (one copy of a repeated block), and with `KEYS`
    /// where its lines keep their keys.
    fn copy_numbers<const KEYS: bool>(&self, from: u64, to: u64) -> CopyNumbers {
        let mut c = CopyNumbers::default();
        let (mut value, mut in_digits) = (0u64, false);
        // Numbers joined by dots (`2.8.23`): the group being read, its dots, whether the last
        // byte was a dot right after digits.
        let (mut group, mut dots, mut after_dot) = (0u16, 0u32, false);
        // Whether the line has had a number yet, whether its first group is still being read,
        // and whether the last byte joined the number before it to the next.
        let (mut line_numbers, mut key_open, mut joined) = (false, true, false);
        let push = |c: &mut CopyNumbers, value: u64, group: &mut u16| {
            if c.count < COPY_NUMBERS {
                c.values[c.count] = value;
                *group |= 1 << c.count;
            }
            c.count += 1;
        };
        let (mut before, mut before2) = (0u8, 0u8);
        for at in from..to {
            let b = self.ring[at as usize % TEXT_RING];
            if b.is_ascii_digit() {
                if !in_digits {
                    let named = before.is_ascii_alphabetic()
                        || before == b'_'
                        || (before == b'-' && before2.is_ascii_alphabetic());
                    if c.count < COPY_NUMBERS && named {
                        c.glued |= 1 << c.count;
                    }
                    if KEYS {
                        key_open &= !line_numbers || joined;
                        if c.count < COPY_NUMBERS && key_open {
                            c.keys |= 1 << c.count;
                            c.key_starts |= (!line_numbers as u16) << c.count;
                        }
                        line_numbers = true;
                    }
                    if after_dot {
                        dots += 1;
                    } else {
                        if dots >= 2 {
                            c.versions |= group;
                        }
                        (group, dots) = (0, 0);
                    }
                }
                value = value.saturating_mul(10).saturating_add((b - b'0') as u64);
                in_digits = true;
                after_dot = false;
            } else {
                after_dot = in_digits && b == b'.';
                if KEYS {
                    joined = in_digits && matches!(b, b'.' | b'-' | b':' | b'/');
                    if b == b'\n' {
                        (line_numbers, key_open) = (false, true);
                    }
                }
                if in_digits {
                    push(&mut c, value, &mut group);
                    (value, in_digits) = (0, false);
                }
            }
            (before, before2) = (b, before);
        }
        if in_digits {
            push(&mut c, value, &mut group);
        }
        if dots >= 2 {
            c.versions |= group;
        }
        c
    }

    /// The newest copy of the repeated block of `period` lines holds at least two lines of
    /// different shapes, and as many as half its lines.
    pub(super) fn block_of_shapes(&self, period: u32) -> bool {
        let p = period.min(16) as usize;
        let mut shapes = [0u32; 16];
        let mut distinct = 0;
        for back in 1..=p as u64 {
            let Some(h) = self.lines.recent(back) else {
                return false;
            };
            if !shapes[..distinct].contains(&h) {
                shapes[distinct] = h;
                distinct += 1;
            }
        }
        distinct >= 2 && 2 * distinct >= p
    }

    /// Every line of the newest copy of the repeated block of `period` lines opens with markup.
    pub(super) fn block_of_markup(&self, period: u32) -> bool {
        let p = period.clamp(1, 16);
        let mask = if p == 16 { u16::MAX } else { (1 << p) - 1 };
        self.markup_lines & mask == mask
    }

    /// Names growing, as the line that just ended (which began at byte `line_start`) leaves
    /// them: a warning when a chain of names grew `GROWTH_WARN` times, or `GROWTH_SAME_WARN`
    /// times in a row by one suffix, a halt at `GROWTH_HALT`.
    pub(super) fn growth_finding(&self, line_start: u64) -> Finding {
        let g = self.novelty.growth();
        let (grown, unit, len) = (g.grown, g.unit, g.len);
        let level = if (grown >= GROWTH_HALT || g.same >= GROWTH_SAME_HALT) && self.line_halt > 0 {
            Action::Halt
        } else if (grown >= GROWTH_WARN || g.same >= GROWTH_SAME_WARN) && self.lines_warn {
            Action::Warn
        } else {
            return Finding::default();
        };
        Finding {
            level,
            kind: LoopKind::GrowingRepeat,
            period: unit.max(1),
            span: len,
            onset: line_start,
            confidence: 1.0 - 0.5f32.powi(grown as i32),
        }
    }

    /// A block nesting itself (see [`nesting`](super::nesting)), as the line `line` (the line
    /// engine's index) leaves it: a growing repeat whose copies are the block, each one level
    /// deeper.
    pub(super) fn nest_finding(&self, nest: Nest, line: u64) -> Finding {
        let (warn, halt) = nest_bounds(nest.period);
        let level = if nest.run >= halt && self.line_halt > 0 {
            Action::Halt
        } else if nest.run >= warn && self.lines_warn {
            Action::Warn
        } else {
            return Finding::default();
        };
        let span = nest.run + nest.period;
        Finding {
            level,
            kind: LoopKind::GrowingRepeat,
            period: nest.period,
            span,
            onset: (line + 1).saturating_sub(span as u64),
            confidence: 1.0 - 0.5f32.powi((nest.run / nest.period).min(30) as i32),
        }
    }

    /// A count, as the bytes read so far leave it: a warning at `COUNT_WARN` copies of the
    /// block with its counter, a halt at `COUNT_HALT`, while the copies say nothing new: at
    /// most `NOTHING_NEW` new words among those read since the count was first seen (a
    /// counter inside a name, `REG_R12`, is a new word every copy), or past
    /// `NAMED_LADDER_COPIES` copies whatever they name.
    pub(super) fn counter_finding(&mut self) -> Finding {
        let c = self.counting.count();
        if c.rungs == 0 {
            return Finding::default();
        }
        if c.onset != self.count_onset {
            (self.count_onset, self.count_words) = (c.onset, self.novelty.words_read());
        }
        let count_warn = patient(COUNT_WARN, self.line_halt as u32);
        let count_halt = patient(COUNT_HALT, self.line_halt as u32);
        if c.rungs < count_warn || !self.lines_warn {
            return Finding::default();
        }
        let words = self.novelty.words_read().wrapping_sub(self.count_words) as u32;
        if c.rungs <= NAMED_LADDER_COPIES && self.novelty.new_in_last(words) > NOTHING_NEW {
            return Finding::default();
        }
        // A table numbered for its reader runs over its domain (see `indexed`).
        let copy = (c.end - c.onset) / c.rungs as u64;
        if c.rungs <= INDEXED_LADDER_COPIES
            && self.index_comment_in(c.end.saturating_sub(2 * copy), c.end)
        {
            return Finding::default();
        }
        // Markup has no loop statement: a count written in it a line a rung (the 31 days of a
        // month as `<option value="24">24</option>`) is written out to its end, and halts
        // only past `MARKUP_LADDER_COPIES`, as a ladder of markup lines does (the last four
        // lines opened with markup).
        let count_halt = if self.block_of_markup(4) {
            count_halt.max(MARKUP_LADDER_COPIES + 1)
        } else {
            count_halt
        };
        let level = if c.rungs >= count_halt && self.line_halt > 0 {
            Action::Halt
        } else {
            Action::Warn
        };
        let span = (c.end - c.onset).min(u32::MAX as u64) as u32;
        Finding {
            level,
            kind: LoopKind::CounterLadder,
            period: (span / c.rungs).max(1),
            span,
            onset: c.onset,
            confidence: 1.0 - 0.5f32.powi((c.rungs / 4) as i32),
        }
    }
}

impl CopyNumbers {
    /// Number `i` is part of a version or an address.
    fn is_version(&self, i: usize) -> bool {
        self.versions & (1 << i) != 0
    }
}

/// The numbers of a copy when all `n` of them (two at least, all held) are one count that
/// runs on through the copies: each steps from the one before it by the same amount, and the
/// first from the last of the copy before (`elif day == 8` .. `elif day == 14`, the weekday
/// names between them, then `elif day == 15`); 0 otherwise.
/// A line that opens with a comment saying only a number (see `TextState::indexed`): after
/// its indentation a comment leader, the number (decimal, or hex after `0x`), and then the
/// line's end, `*/`, or, after a space, at most four more bytes (the key a key map's entry
/// stands for: `A`, `M-1`).
fn index_comment(line: &[u8]) -> bool {
    let text = trim_ascii(line);
    let Some(rest) = ["//", "/*", "#", "--", ";", "%"]
        .iter()
        .find_map(|leader| text.strip_prefix(leader.as_bytes()))
    else {
        return false;
    };
    let rest = trim_ascii(rest);
    let rest = rest.strip_prefix(b"0x").unwrap_or(rest);
    let digits = rest.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    if digits == 0 || !rest[..digits].iter().any(u8::is_ascii_digit) {
        return false;
    }
    // The number stands alone, its label (`A`, `M-1`) after a space: a number going on
    // (`# 2.1.0`, a version; `# 2023-01-22`, a date) is no index.
    let alone = rest.get(digits).map_or(true, u8::is_ascii_whitespace);
    let after = trim_ascii(&rest[digits..]);
    after.starts_with(b"*/") || alone && after.len() <= 4 && !after.contains(&b' ')
}

fn counts_through(copies: &[CopyNumbers], n: usize) -> u32 {
    let newest = &copies[0];
    if n < 2 || copies.len() < 2 || newest.count > COPY_NUMBERS {
        return 0;
    }
    let d = newest.values[1] as i128 - newest.values[0] as i128;
    let steps =
        |c: &CopyNumbers| (1..n).all(|i| c.values[i] as i128 - c.values[i - 1] as i128 == d);
    if d != 0 && copies.iter().all(steps) && step(copies, 0, 0) == n as i128 * d {
        n as u32
    } else {
        0
    }
}

/// The least value of a number that identifies what its copy is about (see `keyed`): three
/// digits, as the new-word rate reads numbers (`novelty::NUMBER_NEWS`).
const ID_MIN: u64 = 100;

/// How number `i` stepped from copy `k + 1` to copy `k` (0 the newest).
fn step(copies: &[CopyNumbers], k: usize, i: usize) -> i128 {
    copies[k].values[i] as i128 - copies[k + 1].values[i] as i128
}

/// Whether each of `copies` (the newest first, at least three, numbers alike in count) has
/// its own key: the first group of one of its lines rising or falling from copy to copy, but
/// not by counting (a date, an issue number: a change log's entries are sorted by them), a
/// version rising or falling in every copy, or a number of `ID_MIN` or more in one place that
/// no two copies share while none of the numbers counts (the issues a list of links points
/// to, in any order). Values that come back (`- 2g vegan cheese`, `- 1g …`) are no keys; a
/// counter first on its line (`7. The answer is 42`) counts.
fn keyed(copies: &[CopyNumbers]) -> bool {
    let (newest, steps) = (&copies[0], 0..copies.len() - 1);
    let n = newest.count.min(COPY_NUMBERS);
    let counter = |i: usize| {
        step(copies, 0, i) != 0
            && steps
                .clone()
                .all(|k| step(copies, k, i) == step(copies, 0, i))
    };
    let monotone = |i: usize| {
        steps.clone().all(|k| step(copies, k, i) > 0)
            || steps.clone().all(|k| step(copies, k, i) < 0)
    };
    let sorted_group = |start: usize| {
        let end = (start + 1..n)
            .find(|&i| newest.keys & (1 << i) == 0 || newest.key_starts & (1 << i) != 0)
            .unwrap_or(n);
        let order = |k: usize| copies[k].values[start..end].cmp(&copies[k + 1].values[start..end]);
        order(0) != std::cmp::Ordering::Equal
            && steps.clone().all(|k| order(k) == order(0))
            && !(start..end).any(counter)
    };
    let same_keys = copies
        .iter()
        .all(|c| c.keys == newest.keys && c.key_starts == newest.key_starts);
    (same_keys && (0..n).any(|i| newest.key_starts & (1 << i) != 0 && sorted_group(i)))
        || (0..n).any(|i| newest.is_version(i) && monotone(i))
        || (identified(copies, n) && !(0..n).any(counter))
}

/// One of the first `n` numbers of `copies` has three digits or more (`ID_MIN`) and no two
/// copies share its value: an issue's, a pull request's, a ticket's number (`.. _issue 433:
/// …/issues/433`, then 493, 514, 510).
fn identified(copies: &[CopyNumbers], n: usize) -> bool {
    (0..n.min(COPY_NUMBERS)).any(|i| {
        let value = |c: &CopyNumbers| c.values[i];
        copies.iter().all(|c| value(c) >= ID_MIN)
            && (copies.iter().enumerate())
                .all(|(k, c)| copies[..k].iter().all(|d| value(d) != value(c)))
    })
}

#[cfg(test)]
mod tests {
    use super::index_comment;

    #[test]
    fn a_comment_saying_only_a_number_is_an_index() {
        for line in [
            "    #  65 A",
            "\t/* 58 */ {on_signal, \"signal 58\"},",
            "// 12",
            "-- 0x1f",
            "; 7 ESC",
            "  # 91 [",
            "/* 58 */",
            "    #  48 0",
            "    # 177 M-1",
        ] {
            assert!(index_comment(line.as_bytes()), "{line:?}");
        }
        for line in [
            "# 1. Install the package",
            "// 12 entries follow",
            "# add",
            "#define MAX 10",
            "x = 5  # 5",
            "# 2.1.0",
            "# 2023-01-22",
            "",
            "#",
        ] {
            assert!(!index_comment(line.as_bytes()), "{line:?}");
        }
    }
}
