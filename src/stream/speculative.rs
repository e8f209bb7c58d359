//! Checkpoints for speculative decoding: a server feeds a guard the tokens a draft model
//! proposed, learns from the verifier which were rejected, and takes them back.
//!
//! [`StreamGuard::checkpoint`] marks where the drafts begin. Before each of the first
//! [`NOTED_PUSHES`] pushes after it, the guard keeps a copy of its scalars (counters, flags,
//! the line being read: about 2 KiB), and the push notes the old value of every slot it
//! overwrites in the rings and tables (`src/journal.rs`). [`StreamGuard::rollback`]`(n)` puts
//! back the slots the last `n` pushes overwrote, newest first, and the scalars as they were
//! before them: it costs what the `n` rolled-back pushes wrote, never the pushes kept, and the
//! guard then answers exactly as a guard fed only the accepted tokens, however the drafts,
//! rollbacks and commits were interleaved (`tests/speculative.rs` checks it on every detector).
//!
//! A push that cannot be noted (past [`NOTED_PUSHES`], or one long enough to fill the journal)
//! copies the whole guard first, once a checkpoint; a rollback to a push after that copy
//! restores it and pushes the kept drafts again from a log of [`MAX_DRAFTS`] pushes and
//! [`DRAFT_BYTES`] bytes, as every rollback did before the journal. Nothing is allocated after
//! the first checkpoint, and a guard that never drafts pays nothing: the noting is done by the
//! pushes of a guard holding a checkpoint, outside the detectors' loops.

use std::fmt;

use super::StreamGuard;
use crate::journal::{Array, Journal, Owner};
use crate::verdict::Verdict;

/// Pushes after a checkpoint that a rollback can keep: a verification step drafts far fewer.
pub const MAX_DRAFTS: usize = 64;
/// Bytes of pieces and text after a checkpoint that a rollback can keep.
pub const DRAFT_BYTES: usize = 4096;
/// Pushes after a checkpoint whose writes are noted, so that a rollback among them costs only
/// what the rolled-back pushes wrote: more than a verification step drafts (llama.cpp's
/// server drafts at most 16 by default, vLLM's methods a handful).
pub const NOTED_PUSHES: usize = 16;
/// Writes the journal holds: a drafted token of a few bytes overwrites about a dozen slots.
const JOURNAL_WRITES: usize = 4096;

/// Room in the journal a push of `len` bytes may need at most. A symbol notes six slots (its
/// ring slot, its start, its n-gram's and its 4-gram's index slots, two of the dense history);
/// each byte may end a word (a stream symbol) and a line (a symbol of the line engine and the
/// line's start), and complete a breaker and an end-of-reasoning marker (each clearing up to
/// `MAX_NGRAM` ring slots of both engines); and the push's own token, or a word held from the
/// last push, is a symbol more.
fn room_for(len: usize) -> usize {
    let symbol = 6;
    let forget = 2 * crate::config::MAX_NGRAM as usize;
    let byte = 1 + symbol + (symbol + 1) + 2 * forget;
    byte * (len + 2)
}

/// Why a rollback did nothing. The guard is left as it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RollbackError {
    /// No checkpoint is held (none was made, or a commit or reset ended it).
    NoCheckpoint,
    /// More pushes were asked back than were made since the checkpoint.
    TooMany {
        /// Pushes asked back.
        asked: usize,
        /// Pushes since the checkpoint.
        drafted: usize,
    },
    /// The pushes that would stay are not all held: more than [`MAX_DRAFTS`] pushes or
    /// [`DRAFT_BYTES`] bytes came after the checkpoint.
    NotHeld {
        /// Pushes that would stay.
        keep: usize,
        /// Pushes held, from the checkpoint on.
        held: usize,
    },
}

