//! Coverage, the engine's near-loop detector: the share of the last `near_window` symbols
//! whose n-gram was seen before (a streaming `seq-rep-n`), and when it has held long enough
//! while the text says nothing new to warn or halt. With text, the n-grams are 4-grams,
//! verified symbol by symbol, from a small table of their last sightings (see the engine's
//! documentation).

use super::{Engine, EngineParams, Finding, NEAR_GRAM, NEAR_SLOTS, NOT_NEAR};
use crate::verdict::{Action, LoopKind};

/// The table slot of 4-gram `g` (its newest symbol first).
#[inline(always)]
pub(super) fn near_slot(g: &[u32; NEAR_GRAM as usize]) -> usize {
    let h = g.iter().fold(0u64, |h, &x| {
        (h ^ x as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    });
    (h >> 32) as usize % NEAR_SLOTS
}

impl Engine {
    /// How far back the 4-gram ending at `pos` (already in the ring) was last seen, if within
    /// the last few hundred symbols (checked symbol by symbol), else 0; records this sighting.
    /// Inlined into the pushes of streams with text only.
    #[inline(always)]
    pub(super) fn near_gram(&mut self, pos: u64, avail: u64) -> u64 {
        if avail + 1 < NEAR_GRAM {
            return 0;
        }
        let g: [u32; NEAR_GRAM as usize] = std::array::from_fn(|t| self.sym(pos - t as u64));
        let slot = near_slot(&g);
        let here = (pos as u16).wrapping_add(1);
        let seen = std::mem::replace(&mut self.near_head[slot], here);
        let dist = here.wrapping_sub(seen) as u64;
        let seen_here = seen != 0
            && dist + NEAR_GRAM <= (avail + 1).min(self.syms.len() as u64)
            && (0..NEAR_GRAM).all(|t| g[t as usize] == self.sym(pos - dist - t));
        if seen_here {
            dist
        } else {
            0
        }
    }

    /// Records where coverage reached the warn level (`NOT_NEAR`: it is below), and so whether
    /// every push must evaluate it.
    pub(super) fn set_near_since(&mut self, since: u64) {
        self.near_since = since;
        self.near_alert = if since == NOT_NEAR {
            near_warn_count(&self.p)
        } else {
            0
        };
    }

    pub(super) fn near_finding(&mut self, pos: u64) -> Finding {
        let w = self.p.near_window as u64;
        // Where the latest repeat last came from within half the window (two copies in view),
        // noted at every push coverage is evaluated, while the window fills too: a warning
        // needs one in the last half window. No repeat yet (`last_dist` 0) is none.
        let close = 2 * self.last_dist as u64 <= w;
        if close && self.last_dist > 0 {
            self.near_close = pos as u32;
        }
        if pos + 1 < w + self.floor {
            return Finding::default();
        }
        let share = self.cover_sum as f32 / w as f32;
        if share < self.p.near_warn {
            self.set_near_since(NOT_NEAR);
            self.near_streak = 0;
            return Finding::default();
        }
        if self.near_since == NOT_NEAR {
            self.set_near_since(pos);
        }
        let since = self.near_since;
        let halting = self.text_known && self.p.near_halt > 0.0 && share >= self.p.near_halt;
        // Patience counts only the symbols pushed while the latest repeat seen (`last_dist`:
        // an indexed n-gram's, or two 4-grams' in a row at one distance) came from within
        // half the window, so that two copies of what repeats are in view; the others
        // neither count nor break the count while coverage holds. A document that quotes one
        // passage again and again far apart (a licence for each component it ships) is
        // covered as densely, but by one recurrence at a time: evidence of less than one copy.
        if halting {
            if close {
                self.near_streak += 1;
            }
        } else {
            self.near_streak = 0;
        }
        let patience = (self.p.near_patience as f32 * self.slack) as u32;
        // Coverage held long enough, and the text has stopped saying anything new.
        let level = if halting && self.near_streak > patience && self.says_nothing_new {
            Action::Halt
        } else if self.says_little_new
            && ((pos as u32).wrapping_sub(self.near_close) as u64 <= w / 2
                || self.p.long_warn_run > 0)
        {
            Action::Warn
        } else {
            return Finding::default();
        };
        let mut onset = (since + 1).saturating_sub(w).max(self.floor);
        let mut period = self.last_dist.max(1);
        // When the copies have become verbatim (two whole ones back to back), they are the
        // best evidence: their period, and the onset of the first.
        if let Some(c) = self.cands[..self.ncands as usize]
            .iter()
            .filter(|c| c.run >= c.period)
            .max_by_key(|c| c.run)
        {
            period = c.period;
            onset = pos + 1 - (c.run + c.period) as u64;
        }
        let span = (pos + 1 - onset).min(u32::MAX as u64) as u32;
        // A period is evidence only with two copies of it in the span; otherwise the evidence
        // is the window and its coverage (period 0).
        if 2 * period as u64 > span as u64 {
            period = 0;
        }
        Finding {
            level,
            kind: LoopKind::NearLoop,
            period,
            span,
            onset,
            confidence: share,
        }
    }
}

/// The coverage sum (covered symbols in the near window) that warns; MAX with coverage off.
pub(super) fn near_warn_count(p: &EngineParams) -> u32 {
    if p.near_window == 0 {
        u32::MAX
    } else {
        ((p.near_warn * p.near_window as f32).ceil() as u32).max(1)
    }
}
