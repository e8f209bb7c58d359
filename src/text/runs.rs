//! Character runs: a byte, or a unit of up to four bytes, written again and again (`!!!!`,
//! `-=-=`, `the the the`), found from four run lanes the text's byte loop keeps, one per
//! period, and judged by what the unit is made of (a rule, data, a word).

use super::content::{
    is_data_unit, is_escaped_fill, is_rule, is_underline, is_word, BUFFER_FACTOR,
};
use super::{TextState, CLASS, RUN_CAP, SPACE};
use crate::engine::Finding;
use crate::verdict::{Action, LoopKind};

impl TextState {
    /// The strongest character run ending at byte `now`.
    pub(super) fn char_finding(&self, limits: &CharLimits, now: u64) -> Finding {
        let mut best = Finding::default();
        // The last four bytes, newest first.
        let unit: [u8; 4] = std::array::from_fn(|k| (self.last >> (16 * k)) as u8);
        for p in 0..4 {
            let run = (self.runs >> (16 * p)) as u16 as u32;
            let period = p as u32 + 1;
            if run < period {
                // Fewer than two whole copies of the unit: no run yet.
                continue;
            }
            let span = run + period;
            // The unit is made only of white space or rule characters: indentation, rules.
            let once = &unit[..period as usize];
            let separator = is_rule(once) || is_underline([once, &[]]);
            // A unit of digits (and escapes): zeros in a test vector (`\x00\x00`), a
            // number's digits. Data repeats its values: only a longer run halts.
            let data = is_data_unit(&unit[..period as usize]);
            // A rule is a line at most: drawn characters (not white space) running on for
            // longer than any line is a loop, not layout.
            let drawn = separator
                && unit[..period as usize]
                    .iter()
                    .any(|&b| CLASS[b as usize] & SPACE == 0);
            let (warn, halt) = if drawn {
                (0, limits.separator_halt.min(RULE_LINE))
            } else if separator {
                (0, limits.separator_halt)
            } else if data {
                // One escaped byte (a buffer spelled out) runs longer still: asked only of a run
                // past what other data may run. The unit in reading order (`unit` is newest
                // first).
                let halt = limits.halt.saturating_mul(DATA_RUN_FACTOR);
                let buffer = span >= halt && {
                    let mut forward = unit;
                    forward[..period as usize].reverse();
                    let once = &forward[..period as usize];
                    is_escaped_fill([once, once])
                };
                let halt = if buffer {
                    halt.saturating_mul(BUFFER_FACTOR)
                } else {
                    halt
                };
                (limits.warn, halt)
            } else {
                (limits.warn, limits.halt)
            };
            let level = if halt > 0 && span >= halt {
                Action::Halt
            } else if warn > 0 && span >= warn {
                Action::Warn
            } else {
                continue;
            };
            // "the the the" arrives as a run of the 4-byte unit "the ": a word, not a character.
            let unit = &unit[..period as usize];
            let word = unit.contains(&b' ') && is_word([unit, &[]]);
            let f = Finding {
                level,
                kind: if word {
                    LoopKind::WordStutter
                } else {
                    LoopKind::CharRun
                },
                period,
                span,
                onset: now - span as u64,
                confidence: if level == Action::Halt { 0.95 } else { 0.6 },
            };
            if f.beats(&best) {
                best = f;
            }
        }
        best
    }
}

/// Bytes of drawn rule characters in a row (`-=-=-=`, `━━━`), on one line, that halt: wider
/// than any line of a text laid out for reading.
const RULE_LINE: u32 = 512;

/// How much longer than `char_run_halt` a run of a data unit (see [`is_data_unit`]) must be
/// to halt.
const DATA_RUN_FACTOR: u32 = 4;

/// Character-run thresholds, in bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CharLimits {
    pub warn: u32,
    pub halt: u32,
    pub separator_halt: u32,
    /// Added to the run lanes, it sets a lane's top bit once its run reaches the smallest
    /// threshold that is on (or `RUN_CAP`): below that nothing is checked.
    pub(super) alert_add: u64,
}

impl CharLimits {
    pub fn new(warn: u32, halt: u32, separator_halt: u32) -> CharLimits {
        let min_check = [warn, halt, separator_halt]
            .into_iter()
            .filter(|&v| v > 0)
            .min()
            .unwrap_or(u32::MAX);
        // A run of period p spans run + p bytes and holds at least two copies (run >= p).
        let alert_add = (0..4).fold(0, |acc, p| {
            let period = p + 1;
            let need = (min_check as u64)
                .saturating_sub(period)
                .max(period)
                .min(RUN_CAP);
            acc | (0x8000 - need) << (16 * p)
        });
        CharLimits {
            warn,
            halt,
            separator_halt,
            alert_add,
        }
    }
}

/// Caps each run lane at `RUN_CAP`, so that no lane overflows into the next.
pub(super) fn clamp_lanes(runs: u64) -> u64 {
    (0..4).fold(0, |acc, p| {
        acc | ((runs >> (16 * p)) & 0xffff).min(RUN_CAP) << (16 * p)
    })
}