impl fmt::Display for RollbackError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match *self {
            RollbackError::NoCheckpoint => write!(f, "n: no checkpoint to roll back to"),
            RollbackError::TooMany { asked, drafted } => write!(
                f,
                "n: {asked} pushes asked back, {drafted} made since the checkpoint"
            ),
            RollbackError::NotHeld { keep, held } => write!(
                f,
                "n: {keep} pushes would stay but only the first {held} after the checkpoint \
                 are held (at most {MAX_DRAFTS} pushes and {DRAFT_BYTES} bytes)"
            ),
        }
    }
}

impl std::error::Error for RollbackError {}

/// What kind of push a log entry replays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Push {
    /// `push_token(id, piece)`; the piece is the entry's bytes, if it has any.
    Token(u32),
    /// `push_text(bytes)`.
    Text,
    /// `finish_text()`.
    #[default]
    Finish,
}

/// One recorded push: its kind and where its bytes lie in the log.
#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    push: Push,
    /// Whether the push carried bytes (a token may have no piece, or an empty one).
    bytes: bool,
    end: u16,
}

/// What a checkpoint holds: the pushes since, the copies of the scalars before each noted one,
/// and the journal of their writes.
#[derive(Clone)]
pub(crate) struct Drafts {
    active: bool,
    /// Pushes since the checkpoint.
    pushes: usize,
    /// How many of them, from the first, the log holds (all but after an overflow).
    held: usize,
    log: [Entry; MAX_DRAFTS],
    bytes: [u8; DRAFT_BYTES],
    /// How many of the pushes, from the first, are noted (at most [`NOTED_PUSHES`]).
    noted: usize,
    /// The guard's scalars before each noted push (`before[i]` before push `i`), in guards
    /// without rings or tables.
    before: Box<[StreamGuard]>,
    /// The journal's length before each noted push.
    marks: [usize; NOTED_PUSHES + 1],
    journal: Journal,
    /// The whole guard after the `noted` pushes, when more were made.
    saved: StreamGuard,
}

impl Drafts {
    /// Allocates a checkpoint's memory, for drafts pushed to `guard` (which holds none).
    fn new(guard: &StreamGuard) -> Drafts {
        let hollow = guard.hollow();
        Drafts {
            active: false,
            pushes: 0,
            held: 0,
            log: [Entry::default(); MAX_DRAFTS],
            bytes: [0; DRAFT_BYTES],
            noted: 0,
            before: vec![hollow; NOTED_PUSHES + 1].into_boxed_slice(),
            marks: [0; NOTED_PUSHES + 1],
            journal: Journal::new(JOURNAL_WRITES),
            saved: guard.clone(),
        }
    }

    pub fn memory_usage(&self) -> usize {
        std::mem::size_of::<Drafts>() - std::mem::size_of::<StreamGuard>()
            + self.saved.memory_usage()
            + self
                .before
                .iter()
                .map(StreamGuard::memory_usage)
                .sum::<usize>()
            + self.journal.memory_usage()
    }

    /// Appends a push, unless an earlier one did not fit (the held pushes are a prefix).
    fn record(&mut self, push: Push, bytes: Option<&[u8]>) {
        let start = self.end(self.held);
        if self.held == self.pushes && self.held < MAX_DRAFTS {
            let len = bytes.map_or(0, <[u8]>::len);
            if len <= DRAFT_BYTES - start {
                self.bytes[start..start + len].copy_from_slice(bytes.unwrap_or_default());
                self.log[self.held] = Entry {
                    push,
                    bytes: bytes.is_some(),
                    end: (start + len) as u16,
                };
                self.held += 1;
            }
        }
        self.pushes += 1;
    }

    /// Where the bytes of the first `n` held pushes end.
    fn end(&self, n: usize) -> usize {
        n.checked_sub(1).map_or(0, |k| self.log[k].end as usize)
    }
}

