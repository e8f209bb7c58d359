//! The symbol engine: every repetition detector that works on a sequence of `u32` symbols,
//! in one pass per symbol, in memory fixed at construction.
//!
//! Token ids, hashed words and hashed lines are all symbols; a [`StreamGuard`] owns one engine
//! for its stream symbols and a small one for its lines.
//!
//! # How it finds loops
//!
//! * **Dense periods** `1..=dense`: for each period `p` it keeps `run[p]`, the number of
//!   consecutive latest positions `i` with `s[i] == s[i - p]`. The tail of the stream is `c`
//!   copies of a block of length `p` exactly when `run[p] >= (c - 1) * p`: the test vLLM runs by
//!   scanning the tail, updated in O(dense) vectorisable work instead.
//! * **Indexed periods** beyond `dense`: a rolling hash of the last `ngram` symbols indexes a
//!   table of the position where each n-gram was last seen. A hit proposes its distance as a
//!   candidate period; the candidate is verified symbol by symbol (so a hash collision is only
//!   ever a wasted comparison), its run is extended backwards once, and from then on it is
//!   tracked like a dense period, one comparison per symbol. Distances up to `max_period` are
//!   exact loops; longer ones, up to the window, are long-range repeats.
//! * **Coverage**: a symbol is *covered* when its n-gram was verified as seen before in the
//!   window. The covered share of the last `near_window` symbols is a streaming `seq-rep-n`;
//!   when it stays high the copies vary but the stream is going round in circles.
//!
//! [`StreamGuard`]: crate::StreamGuard

use crate::verdict::{Action, LoopKind};

/// How many indexed candidate periods are tracked at once.
const CANDIDATES: usize = 8;
/// Multiplier of the polynomial rolling hash (odd, so powers never vanish mod 2^64).
const ROLL: u64 = 0x100_0000_01b3;

/// Thresholds of one engine, in symbols, derived once from the settings.
#[derive(Clone, Debug)]
pub(crate) struct EngineParams {
    pub window: usize,
    pub dense: usize,
    pub ngram: usize,
    pub min_period: u32,
    pub max_period: u32,
    pub halt_copies: u32,
    pub halt_span: u32,
    /// 0 = never warn on exact loops.
    pub warn_copies: u32,
    pub warn_span: u32,
    /// 0 = off.
    pub long_warn_run: u32,
    /// 0 = off.
    pub long_halt_run: u32,
    /// 0 = coverage off.
    pub near_window: usize,
    pub near_warn: f32,
    /// 0 = near loops never halt.
    pub near_halt: f32,
    pub near_patience: u32,
    /// log2 of the n-gram table size; 0 = no index.
    pub index_bits: u32,
    /// Kind reported for dense/indexed loops (`ExactLoop`, or `RepeatedLines` for lines).
    pub loop_kind: LoopKind,
}

/// One detector's best evidence after a push.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Finding {
    pub level: Action,
    pub kind: LoopKind,
    pub period: u32,
    /// Length of the repetitive region, onset to now.
    pub span: u32,
    /// Position of the first symbol of the first copy.
    pub onset: u64,
    pub confidence: f32,
}

impl Finding {
    pub fn repeats(&self) -> f32 {
        if self.period == 0 {
            0.0
        } else {
            self.span as f32 / self.period as f32
        }
    }

