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
//!   scanning the tail, updated in O(dense) vectorisable work instead. It finds every block,
//!   whatever its n-grams; the vLLM-compatible preset uses it for all its periods (it is off by
//!   default).
//! * **Indexed periods** beyond `dense`: a rolling hash of the last `ngram` symbols indexes a
//!   table of the position where each n-gram was last seen. A hit proposes its distance as a
//!   candidate period; the candidate is verified symbol by symbol (so a hash collision is only
//!   ever a wasted comparison), its run is extended backwards once, and from then on it is
//!   tracked like a dense period, one comparison per symbol. Distances up to `max_period` are
//!   exact loops; longer ones, up to the window, are long-range repeats. A period `p <= ngram`
//!   is always found: the n-grams of a primitive block that short are its rotations, all
//!   distinct, so each was last seen exactly `p` back. A longer block needs one n-gram that
//!   occurs once in it.
//! * **Coverage**: a symbol is *covered* when its n-gram was seen before. The covered share of
//!   the last `near_window` symbols is a streaming `seq-rep-n`; when it stays high the copies
//!   vary but the stream is going round in circles. On ids alone the n-grams are the index's
//!   (tagged, unverified: that coverage only warns). When the stream's text is known and near
//!   loops may halt, they are 4-grams, verified symbol by symbol, from a small table of their
//!   last sightings: paraphrased copies share many more 4-grams than 8-grams, and a table that
//!   small forgets a 4-gram within a few hundred symbols, so a near loop keeps its coverage
//!   while boilerplate that recurs from far back (a licence clause) does not.
//!
//! [`StreamGuard`]: crate::StreamGuard

use crate::journal::{Array, Journal, Owner};
use crate::verdict::{Action, LoopKind};

mod near;

use self::near::near_warn_count;

/// How many indexed candidate periods are tracked at once.
const CANDIDATES: usize = 8;
/// The dense pass works on chunks of this many periods, a width the compiler vectorises.
const LANES: usize = 8;
/// Multiplier of the polynomial rolling hash (odd, so powers never vanish mod 2^64).
const ROLL: u64 = 0x100_0000_01b3;
/// Symbols in a near-loop gram.
const NEAR_GRAM: u64 = 4;
/// `near_since` when coverage is below the warn level.
const NOT_NEAR: u64 = u64::MAX;
/// Slots of the near-loop gram table (see the module documentation for why it is small).
const NEAR_SLOTS: usize = 512;