/// The journal, while the push being made is noted: every push so far is noted (the one being
/// made counts: `before_draft` has recorded it), so the pushes' engine pushes note their
/// writes. Asked only during a push.
#[inline]
pub(super) fn noting(drafts: &mut Option<Box<Drafts>>) -> Option<&mut Journal> {
    match drafts.as_deref_mut() {
        Some(d) if d.active && d.noted > 0 && d.noted == d.pushes => Some(&mut d.journal),
        _ => None,
    }
}

impl StreamGuard {
    /// Marks the guard's state, so that pushes from now on can be taken back with
    /// [`rollback`](Self::rollback); a checkpoint already held is replaced (its pushes are kept).
    ///
    /// The first checkpoint of a guard allocates what drafting needs (about 96 KiB at the
    /// default settings: the copies of the scalars before the first [`NOTED_PUSHES`] pushes,
    /// the journal of their writes, a whole copy of the guard for pushes past them and a log
    /// of [`MAX_DRAFTS`] pushes and [`DRAFT_BYTES`] bytes); later ones allocate nothing and
    /// copy nothing. While a checkpoint is held, pushes take the general path and keep what a
    /// rollback needs.
    pub fn checkpoint(&mut self) {
        self.plain = false;
        let mut d = match self.drafts.take() {
            Some(d) => d,
            None => Box::new(Drafts::new(self)),
        };
        d.active = true;
        d.pushes = 0;
        d.held = 0;
        d.noted = 0;
        d.journal.clear();
        self.drafts = Some(d);
    }

    /// Takes back the last `n` pushes since the checkpoint: the guard answers from then on as
    /// if it had been fed only the ones before them (its verdict, evidence, statistics and
    /// every detector's state). The checkpoint stays, with the pushes kept. No callback fires.
    ///
    /// Among the first [`NOTED_PUSHES`] pushes, costs what the `n` rolled-back pushes wrote and
    /// one copy of the guard's scalars; a rollback to a push past them costs a copy of the
    /// guard and a push for each kept one past them. Never allocates. Returns the verdict of
    /// the last push kept (or the one at the checkpoint).
    pub fn rollback(&mut self, n: usize) -> Result<Verdict, RollbackError> {
        let d = match self.drafts.as_deref() {
            Some(d) if d.active => d,
            _ => return Err(RollbackError::NoCheckpoint),
        };
        if n > d.pushes {
            return Err(RollbackError::TooMany {
                asked: n,
                drafted: d.pushes,
            });
        }
        let keep = d.pushes - n;
        if keep > d.held {
            return Err(RollbackError::NotHeld { keep, held: d.held });
        }
        if n == 0 {
            return Ok(self.verdict);
        }
        debug_assert!(!d.journal.lost(), "room_for bounds what a push notes");
        if d.journal.lost() && keep < d.noted {
            // Never expected: a push noted more than `room_for` allows, so the guard before it
            // cannot be put back.
            return Err(RollbackError::NotHeld { keep, held: 0 });
        }
        // Out of the guard while it changes, so that pushes read again are not recorded.
        let mut d = self.drafts.take().expect("checked above");
        if d.pushes > d.noted {
            self.copy_state_from(&d.saved);
        }
        if keep >= d.noted {
            let mut start = d.end(d.noted);
            for e in &d.log[d.noted..keep] {
                let end = e.end as usize;
                let bytes = e.bytes.then_some(&d.bytes[start..end]);
                match e.push {
                    Push::Token(id) => self.push_token(id, bytes),
                    Push::Text => self.push_text(bytes.unwrap_or_default()),
                    Push::Finish => self.finish_text(),
                };
                start = end;
            }
        } else {
            let (engine, text) = (&mut self.engine, &mut self.text);
            d.journal.rewind(d.marks[keep], |owner, array, at, old| {
                match (owner, array) {
                    (Owner::Stream, Array::Syms | Array::Head | Array::Near | Array::Hist) => {
                        engine.put(array, at, old)
                    }
                    _ => text.put(owner, array, at, old),
                }
            });
            self.copy_scalars_from(&d.before[keep]);
            d.noted = keep;
        }
        d.pushes = keep;
        d.held = keep;
        self.drafts = Some(d);
        self.plain = false;
        Ok(self.verdict)
    }