    /// `true` when `self` should be reported rather than `other`.
    pub fn beats(&self, other: &Finding) -> bool {
        (self.level, self.span) > (other.level, other.span)
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Candidate {
    period: u32,
    run: u32,
}

/// Per-sequence symbol state. All buffers are allocated in [`Engine::new`].
#[derive(Clone)]
pub(crate) struct Engine {
    p: EngineParams,
    mask: usize,
    /// The last `window` symbols, at `pos & mask`.
    syms: Box<[u32]>,
    /// The last `dense` symbols written twice, so that they are always one contiguous slice.
    hist: Box<[u32]>,
    /// `runs[j]` is the run of period `dense - j`.
    runs: Box<[u32]>,
    /// Per period (same order as `runs`): the run that warns, or halts, and the smaller of the two.
    warn_need: Box<[u32]>,
    halt_need: Box<[u32]>,
    any_need: Box<[u32]>,
    /// n-gram hash → low 16 bits of (position + 1) where it was last seen; 0 = empty.
    head: Box<[u16]>,
    cands: [Candidate; CANDIDATES],
    ncands: usize,
    gram: u64,
    /// `ROLL^ngram`, to drop the oldest symbol from `gram`.
    roll_out: u64,
    /// Coverage bits of the last `near_window` positions and their sum.
    cover: Box<[u64]>,
    cover_sum: u32,
    /// Consecutive positions with coverage at the halt level, and where the warn level began.
    near_streak: u32,
    near_since: Option<u64>,
    last_dist: u32,
    /// Index of the next symbol.
    pos: u64,
    /// Symbols before `floor` are never compared with (stream start, or a breaker).
    floor: u64,
    /// Multiplies near-loop patience (code blocks, tables).
    pub slack: f32,
}

#[inline]
fn mix(s: u32) -> u64 {
    // One multiply spreads a small token id over all 64 bits before it enters the rolling sum.
    (s as u64 ^ 0x9e37_79b9).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

impl Engine {
    pub fn new(p: EngineParams) -> Engine {
        let dense = p.dense;
        let mut warn_need = vec![u32::MAX; dense].into_boxed_slice();
        let mut halt_need = vec![u32::MAX; dense].into_boxed_slice();
        for j in 0..dense {
            let period = (dense - j) as u32;
            if period < p.min_period || period > p.max_period {
                continue;
            }
            halt_need[j] = need(period, p.halt_copies, p.halt_span);
            if p.warn_copies > 0 {
                warn_need[j] = need(period, p.warn_copies, p.warn_span);
            }
        }
        let any_need = warn_need
            .iter()
            .zip(halt_need.iter())
            .map(|(w, h)| (*w).min(*h))
            .collect();
        let table = if p.index_bits == 0 {
            0
        } else {
            1usize << p.index_bits
        };
        Engine {
            mask: p.window - 1,
            syms: vec![0; p.window].into_boxed_slice(),
            hist: vec![0; 2 * dense].into_boxed_slice(),
            runs: vec![0; dense].into_boxed_slice(),
            warn_need,
            halt_need,
            any_need,
            head: vec![0; table].into_boxed_slice(),
            cands: [Candidate::default(); CANDIDATES],
            ncands: 0,
            gram: 0,
            roll_out: ROLL.wrapping_pow(p.ngram as u32),
            cover: vec![0; p.near_window.div_ceil(64)].into_boxed_slice(),
            cover_sum: 0,
            near_streak: 0,
            near_since: None,
            last_dist: 0,
            pos: 0,
            floor: 0,
            slack: 1.0,
            p,
        }
    }

    /// Bytes owned by this engine, heap and inline.
    pub fn memory_usage(&self) -> usize {
        std::mem::size_of::<Engine>()
            + 4 * (self.syms.len()
                + self.hist.len()
                + self.runs.len()
                + self.warn_need.len()
                + self.halt_need.len()
                + self.any_need.len())
            + 2 * self.head.len()
            + 8 * self.cover.len()
    }

    /// Index of the next symbol (the number pushed since construction or [`reset`](Self::reset)).
    pub fn pos(&self) -> u64 {
        self.pos
    }

    /// Forgets everything, as if new.
    pub fn reset(&mut self) {
        self.pos = 0;
        self.forget();
        self.syms.fill(0);
        self.hist.fill(0);
    }

    /// Forgets all evidence but keeps counting positions: nothing before now is compared with.
    pub fn forget(&mut self) {
        self.floor = self.pos;
        self.runs.fill(0);
        self.head.fill(0);
        self.ncands = 0;
        self.gram = 0;
        self.cover.fill(0);
        self.cover_sum = 0;
        self.near_streak = 0;
        self.near_since = None;
        self.last_dist = 0;
    }

    #[inline]
    fn sym(&self, at: u64) -> u32 {
        self.syms[at as usize & self.mask]
    }

    /// Feeds one symbol and returns the strongest evidence it completes.
    ///
    /// O(dense + CANDIDATES) with no allocation; a newly adopted candidate costs one backward
    /// scan as long as its match.
    #[inline]
    pub fn push(&mut self, s: u32) -> Finding {
        let pos = self.pos;
        // Symbols at positions floor..pos may be compared with.
        let avail = pos - self.floor;
        let dense = self.p.dense;

        // 1. Dense periods: one branch-free pass the compiler vectorises.
        let k = (pos % dense as u64) as usize;
        for (r, &h) in self.runs.iter_mut().zip(&self.hist[k..k + dense]) {
            *r = if h == s { *r + 1 } else { 0 };
        }
        if avail < dense as u64 {
            // Periods longer than the history compared against symbols that are not there.
            self.runs[..dense - avail as usize].fill(0);
        }
        self.hist[k] = s;
        self.hist[k + dense] = s;
        self.syms[pos as usize & self.mask] = s;

        // 2. Indexed candidates: one comparison each; a mismatch drops the candidate.
        let mut i = 0;
        while i < self.ncands {
            let c = &mut self.cands[i];
            if self.syms[(pos - c.period as u64) as usize & self.mask] == s {
                c.run += 1;
                i += 1;
            } else {
                self.ncands -= 1;
                self.cands[i] = self.cands[self.ncands];
            }
        }

        // 3. The n-gram index: proposes a distance, verified before it counts.
        let n = self.p.ngram as u64;
        self.gram = self.gram.wrapping_mul(ROLL).wrapping_add(mix(s));
        if avail >= n {
            let old = self.sym(pos - n);
            self.gram = self.gram.wrapping_sub(mix(old).wrapping_mul(self.roll_out));
        }
        let mut covered = false;
        if !self.head.is_empty() && avail + 1 >= n {
            let slot = (self.gram.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - self.p.index_bits))
                as usize;
            let here = (pos as u16).wrapping_add(1);
            let seen = std::mem::replace(&mut self.head[slot], here);
            if seen != 0 {
                let dist = here.wrapping_sub(seen) as u64;
                if dist >= 1
                    && dist + n <= self.syms.len() as u64
                    && dist + n <= avail + 1
                    && (0..n).all(|t| self.sym(pos - t) == self.sym(pos - dist - t))
                {
                    covered = true;
                    self.last_dist = dist as u32;
                    if dist > dense as u64
                        && !self.cands[..self.ncands]
                            .iter()
                            .any(|c| c.period as u64 == dist)
                    {
                        self.adopt(pos, avail, dist);
                    }
                }
            }
        }

        // 4. Coverage over the last near_window positions.
        if !self.cover.is_empty() {
            let b = (pos % self.p.near_window as u64) as usize;
            let (word, bit) = (b / 64, 1u64 << (b % 64));
            let was = self.cover[word] & bit != 0;
            if was != covered {
                self.cover[word] ^= bit;
                if covered {
                    self.cover_sum += 1;
                } else {
                    self.cover_sum -= 1;
                }
            }
        }
        self.pos = pos + 1;
        self.evaluate(pos)
    }

    /// Starts tracking `dist`, with its run extended backwards as far as it matches.
    #[cold]
    fn adopt(&mut self, pos: u64, avail: u64, dist: u64) {
        let mut run = self.p.ngram as u64;
        let reach = (self.syms.len() as u64 - 1).min(avail);
        while run + dist <= reach && self.sym(pos - run) == self.sym(pos - run - dist) {
            run += 1;
        }
        let cand = Candidate {
            period: dist as u32,
            run: run as u32,
        };
        if self.ncands < CANDIDATES {
            self.cands[self.ncands] = cand;
            self.ncands += 1;
        } else if let Some(weakest) = self.cands.iter_mut().min_by_key(|c| c.run) {
            if weakest.run < cand.run {
                *weakest = cand;
            }
        }
    }

    #[inline]
    fn evaluate(&mut self, pos: u64) -> Finding {
        let mut best = Finding::default();
        // Dense: one vectorised test, details only when it fires.
        let fired = self
            .runs
            .iter()
            .zip(self.any_need.iter())
            .fold(false, |acc, (r, n)| acc | (r >= n));
        if fired {
            best = self.dense_finding(pos);
        }
        for c in &self.cands[..self.ncands] {
            let f = self.candidate_finding(pos, c);
            if f.beats(&best) {
                best = f;
            }
        }
        if !self.cover.is_empty() {
            let f = self.near_finding(pos);
            if f.beats(&best) {
                best = f;
            }
        }
        best
    }

    #[cold]
    fn dense_finding(&self, pos: u64) -> Finding {
        let dense = self.p.dense;
        let mut best = Finding::default();
        // Smallest period first: the primitive block of the loop.
        for j in (0..dense).rev() {
            let run = self.runs[j];
            let level = if run >= self.halt_need[j] {
                Action::Halt
            } else if run >= self.warn_need[j] {
                Action::Warn
            } else {
                continue;
            };
            if level > best.level {
                best = self.loop_finding(pos, level, (dense - j) as u32, run, self.p.loop_kind);
                if level == Action::Halt {
                    break;
                }
            }
        }
        best
    }

    fn candidate_finding(&self, pos: u64, c: &Candidate) -> Finding {
        let (period, run) = (c.period, c.run);
        let (level, kind) = if period <= self.p.max_period {
            let lvl = if period < self.p.min_period {
                Action::Continue
            } else if run >= need(period, self.p.halt_copies, self.p.halt_span) {
                Action::Halt
            } else if self.p.warn_copies > 0
                && run >= need(period, self.p.warn_copies, self.p.warn_span)
            {
                Action::Warn
            } else {
                Action::Continue
            };
            (lvl, self.p.loop_kind)
        } else {
            // One verbatim recurrence, however long, happens in human text (a ChangeLog entry
            // filed twice); a halt needs back-to-back copies as well.
            let halt_run = self
                .p
                .long_halt_run
                .max(need(period, self.p.halt_copies, 0));
            let lvl = if self.p.long_halt_run > 0 && run >= halt_run {
                Action::Halt
            } else if self.p.long_warn_run > 0 && run >= self.p.long_warn_run {
                Action::Warn
            } else {
                Action::Continue
            };
            (lvl, LoopKind::LongRepeat)
        };
        if level == Action::Continue {
            return Finding::default();
        }
        self.loop_finding(pos, level, period, run, kind)
    }

    fn loop_finding(
        &self,
        pos: u64,
        level: Action,
        period: u32,
        run: u32,
        kind: LoopKind,
    ) -> Finding {
        let span = run.saturating_add(period);
        let copies = span as f32 / period as f32;
        let confidence = match kind {
            LoopKind::LongRepeat => {
                let full = self.p.long_halt_run.max(1) as f32;
                (0.5 + 0.5 * (run as f32 / full)).min(1.0)
            }
            _ => 1.0 - 0.5f32.powf(copies - 1.0),
        };
        Finding {
            level,
            kind,
            period,
            span,
            onset: (pos + 1).saturating_sub(span as u64),
            confidence,
        }
    }

    fn near_finding(&mut self, pos: u64) -> Finding {
        let w = self.p.near_window as u64;
        if pos + 1 < w + self.floor {
            return Finding::default();
        }
        let share = self.cover_sum as f32 / w as f32;
        if share < self.p.near_warn {
            self.near_since = None;
            self.near_streak = 0;
            return Finding::default();
        }
        let since = *self.near_since.get_or_insert(pos);
        let halting = self.p.near_halt > 0.0 && share >= self.p.near_halt;
        if halting {
            self.near_streak += 1;
        } else {
            self.near_streak = 0;
        }
        let patience = (self.p.near_patience as f32 * self.slack) as u32;
        let level = if halting && self.near_streak > patience {
            Action::Halt
        } else {
            Action::Warn
        };
        let onset = (since + 1).saturating_sub(w).max(self.floor);
        let span = (pos + 1 - onset).min(u32::MAX as u64) as u32;
        Finding {
            level,
            kind: LoopKind::NearLoop,
            period: self.last_dist.max(1),
            span,
            onset,
            confidence: share,
        }
    }
}

/// The run of period `p` that means `copies` copies spanning at least `span` symbols.
fn need(p: u32, copies: u32, span: u32) -> u32 {
    let by_copies = (copies.saturating_sub(1) as u64) * p as u64;
    let by_span = (span as u64).saturating_sub(p as u64);
    by_copies.max(by_span).min(u32::MAX as u64 - 1) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(dense: usize) -> EngineParams {
        EngineParams {
            window: 256,
            dense,
            ngram: 3,
            min_period: 1,
            max_period: 64,
            halt_copies: 3,
            halt_span: 0,
            warn_copies: 2,
            warn_span: 0,
            long_warn_run: 0,
            long_halt_run: 0,
            near_window: 0,
            near_warn: 0.5,
            near_halt: 0.7,
            near_patience: 0,
            index_bits: 8,
            loop_kind: LoopKind::ExactLoop,
        }
    }

    /// Pushes `block` until the engine halts; returns the push index.
    fn halt_at(e: &mut Engine, prefix: &[u32], block: &[u32]) -> (u64, Finding) {
        for &s in prefix {
            assert_eq!(e.push(s).level, Action::Continue);
        }
        for i in 0..10_000 {
            let f = e.push(block[i % block.len()]);
            if f.level == Action::Halt {
                return (e.pos() - 1, f);
            }
        }
        panic!("no halt");
    }

    #[test]
    fn dense_and_indexed_periods_halt_at_the_third_copy() {
        for dense in [4usize, 16] {
            let mut e = Engine::new(params(dense));
            let block: Vec<u32> = (100..110).collect();
            let (at, f) = halt_at(&mut e, &[1, 2, 3], &block);
            assert_eq!(f.period, 10, "dense={dense}");
            assert_eq!(f.onset, 3);
            assert_eq!(at, 3 + 30 - 1, "dense={dense}");
        }
    }

    #[test]
    fn a_block_without_unique_ngrams_needs_the_dense_pass() {
        // Every cyclic 3-gram of this primitive block recurs inside it, so the last sighting of
        // each n-gram is always nearer than 8 and the index never proposes the period.
        let block = [1u32, 1, 1, 1, 2, 1, 1, 2];
        // A span floor keeps the run of four 1s from counting as a loop of its own.
        let spanned = |dense| EngineParams {
            halt_span: 12,
            warn_span: 12,
            ..params(dense)
        };
        let mut e = Engine::new(spanned(16));
        let (at, f) = halt_at(&mut e, &[9], &block);
        assert_eq!((f.period, f.onset, at), (8, 1, 24));
        let mut e = Engine::new(spanned(4));
        for &s in block.iter().cycle().take(80) {
            assert_ne!(e.push(s).period, 8);
        }
    }

    #[test]
    fn forget_ignores_what_came_before() {
        let mut e = Engine::new(params(4));
        let block: Vec<u32> = (100..110).collect();
        for &s in block.iter().chain(&block) {
            e.push(s);
        }
        e.forget();
        // One more copy would make three; after forget it is the first again.
        for &s in &block {
            assert_eq!(e.push(s).level, Action::Continue);
        }
    }
}