/// Thresholds of one engine, in symbols, derived once from the settings.
#[derive(Clone, Debug)]
pub(crate) struct EngineParams {
    pub window: u32,
    pub dense: usize,
    pub ngram: u32,
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
    pub near_window: u32,
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
    #[inline]
    pub fn beats(&self, other: &Finding) -> bool {
        (self.level, self.span) > (other.level, other.span)
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Candidate {
    period: u32,
    run: u32,
    /// The run at which this period starts to warn or halt (fixed when adopted).
    alert: u32,
}

/// Per-sequence symbol state. All buffers are allocated in [`Engine::new`].
///
/// `repr(C)` with every field a push reads or writes first: a pool of hundreds of guards
/// touches a few cache lines per token instead of a dozen scattered ones.
#[derive(Clone)]
#[repr(C)]
pub(crate) struct Engine {
    // Hot: every push.
    /// Index of the next symbol.
    pos: u64,
    /// Symbols before `floor` are never compared with (stream start, or a breaker).
    floor: u64,
    /// The rolling hash of the next push's n-gram without its newest symbol (the one pushed):
    /// this n-gram's times `ROLL`, less the symbol leaving it times `roll_out`. Readying it
    /// at the end of a push leaves the next one (and a pool's look ahead) a single addition.
    next_base: u64,
    /// `ROLL^ngram`, to drop the oldest symbol from the rolling hash.
    roll_out: u64,
    /// The last `window` symbols, at `pos & (window - 1)`.
    syms: Box<[u32]>,
    /// n-gram hash → where it was last seen: low 16 bits of (position + 1) (0 = empty) and, in
    /// the high 16 bits, a tag from other bits of the hash, so that a slot shared by two
    /// n-grams is told apart without reading the ring.
    head: Box<[u32]>,
    /// Coverage of the last `near_window` positions, a bit each.
    cover: Box<[u64]>,
    ncands: u32,
    /// Sum of `cover`, and the sum at which a push evaluates it: the count that warns, or 0
    /// while coverage is at the warn level (its streak is then counted every push).
    cover_sum: u32,
    near_alert: u32,
    last_dist: u32,
    // Copies of the parameters a push reads, next to the state they steer.
    ngram: u32,
    index_bits: u32,
    dense: u32,
    near_window: u32,
    /// `pos % near_window`, kept as a counter: a division per symbol costs more than the rest.
    near_at: u32,
    /// `pos % dense`, as a counter.
    dense_at: u32,
    /// Where each 4-gram was last seen (low 16 bits of position + 1; 0 = empty); empty when
    /// near loops never halt.
    near_head: Box<[u16]>,
    /// Where the warn level of coverage began (`NOT_NEAR` while below it).
    near_since: u64,
    cands: [Candidate; CANDIDATES],
    // Cold: warnings, halts, the optional dense pass.
    p: EngineParams,
    /// The last `dense` symbols written twice, so that they are always one contiguous slice.
    /// `dense` is one more than a multiple of LANES (see [`Engine::new`]).
    hist: Box<[u32]>,
    /// `runs[j]` is the run of period `dense - j`. Signed, because SSE2 compares only signed
    /// lanes: an unsigned comparison keeps the pass from vectorising.
    runs: Box<[i32]>,
    /// Per period (same order as `runs`): the run that warns, or halts, and the smaller of the two.
    warn_need: Box<[i32]>,
    halt_need: Box<[i32]>,
    any_need: Box<[i32]>,
    /// Positions since coverage reached the halt level pushed while the latest repeat came
    /// from within half the near window.
    near_streak: u32,
    /// The latest position, of those at which coverage was evaluated, at which the latest
    /// repeat came from within half the near window (its low 32 bits: only distances of up to
    /// half the window are asked).
    near_close: u32,
    /// Multiplies near-loop patience (code blocks, tables).
    pub slack: f32,
    /// The symbol about to be pushed lies in code, a table or an indented block: it never
    /// counts as covered. Set by a stream with text before each push.
    pub structured: bool,
    /// The stream's text is known, so structured symbols are told apart: only then may a near
    /// loop halt (on ids alone a data table or a changelog looks the same as one).
    pub text_known: bool,
    /// The stream's recent text says nothing new (few or no words never seen before in it):
    /// a near loop may halt only then. Regular human text — a list of declarations, a
    /// changelog — repeats its shape but keeps naming new things.
    pub says_nothing_new: bool,
    /// The stream's recent text says little new: a near loop may warn only then. A list
    /// of declarations that names a new thing on most lines is regular, not a loop.
    pub says_little_new: bool,
    /// The distance of the last 4-gram hit: a near loop's period is a distance two hits in a
    /// row agree on, not a stray short one ("UI-UI").
    near_prev: u16,
    /// The evidence of the last push that returned more than `Continue`.
    found: Finding,
}

impl Engine {
    pub fn new(mut p: EngineParams) -> Engine {
        // Period 1 is compared on its own and periods 2..=dense in whole vector chunks, so
        // `dense` becomes one more than a multiple of LANES. The extra periods are tracked but
        // never alert (their need is MAX) unless they lie in min_period..=max_period, where
        // tracking them densely is exact.
        if p.dense > 0 {
            p.dense = p.dense.saturating_sub(1).max(1).div_ceil(LANES) * LANES + 1;
        }
        let dense = p.dense;
        let mut warn_need = vec![i32::MAX; dense].into_boxed_slice();
        let mut halt_need = vec![i32::MAX; dense].into_boxed_slice();
        for j in 0..dense {
            let period = (dense - j) as u32;
            if period < p.min_period || period > p.max_period {
                continue;
            }
            halt_need[j] = need(period, p.halt_copies, p.halt_span).min(i32::MAX as u32) as i32;
            if p.warn_copies > 0 {
                warn_need[j] = need(period, p.warn_copies, p.warn_span).min(i32::MAX as u32) as i32;
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
            syms: vec![0; p.window as usize].into_boxed_slice(),
            hist: vec![0; 2 * dense].into_boxed_slice(),
            runs: vec![0; dense].into_boxed_slice(),
            warn_need,
            halt_need,
            any_need,
            head: vec![0; table].into_boxed_slice(),
            cands: [Candidate::default(); CANDIDATES],
            ncands: 0,
            next_base: 0,
            roll_out: ROLL.wrapping_pow(p.ngram),
            cover: vec![0; (p.near_window as usize).div_ceil(64).max(1)].into_boxed_slice(),
            near_head: if p.near_halt > 0.0 && p.near_window > 0 {
                vec![0; NEAR_SLOTS].into_boxed_slice()
            } else {
                Box::default()
            },
            cover_sum: 0,
            near_alert: near_warn_count(&p),
            near_window: if p.near_window == 0 {
                64
            } else {
                p.near_window
            },
            near_streak: 0,
            near_close: 0,
            near_since: NOT_NEAR,
            last_dist: 0,
            dense_at: 0,
            near_at: 0,
            pos: 0,
            floor: 0,
            slack: 1.0,
            structured: false,
            text_known: false,
            says_nothing_new: true,
            says_little_new: true,
            near_prev: 0,
            found: Finding::default(),
            ngram: p.ngram,
            index_bits: p.index_bits,
            dense: p.dense as u32,
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
            + 4 * self.head.len()
            + 8 * self.cover.len()
            + 2 * self.near_head.len()
    }

    /// Index of the next symbol (the number pushed since construction or [`reset`](Self::reset)).
    pub fn pos(&self) -> u64 {
        self.pos
    }

    /// Forgets everything, as if new.
    ///
    /// Costs O(dense + window / 4), not O(window): the ring and the history keep stale
    /// symbols, which are harmless, since every comparison is bounded by `floor`. The n-gram
    /// index is cleared: positions start again from 0, so an n-gram of the old stream would
    /// read as seen a moment ago, and coverage counts such a tagged hit without checking the
    /// symbols (a reset guard warned of a near loop made of the old stream's n-grams). The
    /// 4-gram table may keep its entries: a hit there counts only once the symbols at its
    /// distance match, in this stream's ring, and this stream would have overwritten it then.
    pub fn reset(&mut self) {
        self.head.fill(0);
        self.pos = 0;
        self.dense_at = 0;
        self.near_at = 0;
        self.structured = false;
        self.text_known = false;
        self.forget();
    }

    /// Makes this engine a copy of `src`, an engine built from the same parameters, without
    /// allocating: a checkpoint's save and restore.
    pub fn copy_from(&mut self, src: &Engine) {
        self.copy_scalars_from(src);
        // The rings and tables `copy_scalars_from` leaves alone (its `skip` list).
        self.syms.copy_from_slice(&src.syms);
        self.head.copy_from_slice(&src.head);
        self.near_head.copy_from_slice(&src.near_head);
        self.hist.copy_from_slice(&src.hist);
        self.warn_need.copy_from_slice(&src.warn_need);
        self.halt_need.copy_from_slice(&src.halt_need);
        self.any_need.copy_from_slice(&src.any_need);
        self.p.clone_from(&src.p);
    }

    /// Makes this engine's scalars, coverage and dense runs a copy of `src`'s (an engine of the
    /// same parameters, or one [`hollow`](Self::hollow)ed from it), leaving its rings and tables
    /// alone: what a speculative checkpoint keeps of each drafted push (`src/journal.rs` keeps
    /// the rest). Allocates nothing.
    pub fn copy_scalars_from(&mut self, src: &Engine) {
        self.cover.copy_from_slice(&src.cover);
        self.runs.copy_from_slice(&src.runs);
        copy_fields!(
            self,
            src,
            [
                pos,
                floor,
                next_base,
                roll_out,
                ncands,
                cover_sum,
                near_alert,
                last_dist,
                ngram,
                index_bits,
                dense,
                near_window,
                near_at,
                dense_at,
                near_since,
                cands,
                near_streak,
                near_close,
                slack,
                structured,
                text_known,
                says_nothing_new,
                says_little_new,
                near_prev,
                found,
            ],
            // Copied by `copy_from` (cover and runs above).
            skip [syms, head, cover, near_head, p, hist, runs, warn_need, halt_need, any_need]
        );
    }

    /// A copy of this engine without its rings and tables, to hold
    /// [`copy_scalars_from`](Self::copy_scalars_from)'s copies. Allocates.
    pub fn hollow(&self) -> Engine {
        Engine {
            syms: Box::default(),
            head: Box::default(),
            near_head: Box::default(),
            hist: Box::default(),
            warn_need: Box::default(),
            halt_need: Box::default(),
            any_need: Box::default(),
            cover: self.cover.clone(),
            runs: self.runs.clone(),
            p: self.p.clone(),
            cands: self.cands,
            found: self.found,
            ..*self
        }
    }

    /// Notes in `journal` the slots that pushing `s` next will overwrite in the rings and
    /// tables: its place in the ring, its n-gram's index slot, its 4-gram's, and the dense
    /// history's two. Changes nothing.
    pub fn note_push(&self, s: u32, journal: &mut Journal, owner: Owner) {
        let at = self.pos as usize & (self.syms.len() - 1);
        journal.note(owner, Array::Syms, at, self.syms[at]);
        if self.index_bits > 0 {
            let (slot, _) = self.slot(self.next_gram(s));
            journal.note(owner, Array::Head, slot, self.head[slot]);
        }
        if !self.near_head.is_empty() {
            let g: [u32; NEAR_GRAM as usize] = std::array::from_fn(|t| {
                if t == 0 {
                    s
                } else {
                    self.sym(self.pos.wrapping_sub(t as u64))
                }
            });
            let slot = near::near_slot(&g);
            journal.note(owner, Array::Near, slot, self.near_head[slot] as u32);
        }
        if self.p.dense > 0 {
            let k = self.dense_at as usize;
            for at in [k, k + self.p.dense] {
                journal.note(owner, Array::Hist, at, self.hist[at]);
            }
        }
    }

    /// Notes in `journal` the ring slots [`forget`](Self::forget) will clear.
    pub fn note_forget(&self, journal: &mut Journal, owner: Owner) {
        for t in 1..=self.ngram as u64 {
            let at = self.pos.wrapping_sub(t) as usize & (self.syms.len() - 1);
            journal.note(owner, Array::Syms, at, self.syms[at]);
        }
    }

    /// Puts `old` back into slot `index` of `array`, as [`Journal::rewind`] asks.
    pub fn put(&mut self, array: Array, index: usize, old: u32) {
        match array {
            Array::Syms => self.syms[index] = old,
            Array::Head => self.head[index] = old,
            Array::Near => self.near_head[index] = old as u16,
            Array::Hist => self.hist[index] = old,
            Array::Ring | Array::Starts | Array::LineStarts => {
                debug_assert!(false, "{array:?} is not an engine's")
            }
        }
    }

    /// Every slot of the rings and tables, for tests that compare two engines.
    #[cfg(test)]
    pub fn arrays(&self) -> Vec<u64> {
        let mut all: Vec<u64> = self.syms.iter().map(|&x| x as u64).collect();
        all.extend(self.head.iter().map(|&x| x as u64));
        all.extend(self.near_head.iter().map(|&x| x as u64));
        all.extend(self.hist.iter().map(|&x| x as u64));
        all.extend(self.runs.iter().map(|&x| x as u64));
        all.extend(self.cover.iter().copied());
        all.extend([self.pos, self.floor, self.next_base, self.cover_sum as u64]);
        all
    }

    /// Forgets all evidence but keeps counting positions: nothing before now is compared with.
    pub fn forget(&mut self) {
        self.floor = self.pos;
        self.runs.fill(0);
        self.ncands = 0;
        // The n-gram of the first symbols after the floor counts the missing ones as zeros,
        // so the rolling hash never needs to know how many symbols it holds: the hash of n
        // zeros is 0, and so is the base of the next push.
        self.next_base = 0;
        for t in 1..=self.ngram as u64 {
            let at = self.pos.wrapping_sub(t) as usize & (self.syms.len() - 1);
            self.syms[at] = 0;
        }
        self.cover.fill(0);
        self.cover_sum = 0;
        self.near_streak = 0;
        self.near_close = 0;
        self.set_near_since(NOT_NEAR);
        self.last_dist = 0;
        self.near_prev = 0;
    }

    /// Takes the symbols from `from` to now out of the near-loop coverage (a heading line,
    /// known only once it ends). O(symbols since `from`, at most `near_window`).
    pub fn uncover(&mut self, from: u64) {
        let w = self.p.near_window as u64;
        if w == 0 {
            return;
        }
        let from = from.max(self.floor).max(self.pos.saturating_sub(w));
        for q in from..self.pos {
            // `near_at` is the slot of `pos`; slot of q is (pos - q) before it, modulo w.
            let back = (self.pos - q) % w;
            let b = ((self.near_at as u64 + w - back) % w) as usize;
            let (word, bit) = (b / 64, b % 64);
            let was = (self.cover[word] >> bit) & 1;
            self.cover[word] &= !(1 << bit);
            self.cover_sum -= was as u32;
        }
    }

    /// Masking with `len - 1` (a power of two) lets the compiler drop the bounds check.
    #[inline]
    fn sym(&self, at: u64) -> u32 {
        self.syms[at as usize & (self.syms.len() - 1)]
    }

    /// The symbol pushed `back` pushes ago (1 is the last), while the ring holds it.
    pub fn recent(&self, back: u64) -> Option<u32> {
        (back >= 1 && back <= self.pos - self.floor && back <= self.syms.len() as u64)
            .then(|| self.sym(self.pos - back))
    }

    /// The evidence behind the last push that returned more than `Continue`.
    pub fn finding(&self) -> Finding {
        self.found
    }

    /// Feeds one symbol and returns the level of the strongest evidence it completes; the
    /// evidence itself is then in [`finding`](Self::finding). Returning one byte keeps the
    /// common case (nothing found) free of struct copies.
    ///
    /// O(CANDIDATES) with no allocation (plus O(dense) when the dense pass is on); a newly
    /// adopted candidate costs one backward scan as long as its match.
    #[inline(always)]
    pub fn push(&mut self, s: u32) -> Action {
        if self.text_known {
            self.push_as::<true>(s)
        } else {
            self.push_as::<false>(s)
        }
    }

    /// [`push`](Self::push) for a stream whose text is not known (`text_known` and
    /// `structured` are false): a stream of token ids alone, or lines.
    #[inline(always)]
    pub fn push_plain(&mut self, s: u32) -> Action {
        debug_assert!(!self.text_known && !self.structured);
        self.push_as::<false>(s)
    }

    /// One push, compiled once for streams with text (`TEXT`, near-loop 4-grams and
    /// structured symbols) and once for streams without, which skips those checks.
    #[inline(always)]
    fn push_as<const TEXT: bool>(&mut self, s: u32) -> Action {
        let pos = self.pos;
        // Symbols at positions floor..pos may be compared with.
        let avail = pos - self.floor;
        // The dense pass only says whether it reached a threshold: evaluating finds which.
        let mut any = self.dense > 0 && self.dense_step(s, avail);
        let n = self.ngram as u64;
        let gram = self.next_gram(s);
        let syms = &mut self.syms[..];
        let ring = syms.len() - 1;
        syms[pos as usize & ring] = s;
        // The symbol leaving the next n-gram is in the ring now (it is `s` when n is 1).
        let leaving = syms[(pos + 1).wrapping_sub(n) as usize & ring] as u64;
        self.next_base = gram
            .wrapping_mul(ROLL)
            .wrapping_sub(leaving.wrapping_mul(self.roll_out));

        // The n-gram index, branch-free on the hit path: whether an n-gram was seen before is
        // close to a coin toss in real text, so branches here mispredict and cost more than
        // the work they skip.
        let mut covered = false;
        let mut dist = 0u64;
        // A loop of period 2 whose two n-grams share a slot: each pushes the other out before
        // it comes back, and the index would never see the loop. When the slot held the
        // n-gram the push before wrote and the symbol two back is this one, period 2 is
        // adopted as a candidate (if the dense pass does not track it already).
        let mut probe2 = false;
        if self.index_bits > 0 {
            let (slot, tag) = self.slot(gram);
            let here = (pos as u16).wrapping_add(1);
            let seen = std::mem::replace(&mut self.head[slot], tag | here as u32);
            dist = here.wrapping_sub(seen as u16) as u64;
            // A tagged hit: the same n-gram but for a 1 in 65536 chance. Coverage (which only
            // warns unless near_halt is set) counts it as it is; whatever can halt verifies the
            // symbols first. Both sightings must be whole n-grams in the ring, after the floor:
            // 1 <= dist <= min(window, avail + 1) - n, one unsigned comparison.
            let reach = (avail + 1).min(ring as u64 + 1).saturating_sub(n);
            covered = (seen != 0) & (seen & 0xffff_0000 == tag) & (dist.wrapping_sub(1) < reach);
            self.last_dist = if covered { dist as u32 } else { self.last_dist };
            // The other n-gram was written by the push before: a mismatch at distance 1.
            probe2 = (dist == 1) & !covered & (seen != 0);
            // Both n-grams whole after the floor, as a hit's must be.
            probe2 = probe2
                && avail > n
                && self.syms[(pos - 2) as usize & ring] == s
                && self.syms[(pos - 1) as usize & ring] != s;
        }

        // Indexed candidates, in one pass: a comparison each (a mismatch drops the candidate),
        // whether one reached its threshold, whether one already tracks the hit's distance.
        let mut tracked = false;
        if self.ncands > 0 {
            let mut ncands = self.ncands as usize;
            let mut i = 0;
            while i < ncands {
                let c = &mut self.cands[i];
                if self.syms[(pos - c.period as u64) as usize & ring] == s {
                    c.run += 1;
                    any |= c.run >= c.alert;
                    tracked |= c.period as u64 == dist || (probe2 && c.period == 2);
                    i += 1;
                } else {
                    ncands -= 1;
                    self.cands[i] = self.cands[ncands];
                }
            }
            self.ncands = ncands as u32;
        }

        if ((covered && dist > self.dense as u64) || (probe2 && self.dense < 2)) && !tracked {
            self.adopt(pos, avail, if covered { dist } else { 2 });
            // A candidate adopted just now may start at its threshold already.
            any |= self.cands[..self.ncands as usize]
                .iter()
                .any(|c| c.run >= c.alert);
        }

        // Coverage over the last near_window positions, updated without branches. With
        // coverage off the bits go to a word that never alerts (`near_alert` is MAX).
        if TEXT && !self.near_head.is_empty() {
            let near = self.near_gram(pos, avail);
            covered = near > 0;
            if covered & (near == self.near_prev as u64) {
                self.last_dist = near as u32;
            }
            self.near_prev = near as u16;
        }
        let b = self.near_at;
        self.near_at = if b + 1 == self.near_window { 0 } else { b + 1 };
        let b = b as usize;
        let counted = covered & !(TEXT && self.structured);
        let word = &mut self.cover[b / 64];
        let was = (*word >> (b % 64)) & 1;
        *word ^= (was ^ counted as u64) << (b % 64);
        self.cover_sum = self.cover_sum + counted as u32 - was as u32;
        any |= self.cover_sum >= self.near_alert;

        self.pos = pos + 1;
        if !any {
            return Action::Continue;
        }
        self.found = self.evaluate_all(pos);
        self.found.level
    }

    /// The n-gram index entry that pushing `s` next will read and write, for a caller that
    /// wants it in cache first (a pool advancing hundreds of guards, whose tables do not all
    /// fit in the core's cache). Reads the hot fields only; changes nothing.
    #[inline(always)]
    pub fn index_entry(&self, s: u32) -> *const u32 {
        let slot = if self.index_bits == 0 {
            0
        } else {
            self.slot(self.next_gram(s)).0
        };
        self.head.as_ptr().wrapping_add(slot)
    }

    /// The rolling hash of the n symbols ending with `s`, pushed next (a polynomial mod 2^64;
    /// [`slot`](Self::slot) mixes it).
    #[inline(always)]
    fn next_gram(&self, s: u32) -> u64 {
        self.next_base.wrapping_add(s as u64)
    }

    /// The n-gram table slot of `gram`, and the tag stored with it.
    #[inline(always)]
    fn slot(&self, gram: u64) -> (usize, u32) {
        let h = gram.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let slot = (h >> (64 - self.index_bits)) as usize & (self.head.len() - 1);
        (slot, (h >> 16) as u32 & 0xffff_0000)
    }

    /// The dense pass for symbol `s`: updates every dense run and says whether one reached its
    /// threshold. `hist[k..k + dense]` holds the symbols at pos - dense ..= pos - 1. The vector
    /// pass covers periods dense..=2 and leaves out the newest symbol, which the last push
    /// stored: a vector load over a store that recent cannot be forwarded and stalls.
    #[inline(never)]
    fn dense_step(&mut self, s: u32, avail: u64) -> bool {
        let dense = self.p.dense;
        let k = self.dense_at as usize;
        self.dense_at = if k + 1 == dense { 0 } else { k as u32 + 1 };
        let v = dense - 1;
        let mut alert = dense_pass(
            &mut self.runs[..v],
            &self.hist[k..k + v],
            &self.any_need[..v],
            s,
        );
        let r1 = if self.hist[k + v] == s {
            self.runs[v].wrapping_add(1)
        } else {
            0
        };
        self.runs[v] = r1;
        alert |= r1 >= self.any_need[v];
        if avail < dense as u64 {
            // Periods longer than the history compared against symbols that are not there.
            self.runs[..dense - avail as usize].fill(0);
            alert = self
                .runs
                .iter()
                .zip(self.any_need.iter())
                .any(|(r, n)| r >= n);
        }
        self.hist[k] = s;
        self.hist[k + dense] = s;
        alert
    }

    /// A tagged hit at a distance the dense pass does not cover and no candidate tracks:
    /// verifies the n-gram symbol by symbol and starts tracking `dist`, with its run extended
    /// backwards as far as it matches.
    #[inline(never)]
    fn adopt(&mut self, pos: u64, avail: u64, dist: u64) {
        let n = self.p.ngram as u64;
        if !(0..n).all(|t| self.sym(pos - t) == self.sym(pos - dist - t)) {
            return;
        }
        let mut run = n;
        let reach = (self.syms.len() as u64 - 1).min(avail);
        while run + dist <= reach && self.sym(pos - run) == self.sym(pos - run - dist) {
            run += 1;
        }
        let period = dist as u32;
        let alert = if period <= self.p.max_period {
            if period < self.p.min_period {
                u32::MAX
            } else {
                let halt = need(period, self.p.halt_copies, self.p.halt_span);
                if self.p.warn_copies > 0 {
                    halt.min(need(period, self.p.warn_copies, self.p.warn_span))
                } else {
                    halt
                }
            }
        } else {
            [self.p.long_warn_run, self.p.long_halt_run]
                .into_iter()
                .filter(|&r| r > 0)
                .min()
                .unwrap_or(u32::MAX)
        };
        let cand = Candidate {
            period,
            run: run as u32,
            alert,
        };
        if (self.ncands as usize) < CANDIDATES {
            self.cands[self.ncands as usize] = cand;
            self.ncands += 1;
        } else if let Some(weakest) = self.cands.iter_mut().min_by_key(|c| c.run) {
            if weakest.run < cand.run {
                *weakest = cand;
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn evaluate_all(&mut self, pos: u64) -> Finding {
        let mut best = Finding::default();
        if self.dense > 0 {
            best = self.dense_finding(pos);
        }
        for c in &self.cands[..self.ncands as usize] {
            if c.run >= c.alert {
                let f = self.candidate_finding(pos, c);
                if f.beats(&best) {
                    best = f;
                }
            }
        }
        if self.p.near_window > 0 {
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
                best =
                    self.loop_finding(pos, level, (dense - j) as u32, run as u32, self.p.loop_kind);
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
}

/// Updates every dense run with symbol `s` (the history slice holds, oldest first, the symbols
/// each period compares with) and says whether any run reached its threshold.
///
/// Kept out of line: compiled on its own, the loop becomes a few SSE2 operations per eight
/// periods; inlined into `push` it stayed scalar, at twice the cost of everything else.
#[inline(never)]
fn dense_pass(runs: &mut [i32], hist: &[u32], need: &[i32], s: u32) -> bool {
    let mut alert = 0i32;
    for ((rc, hc), nc) in runs
        .chunks_exact_mut(LANES)
        .zip(hist.chunks_exact(LANES))
        .zip(need.chunks_exact(LANES))
    {
        let rc: &mut [i32; LANES] = rc.try_into().expect("whole chunk");
        let hc: &[u32; LANES] = hc.try_into().expect("whole chunk");
        let nc: &[i32; LANES] = nc.try_into().expect("whole chunk");
        for i in 0..LANES {
            // Select-free (an all-ones mask when equal). Wraps only after 2^31 back-to-back
            // matches, and a negative run never alerts.
            let eq = -((hc[i] == s) as i32);
            let r = rc[i].wrapping_add(1) & eq;
            rc[i] = r;
            alert |= -((r >= nc[i]) as i32);
        }
    }
    alert != 0
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

    /// A loop of period 2 whose two n-grams share a slot of the index: each pushes the other
    /// out before it comes back, so the index never proposes the period. It is found all the
    /// same (the symbol two back is asked when the slot held the push before's n-gram).
    #[test]
    fn a_loop_of_period_two_whose_n_grams_share_a_slot_is_found() {
        let e = Engine::new(params(0));
        let gram = |s: &[u32]| {
            s.iter()
                .fold(0u64, |h, &x| h.wrapping_mul(ROLL).wrapping_add(x as u64))
        };
        let (a, b) = (1u32..)
            .flat_map(|a| (1u32..64).map(move |b| (a, b)))
            .find(|&(a, b)| a != b && e.slot(gram(&[a, b, a])).0 == e.slot(gram(&[b, a, b])).0)
            .expect("a pair of symbols whose n-grams share a slot");
        let mut e = Engine::new(params(0));
        let halt = (0..64).find(|&i| e.push(if i % 2 == 0 { a } else { b }) == Action::Halt);
        assert_eq!(halt, Some(5), "period 2, three copies: {a} {b}");
        assert_eq!(e.finding().period, 2);
    }

    /// Pushes `block` until the engine halts; returns the push index.
    fn halt_at(e: &mut Engine, prefix: &[u32], block: &[u32]) -> (u64, Finding) {
        for &s in prefix {
            assert_eq!(e.push(s), Action::Continue);
        }
        for i in 0..10_000 {
            if e.push(block[i % block.len()]) == Action::Halt {
                return (e.pos() - 1, e.finding());
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
        // each n-gram is always nearer than 12 and the index never proposes the period.
        let block = [1u32, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 2];
        // A span floor keeps the run of four 1s from counting as a loop of its own.
        let spanned = |dense| EngineParams {
            halt_span: 12,
            warn_span: 12,
            ..params(dense)
        };
        let mut e = Engine::new(spanned(16));
        let (at, f) = halt_at(&mut e, &[9], &block);
        assert_eq!((f.period, f.onset, at), (12, 1, 36));
        // Dense periods 1..=9 only (4 rounds up to one vector chunk): 12 is never found.
        let mut e = Engine::new(spanned(4));
        for &s in block.iter().cycle().take(120) {
            if e.push(s) != Action::Continue {
                assert_ne!(e.finding().period, 12);
            }
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
            assert_eq!(e.push(s), Action::Continue);
        }
    }

    #[test]
    fn the_index_finds_any_period_up_to_its_ngram() {
        // With the dense pass off, a period <= ngram is found whatever the block (its n-grams
        // are its rotations); this 18-block, whose every 8-gram occurs twice, needs the dense
        // pass.
        let indexed = |ngram| EngineParams {
            ngram,
            dense: 0,
            halt_span: 12,
            warn_span: 12,
            ..params(0)
        };
        for block in [&[1u32, 1, 2, 1, 2, 2, 2, 1][..], &[5, 5, 5, 6], &[7, 8]] {
            let mut e = Engine::new(indexed(8));
            let (_, f) = halt_at(&mut e, &[9], block);
            assert_eq!(f.period as usize, block.len());
        }
        let hard = [1u32, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 2];
        let mut e = Engine::new(indexed(8));
        for &s in hard.iter().cycle().take(90) {
            if e.push(s) != Action::Continue {
                assert_ne!(e.finding().period, 18);
            }
        }
        let mut e = Engine::new(EngineParams {
            dense: 24,
            ..indexed(8)
        });
        let (_, f) = halt_at(&mut e, &[9], &hard);
        assert_eq!(f.period, 18);
    }
}