    /// Ends the checkpoint and keeps every push since: pushes stop recording. O(1).
    pub fn commit(&mut self) {
        self.end_drafts();
    }

    /// Pushes since the checkpoint held, or `None` without one.
    pub fn drafted(&self) -> Option<usize> {
        self.drafts
            .as_deref()
            .filter(|d| d.active)
            .map(|d| d.pushes)
    }

    /// Whether a checkpoint is held: pushes record themselves.
    #[inline]
    pub(super) fn drafting(&self) -> bool {
        self.drafts.as_deref().is_some_and(|d| d.active)
    }

    /// Keeps what a rollback needs of a push about to be made while a checkpoint is held
    /// (`bytes`: its piece or text): the push in the log, and, while the pushes so far are
    /// noted and the journal has room, the scalars before it and the ring slots its bytes
    /// reach; otherwise, at the first push not noted, a whole copy of the guard.
    #[cold]
    pub(super) fn before_draft(&mut self, push: Push, bytes: Option<&[u8]>) {
        let Some(mut d) = self.drafts.take() else {
            return;
        };
        let len = bytes.map_or(0, <[u8]>::len);
        if d.pushes == d.noted {
            if d.noted < NOTED_PUSHES && d.journal.room() >= room_for(len) {
                d.before[d.noted].copy_scalars_from(self);
                d.marks[d.noted] = d.journal.len();
                // A token pushes one symbol, its id, unless the stream is text (its piece is
                // then read as text): text may end a word at each byte, and a word held from
                // the last push may end too.
                let symbols = match push {
                    Push::Token(_) if self.mode != super::Mode::Text => 1,
                    _ => len as u64 + 2,
                };
                let bytes = bytes.unwrap_or_default();
                self.text
                    .note_push(bytes, symbols, self.engine.pos(), &mut d.journal);
                d.noted += 1;
            } else {
                d.saved.copy_state_from(self);
            }
        }
        d.record(push, bytes);
        self.drafts = Some(d);
    }

    /// Drops the checkpoint (the copy stays allocated for the next one).
    pub(super) fn end_drafts(&mut self) {
        if let Some(d) = self.drafts.as_deref_mut() {
            d.active = false;
        }
        self.plain = self.plain_now();
    }

    /// Makes this guard's scalars a copy of `src`'s (a guard of the same configuration, or one
    /// [`hollow`](Self::hollow)ed from it), leaving the rings and tables alone. Allocates
    /// nothing.
    fn copy_scalars_from(&mut self, src: &StreamGuard) {
        self.engine.copy_scalars_from(&src.engine);
        self.text.copy_scalars_from(&src.text);
        let held = src.evidence_len as usize;
        self.evidence[..held].copy_from_slice(&src.evidence[..held]);
        copy_fields!(self, src, [
            verdict, mode, has_text, plain, url, warn_streak, line_sym, stats, evidence_len,
            evidence_key, exempted, reasoning,
        ], skip [engine, text, limits, config, evidence, drafts]);
    }

    /// A copy of this guard's scalars in a guard without rings or tables (nor checkpoint), to
    /// hold [`copy_scalars_from`](Self::copy_scalars_from)'s copies. Allocates.
    fn hollow(&self) -> StreamGuard {
        StreamGuard {
            engine: self.engine.hollow(),
            text: self.text.hollow(),
            config: self.config.clone(),
            evidence: self.evidence.clone(),
            drafts: None,
            ..*self
        }
    }

