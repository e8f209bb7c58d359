//! Checkpoints for speculative decoding: a server feeds a guard the tokens a draft model
//! proposed, learns from the verifier which were rejected, and takes them back.
//!
//! [`StreamGuard::checkpoint`] saves the guard's whole state into a copy allocated once, by the
//! first checkpoint, and from then on records every push (ids, pieces, text) in a fixed log.
//! [`StreamGuard::rollback`]`(n)` restores the saved state and reads the pushes it keeps again:
//! the guard then answers exactly as a guard fed only the accepted tokens, however the drafts,
//! rollbacks and commits were interleaved (`tests/speculative.rs` checks it on every detector).
//! A save or a restore is one copy of the guard's memory, never an allocation.
//!
//! Why a copy and not an undo log of every write: each of the guard's detectors writes its own
//! rings and tables on every symbol, and logging them would put a test on every store of the
//! per-token path for the servers that never draft. One copy per verification step costs what
//! a few dozen tokens' pushes cost (README, *Speculative decoding*), and nothing otherwise.

use std::fmt;

use super::StreamGuard;
use crate::verdict::Verdict;

/// Pushes after a checkpoint that a rollback can keep: a verification step drafts far fewer.
pub const MAX_DRAFTS: usize = 64;
/// Bytes of pieces and text after a checkpoint that a rollback can keep.
pub const DRAFT_BYTES: usize = 4096;

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

/// The state at the checkpoint and the pushes since.
#[derive(Clone)]
pub(crate) struct Drafts {
    active: bool,
    /// The guard as it was at the checkpoint (with no drafts of its own).
    saved: StreamGuard,
    /// Pushes since the checkpoint.
    pushes: usize,
    /// How many of them, from the first, the log holds (all but after an overflow).
    held: usize,
    log: [Entry; MAX_DRAFTS],
    bytes: [u8; DRAFT_BYTES],
}

impl Drafts {
    pub fn memory_usage(&self) -> usize {
        std::mem::size_of::<Drafts>() - std::mem::size_of::<StreamGuard>()
            + self.saved.memory_usage()
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

impl StreamGuard {
    /// Saves the guard's state, so that pushes from now on can be taken back with
    /// [`rollback`](Self::rollback); a checkpoint already held is replaced (its pushes are kept).
    ///
    /// The first checkpoint of a guard allocates a copy of it and a log for [`MAX_DRAFTS`]
    /// pushes and [`DRAFT_BYTES`] bytes (about 21 KiB at the default settings); later ones copy
    /// the state into it, allocate nothing, and cost one copy of the guard's memory. While a
    /// checkpoint is held, pushes record themselves in the log and take the general path.
    pub fn checkpoint(&mut self) {
        self.plain = false;
        let mut d = match self.drafts.take() {
            Some(mut d) => {
                d.saved.copy_state_from(self);
                d
            }
            None => Box::new(Drafts {
                active: false,
                saved: self.clone(),
                pushes: 0,
                held: 0,
                log: [Entry::default(); MAX_DRAFTS],
                bytes: [0; DRAFT_BYTES],
            }),
        };
        d.active = true;
        d.pushes = 0;
        d.held = 0;
        self.drafts = Some(d);
    }

    /// Takes back the last `n` pushes since the checkpoint: the guard answers from then on as
    /// if it had been fed only the ones before them (its verdict, evidence, statistics and
    /// every detector's state). The checkpoint stays, with the pushes kept. No callback fires.
    ///
    /// Costs one copy of the guard's memory and a push for each push kept; never allocates.
    /// Returns the verdict of the last push kept (or the one at the checkpoint).
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
        // Out of the guard while its pushes are read again, so that they are not recorded twice.
        let mut d = self.drafts.take().expect("checked above");
        self.copy_state_from(&d.saved);
        let mut start = 0;
        for e in &d.log[..keep] {
            let end = e.end as usize;
            let bytes = e.bytes.then_some(&d.bytes[start..end]);
            match e.push {
                Push::Token(id) => self.push_token(id, bytes),
                Push::Text => self.push_text(bytes.unwrap_or_default()),
                Push::Finish => self.finish_text(),
            };
            start = end;
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

    /// Records a push made while a checkpoint is held.
    #[cold]
    pub(super) fn record(&mut self, push: Push, bytes: Option<&[u8]>) {
        if let Some(d) = self.drafts.as_deref_mut() {
            d.record(push, bytes);
        }
    }

    /// Drops the checkpoint (the copy stays allocated for the next one).
    pub(super) fn end_drafts(&mut self) {
        if let Some(d) = self.drafts.as_deref_mut() {
            d.active = false;
        }
        self.plain = self.plain_now();
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