    /// Makes this guard's state a copy of `src`'s, a guard of the same configuration, without
    /// allocating; the checkpoint is left alone.
    fn copy_state_from(&mut self, src: &StreamGuard) {
        self.engine.copy_from(&src.engine);
        self.text.copy_from(&src.text);
        copy_fields!(self, src, [
            verdict, mode, has_text, plain, url, warn_streak, line_sym, stats, limits, config,
            evidence, evidence_len, evidence_key, exempted, reasoning,
        ], skip [engine, text, drafts]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{StreamConfig, StreamSettings};
    use crate::stream::Verbosity;

    /// A push of a small alphabet, so that loops of every kind form, and lines and breakers.
    fn push(g: &mut StreamGuard, text: bool, r: u64) {
        const PIECES: [&str; 10] = [
            " the",
            " cat",
            "\n",
            "    x = f(1)\n",
            "!!!!",
            "<think>",
            "</think>",
            " sat",
            "0",
            "\n\n",
        ];
        // Now and then a piece many times over: a push of up to a few hundred bytes, dense
        // with symbols, lines or breakers, near what the journal's room allows.
        let one = PIECES[(r % PIECES.len() as u64) as usize];
        let piece = one.repeat(if r % 7 == 0 {
            (r >> 16) as usize % 40
        } else {
            1
        });
        let piece = piece.as_bytes();
        match (text, r % 11) {
            (true, 10) => g.finish_text(),
            (true, _) => g.push_text(piece),
            (false, 10) => g.push_token((r >> 8) as u32 % 5, None),
            (false, _) => g.push_token((r % 10) as u32, Some(piece)),
        };
    }

    /// Everything in a guard: what a caller reads, and every slot of its rings and tables.
    fn state(g: &StreamGuard) -> (String, Vec<u64>, Vec<u64>) {
        let mut d = String::new();
        g.describe(Verbosity::Full, &mut d).unwrap();
        d.push_str(&format!("{:?} {:?}", g.stats(), g.repeated_text()));
        (d, g.engine.arrays(), g.text.arrays())
    }

    /// Random drafts, rollbacks and commits, each rollback compared slot by slot with a guard
    /// fed only the pushes kept: what the journal misses shows here first, before it changes
    /// a verdict.
    #[test]
    fn a_rollback_puts_back_every_slot_the_rolled_back_pushes_wrote() {
        let settings = StreamSettings {
            reasoning_start: "<think>".into(),
            reasoning_end: "</think>".into(),
            breakers: vec!["\n\n".into()],
            ..Default::default()
        };
        let dense = StreamSettings {
            dense_periods: 16,
            ..settings.clone()
        };
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut compared = 0;
        for settings in [settings, dense] {
            let config = StreamConfig::new(&settings).unwrap();
            for case in 0..300 {
                let text = case % 2 == 1;
                let mut g = StreamGuard::new(&config);
                let mut kept: Vec<u64> = Vec::new();
                let mut mark: Option<usize> = None;
                for _ in 0..(next() % 200) {
                    let r = next();
                    match r % 16 {
                        0 => {
                            g.checkpoint();
                            mark = Some(kept.len());
                        }
                        1 => {
                            g.commit();
                            mark = None;
                        }
                        2 | 3 => {
                            let Some(m) = mark else { continue };
                            let n = ((r >> 8) as usize % 24).min(kept.len() - m);
                            if g.rollback(n).is_err() {
                                continue;
                            }
                            kept.truncate(kept.len() - n);
                            let mut reference = StreamGuard::new(&config);
                            for &k in &kept {
                                push(&mut reference, text, k);
                            }
                            assert_eq!(state(&g), state(&reference), "case {case}");
                            compared += 1;
                        }
                        _ => {
                            let p = next();
                            push(&mut g, text, p);
                            kept.push(p);
                            let lost = g.drafts.as_ref().is_some_and(|d| d.journal.lost());
                            assert!(!lost, "case {case}: a push noted more than room_for");
                        }
                    }
                }
            }
        }
        assert!(compared > 1000, "{compared} rollbacks compared");
    }
}
