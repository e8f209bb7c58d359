//! [`StreamGuard`]: one per generated sequence, fed a token (or a chunk of text) at a time.

use std::fmt;

use crate::config::StreamConfig;
use crate::engine::{Engine, EngineParams, Finding};
use crate::journal::{Journal, Owner};
use crate::text::{in_url, CharLimits, Event, TextFinding, TextState, Url, STARTS, TEXT_RING};
use crate::verdict::{Action, LoopKind, Unit, Verdict};

mod judge;
mod reasoning;
mod speculative;
mod unrolled;

pub(crate) use reasoning::Markers;

pub use speculative::{RollbackError, DRAFT_BYTES, MAX_DRAFTS, NOTED_PUSHES};

/// Bytes of the repeated block kept as evidence.
pub const EVIDENCE_BYTES: usize = 256;

/// The opening symbols of a bullet line that never count towards a near loop (see
/// `line_prefix`).
const LINE_PREFIX: u32 = 4;

/// Symbols of a near loop without a period shown as its evidence.
const NEAR_EVIDENCE: u32 = 48;

/// After a halt inside a piece, the rest of it is still read when it is at most this long.
const PIECE_TAIL: usize = 4096;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Nothing pushed yet.
    Fresh,
    /// Symbols are token ids; pieces are text beside them.
    Tokens,
    /// Symbols are words cut from the text (each digit and line break one of its own).
    Text,
}

/// How much [`StreamGuard::describe`] says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Verbosity {
    /// One short line for logs: `halt: exact_loop period 7 x5.7`.
    #[default]
    Brief,
    /// One sentence for a person, with the repeated text.
    Summary,
    /// Every field, one `key: value` a line.
    Full,
}

/// Counters of one stream since construction or the last reset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamStats {
    /// Symbols pushed: token ids, or for text-only streams words, digits and line breaks.
    pub symbols: u64,
    /// Bytes of text pushed (pieces or text).
    pub bytes: u64,
    /// Pushes that answered `Warn`.
    pub warnings: u64,
    /// Symbol index of the first warning.
    pub first_warn_at: Option<u64>,
    /// Symbol index of the halt.
    pub halted_at: Option<u64>,
}

/// Watches one generated sequence and says when it degenerates into repetition.
///
/// Build one per sequence from a shared [`StreamConfig`], then push every generated token
/// with [`push_token`](Self::push_token) (or, for streams without ids, every chunk of text with
/// [`push_text`](Self::push_text)). Each push returns a [`Verdict`]. After a `Halt` every push
/// returns the same halt until [`reset`](Self::reset).
///
/// # Resource usage
///
/// All memory is allocated in [`new`](Self::new) (16 KiB at the default settings, see
/// [`memory_usage`](Self::memory_usage)); a push allocates nothing, takes no lock and costs a
/// bounded amount of work per token or byte.
///
/// # Thread safety
///
/// A guard is `Send` and `Sync` but all pushes take `&mut self`: move it between threads freely,
/// use it from one at a time. [`Clone`] copies the whole state (for forked or resumed sequences).
#[derive(Clone)]
// Hot fields first (see `Engine`): the verdict, mode and counters a push touches, then the
// engine, whose own hot fields come first.
#[repr(C)]
pub struct StreamGuard {
    verdict: Verdict,
    mode: Mode,
    /// Some text was pushed (pieces or chunks): the token fast path needs to know.
    has_text: bool,
    /// A push of an id without a piece may go straight to the engine: a token stream with no
    /// text, not halted (see [`plain_now`](Self::plain_now)). One flag to test per token
    /// instead of three: set when a token stream begins, cleared when text or a halt comes.
    plain: bool,
    /// Where the pieces, or the words of a text, stand in a web address (see [`in_url`]).
    url: Url,
    /// Bytes of `evidence` held (at most `EVIDENCE_BYTES`); here, where it fills padding.
    evidence_len: u16,
    /// Where the stream stands among the reasoning markers (see [`reasoning`]).
    reasoning: reasoning::Reasoning,
    warn_streak: u32,
    /// The first stream symbol of the line being read (low 32 bits).
    line_sym: u32,
    stats: StreamStats,
    engine: Engine,
    text: TextState,
    limits: CharLimits,
    config: StreamConfig,
    evidence: Box<[u8]>,
    /// (kind, period, onset) of the evidence held, to copy it once per loop rather than per push.
    evidence_key: (LoopKind, u32, u64),
    /// The last finding an exempt pattern excused, to not search again for the same loop.
    exempted: (LoopKind, u32, u64),
    /// The state at the last checkpoint and the pushes since (see [`checkpoint`](Self::checkpoint)):
    /// allocated by the first checkpoint.
    drafts: Option<Box<speculative::Drafts>>,
}

impl StreamGuard {
    /// A guard for one new sequence. Allocates all the memory it will use.
    pub fn new(config: &StreamConfig) -> StreamGuard {
        let s = &config.inner.settings;
        let near = s.near_window as usize;
        // A slot per four held symbols: loops refresh their n-grams every period, so a small
        // table still proposes their periods within a few positions, and it keeps a guard
        // under 16 KiB.
        let index_bits = (s.window / 4).max(64).trailing_zeros();
        let engine = Engine::new(EngineParams {
            window: s.window,
            dense: s.dense_periods as usize,
            ngram: s.ngram,
            min_period: s.min_period,
            max_period: s.max_period,
            halt_copies: s.halt_copies,
            halt_span: s.halt_span,
            // A warning needs at most the copies a halt needs (`halt_copies` 2 with the
            // default 3 warns at two).
            warn_copies: s.warn_copies.min(s.halt_copies),
            warn_span: s.warn_span,
            long_warn_run: s.long_warn_run,
            long_halt_run: s.long_halt_run,
            near_window: s.near_window,
            near_warn: s.near_warn,
            near_halt: s.near_halt,
            near_patience: s.near_patience,
            index_bits: if s.max_period as usize <= s.dense_periods as usize
                && s.long_warn_run == 0
                && s.long_halt_run == 0
                && near == 0
            {
                0
            } else {
                index_bits
            },
            loop_kind: LoopKind::ExactLoop,
        });
        let text = TextState::new(
            s.line_warn_copies,
            s.line_halt_copies,
            s.line_min_letters,
            (s.template_warn, s.template_budget),
            config.inner.breakers.as_ref(),
        );
        StreamGuard {
            config: config.clone(),
            engine,
            text,
            limits: CharLimits::new(s.char_run_warn, s.char_run_halt, s.separator_run_halt),
            mode: Mode::Fresh,
            has_text: false,
            plain: false,
            verdict: Verdict::default(),
            evidence: vec![0; EVIDENCE_BYTES].into_boxed_slice(),
            url: Url::Out,
            evidence_len: 0,
            evidence_key: (LoopKind::None, 0, 0),
            exempted: (LoopKind::None, 0, 0),
            warn_streak: 0,
            line_sym: 0,
            stats: StreamStats::default(),
            drafts: None,
            reasoning: config
                .inner
                .reasoning
                .as_ref()
                .map_or(reasoning::Reasoning::default(), Markers::initial),
        }
    }

    /// The configuration this guard was built with.
    pub fn config(&self) -> &StreamConfig {
        &self.config
    }

    /// Pushes one generated token id, with its text piece when known.
    ///
    /// The piece may be empty, partial UTF-8 or invalid UTF-8; it feeds the character, line
    /// and structure detectors and the evidence text. On a text-only stream (one that began
    /// with [`push_text`](Self::push_text)) the id is ignored and the piece is pushed as text.
    #[inline]
    pub fn push_token(&mut self, id: u32, piece: Option<&[u8]>) -> Verdict {
        // An id without text on a stream that has none, not halted: the engine alone, inlined
        // into the caller. Everything else goes through the larger out-of-line path, whose
        // register saves would otherwise cost a fifth of this one.
        if piece.is_none() & self.plain {
            return self.push_plain_id(id).0;
        }
        self.push_token_slow(id, piece)
    }

    /// [`push_token`](Self::push_token) of an id without a piece, for a caller that acts when
    /// the action changes (callbacks): calls `changed` with the guard and the action before
    /// the push when it differs from the one returned. A push that answers `Continue` on the
    /// inline path calls nothing (nothing starts then), so it costs what `push_token` does.
    #[inline]
    pub(crate) fn push_id_then(&mut self, id: u32, changed: impl FnOnce(&Self, Action)) -> Action {
        let (action, before) = if self.plain {
            match self.push_plain_id(id) {
                (v, Some(before)) => (v.action, before),
                (_, None) => return Action::Continue,
            }
        } else {
            let before = self.verdict.action;
            (self.push_token_slow(id, None).action, before)
        };
        if action != before {
            changed(self, before);
        }
        action
    }

    /// An id without a piece on a plain stream: the engine alone, inlined into the caller.
    /// Returns the verdict and, unless the push was quiet (`Continue` with nothing to decide),
    /// the action before it.
    #[inline(always)]
    fn push_plain_id(&mut self, id: u32) -> (Verdict, Option<Action>) {
        debug_assert!(self.plain_now());
        let sym = self.engine.pos();
        if self.engine.push_plain(id) == Action::Continue {
            return (self.quiet(sym), None);
        }
        let before = self.verdict.action;
        let v = self.decide(self.engine.finding(), sym, TextFinding::default());
        (v, Some(before))
    }

    /// [`push_token`](Self::push_token) when the stream is halted, fresh or has text.
    #[inline(never)]
    fn push_token_slow(&mut self, id: u32, piece: Option<&[u8]>) -> Verdict {
        if self.drafting() {
            self.before_draft(speculative::Push::Token(id), piece);
        }
        if self.verdict.action == Action::Halt {
            return self.verdict;
        }
        match self.mode {
            Mode::Text => return self.read_text(piece.unwrap_or_default()),
            Mode::Fresh => {
                // Nothing read yet: plain until a piece brings text or a halt comes (or while
                // a checkpoint holds the pushes, which the plain path does not record).
                self.mode = Mode::Tokens;
                self.plain = !self.drafting();
            }
            Mode::Tokens => {}
        }
        let marked = if self.reasoning.marked() {
            match self.before_token(piece.unwrap_or_default()) {
                Ok(marked) => marked,
                Err(waiting) => return waiting,
            }
        } else {
            None
        };
        let sym = self.engine.pos();
        if piece.is_some() || self.has_text {
            // Where each token's text begins, for byte offsets and evidence.
            self.text.mark_symbol(sym);
        }
        let mut text = TextFinding::default();
        let mut url = false;
        if let Some(piece) = piece {
            (url, self.url) = in_url(self.url, piece);
            let breakers = self.config.inner.breakers.is_some();
            let (mut rest, mut read_ahead) =
                match self.text.read_piece(piece, &self.limits, breakers) {
                    Ok(()) => {
                        self.bytes_read();
                        (&[][..], None)
                    }
                    Err(read_ahead) => (piece, read_ahead),
                };
            while !rest.is_empty() {
                let (used, _) = self.scan(rest, false, read_ahead.take(), &mut text);
                rest = &rest[used..];
                if rest.len() > PIECE_TAIL && text.level() == Action::Halt {
                    // A halt inside a huge piece: the rest need not be read. A short rest is
                    // read, so that offsets and evidence cover the whole token.
                    break;
                }
            }
            self.engine.slack = self.slack();
        }
        self.engine.text_known = self.has_text;
        self.engine.structured = self.has_text && (url || left_out(&self.text, sym, self.line_sym));
        let (nothing_new, little_new) = self.text.news();
        self.engine.says_nothing_new = nothing_new;
        // On ids alone what is new is not known: a near loop warns as it always did.
        self.engine.says_little_new = little_new || !self.has_text;
        let v = self.settle(id, sym, text);
        if marked.is_some() {
            self.after_token(marked);
            return self.verdict;
        }
        v
    }

    /// Whether [`push_token`](Self::push_token) may take its inline path for an id alone.
    fn plain_now(&self) -> bool {
        self.mode == Mode::Tokens && !self.has_text && self.verdict.action != Action::Halt
    }

    /// Pushes `id` into the engine and turns what it and the text detectors found into the
    /// verdict for symbol `sym`; a push where nothing fired skips the verdict assembly.
    #[inline]
    fn settle(&mut self, id: u32, sym: u64, text: TextFinding) -> Verdict {
        if let Some(j) = speculative::noting(&mut self.drafts) {
            self.engine.note_push(id, j, Owner::Stream);
        }
        let level = self.engine.push(id);
        if level.max(text.level()) == Action::Continue {
            return self.quiet(sym);
        }
        let f = if level == Action::Continue {
            Finding::default()
        } else {
            self.engine.finding()
        };
        self.decide(f, sym, text)
    }

    /// The verdict of a push where nothing fired: the common case skips the verdict assembly.
    #[inline]
    fn quiet(&mut self, sym: u64) -> Verdict {
        if self.verdict.action != Action::Continue {
            self.verdict = Verdict::default();
            self.warn_streak = 0;
        }
        self.verdict.at = sym;
        // Built afresh rather than read back: reading the struct right after the store to `at`
        // stalls store-to-load forwarding (a fifth of the per-token time when measured).
        Verdict {
            at: sym,
            ..Verdict::default()
        }
    }

    /// Pushes a chunk of text, for streams without token ids (an API's SSE stream, a log).
    ///
    /// Chunks may split words, lines and UTF-8 characters anywhere: the result does not depend
    /// on how the text was cut. Returns the strongest verdict reached inside the chunk; a halt
    /// stops reading the chunk where it happened.
    pub fn push_text(&mut self, text: &[u8]) -> Verdict {
        if self.drafting() {
            self.before_draft(speculative::Push::Text, Some(text));
        }
        self.read_text(text)
    }

    /// [`push_text`](Self::push_text) after the checkpoint, if any, recorded it.
    fn read_text(&mut self, text: &[u8]) -> Verdict {
        if self.verdict.action == Action::Halt {
            return self.verdict;
        }
        self.read_marked(text)
    }

    /// Reads a stretch of text through the detectors (no reasoning marker ends inside it).
    fn read_stretch(&mut self, text: &[u8]) -> Verdict {
        if self.mode == Mode::Fresh {
            self.mode = Mode::Text;
        }
        let words = self.mode == Mode::Text;
        let mut best = Verdict::default();
        let mut rest = text;
        while !rest.is_empty() {
            let mut found = TextFinding::default();
            let (used, word) = self.scan(rest, words, None, &mut found);
            rest = &rest[used..];
            if word.is_none() && found.level() == Action::Continue {
                self.quiet(self.engine.pos().saturating_sub(1));
                continue;
            }
            let (word, sym) =
                word.unwrap_or((Finding::default(), self.engine.pos().saturating_sub(1)));
            let v = self.decide(word, sym, found);
            if v.action >= Action::EndReasoning {
                return v;
            }
            if v.action > best.action {
                best = v;
            }
        }
        if best.action > Action::Continue {
            self.verdict = best;
        }
        self.verdict
    }

    /// Ends a text-only stream: the last word, which no space followed, is pushed.
    pub fn finish_text(&mut self) -> Verdict {
        if self.drafting() {
            self.before_draft(speculative::Push::Finish, None);
        }
        self.read_end()
    }

    /// [`finish_text`](Self::finish_text) after the checkpoint, if any, recorded it.
    fn read_end(&mut self) -> Verdict {
        if self.verdict.action >= Action::EndReasoning || self.mode != Mode::Text {
            return self.verdict;
        }
        let mut last = (Finding::default(), self.engine.pos().saturating_sub(1));
        let engine = &mut self.engine;
        let line_sym = self.line_sym;
        let journal = speculative::noting(&mut self.drafts);
        self.text
            .flush_word(&mut self.url, journal, |t, event, journal| {
                if let Event::Word(h, start, url) = event {
                    let (level, sym) = push_word(engine, t, h, start, line_sym, url, journal);
                    let f = if level == Action::Continue {
                        Finding::default()
                    } else {
                        engine.finding()
                    };
                    last = (f, sym);
                }
                false
            });
        self.decide(last.0, last.1, TextFinding::default())
    }

    /// Scans text. In text mode each word is pushed to the engine, and the scan stops at the
    /// first word with evidence so that the guard decides on it where it happened. Returns the
    /// bytes used and that word's finding with its symbol index; the text findings are merged
    /// into `found`.
    fn scan(
        &mut self,
        text: &[u8],
        words: bool,
        read_ahead: Option<(usize, u8)>,
        found: &mut TextFinding,
    ) -> (usize, Option<(Finding, u64)>) {
        // Disjoint field borrows: the breaker automaton is read while the engine and text
        // state change (no reference-count traffic per piece).
        let breakers = self.config.inner.breakers.as_ref();
        let structure_slack = self.config.inner.settings.structure_slack;
        let text_known = words;
        let mut word = None;
        let engine = &mut self.engine;
        let line_sym = &mut self.line_sym;
        let used = self.text.scan(
            text,
            words,
            &self.limits,
            breakers,
            read_ahead,
            found,
            &mut self.url,
            speculative::noting(&mut self.drafts),
            |t, event, journal| {
                match event {
                    Event::Word(h, start, url) => {
                        // Where this word is read, not where the chunk began: a chunk may
                        // run from prose into an indented block.
                        engine.slack = if t.structured() { structure_slack } else { 1.0 };
                        engine.text_known = text_known;
                        let (level, sym) = push_word(engine, t, h, start, *line_sym, url, journal);
                        if level > Action::Continue {
                            word = Some((engine.finding(), sym));
                            return true;
                        }
                    }
                    Event::Breaker => {
                        if let Some(j) = journal {
                            engine.note_forget(j, Owner::Stream);
                            t.note_forget(j);
                        }
                        engine.forget();
                        t.forget();
                    }
                    Event::LineEnd { heading, kind } => {
                        let now = engine.pos();
                        // Known only once the line ends: a heading, or a line of code, markup
                        // or data read as prose while its head looked like prose.
                        if heading || kind.is_structured() {
                            engine.uncover(now - (now as u32).wrapping_sub(*line_sym) as u64);
                        }
                        *line_sym = now as u32;
                    }
                }
                false
            },
        );
        self.bytes_read();
        (used, word)
    }

    /// Records the bytes the text state has read so far.
    #[inline]
    fn bytes_read(&mut self) {
        self.stats.bytes = self.text.bytes;
        self.has_text |= self.text.bytes > 0;
        self.plain &= !self.has_text;
    }

    fn slack(&self) -> f32 {
        if self.text.structured() {
            self.config.inner.settings.structure_slack
        } else {
            1.0
        }
    }

    fn capture_evidence(&mut self, v: &Verdict, now: u64) {
        let key = (v.kind, v.period, v.onset);
        if key == self.evidence_key {
            return;
        }
        self.evidence_key = key;
        let mut len = 0;
        if let Some((a, b)) = block(&self.text, v, now) {
            for part in [a, b] {
                let take = part.len().min(EVIDENCE_BYTES - len);
                self.evidence[len..len + take].copy_from_slice(&part[..take]);
                len += take;
            }
        }
        self.evidence_len = len as u16; // at most EVIDENCE_BYTES
    }

    /// Where the n-gram index of the guard will be read and written when token `id` is
    /// pushed next, for a prefetch: the one cache line of a push that is rarely in cache when
    /// hundreds of guards take turns.
    #[inline(always)]
    pub(crate) fn index_entry(&self, id: u32) -> *const u32 {
        self.engine.index_entry(id)
    }

    /// The verdict of the last push.
    pub fn verdict(&self) -> Verdict {
        self.verdict
    }

    /// The text of the repeated block of the last `Warn` or `Halt` (its last copy, at most
    /// [`EVIDENCE_BYTES`] bytes; empty when the stream has no text). Raw bytes: a block may
    /// begin or end inside a UTF-8 character.
    pub fn repeated_text(&self) -> &[u8] {
        if self.verdict.action == Action::Continue {
            return &[];
        }
        &self.evidence[..self.evidence_len as usize]
    }

    /// Describes the last verdict for a log line (`Brief`), a person (`Summary`) or a report
    /// (`Full`, one `key: value` a line). Formats into `out`; allocates nothing itself.
    pub fn describe(&self, verbosity: Verbosity, out: &mut impl fmt::Write) -> fmt::Result {
        let v = &self.verdict;
        let text = String::from_utf8_lossy(self.repeated_text());
        let unit = match v.unit {
            Unit::Symbol if self.mode == Mode::Text => "words",
            Unit::Symbol => "tokens",
            Unit::Byte => "bytes",
            Unit::Line => "lines",
        };
        match verbosity {
            Verbosity::Brief => {
                if v.action == Action::Continue {
                    return write!(out, "continue");
                }
                write!(
                    out,
                    "{}: {} period {} x{:.1}",
                    v.action.as_str(),
                    v.kind.as_str(),
                    v.period,
                    v.repeats
                )
            }
            Verbosity::Summary => {
                if v.action == Action::Continue {
                    return write!(out, "No repetition after {} symbols.", self.engine.pos());
                }
                let verb = match v.action {
                    Action::Halt => "Halted",
                    Action::EndReasoning => "Reasoning to end",
                    _ => "Warning",
                };
                if v.period == 0 {
                    // A near loop whose copies vary too much for a period: the window.
                    let s = &self.config.inner.settings;
                    let share = if v.action >= Action::EndReasoning {
                        s.near_halt
                    } else {
                        s.near_warn
                    };
                    write!(
                        out,
                        "{verb} at symbol {}: near loop, at least {:.0}% of the last {} {unit} \
                         repeat recent ones, since symbol {}",
                        v.at,
                        100.0 * share,
                        s.near_window,
                        v.onset
                    )?;
                } else {
                    write!(
                        out,
                        "{verb} at symbol {}: {} of {} {unit} repeated {:.1} times since symbol {}",
                        v.at,
                        v.kind.as_str().replace('_', " "),
                        v.period,
                        v.repeats,
                        v.onset
                    )?;
                }
                if let Some(b) = v.onset_byte {
                    write!(out, " (byte {b})")?;
                }
                if !text.is_empty() {
                    write!(out, ": {:?}", text)?;
                }
                write!(out, ".")
            }
            Verbosity::Full => {
                writeln!(out, "action: {}", v.action.as_str())?;
                writeln!(out, "kind: {}", v.kind.as_str())?;
                writeln!(out, "period: {} {unit}", v.period)?;
                writeln!(out, "repeats: {:.2}", v.repeats)?;
                writeln!(out, "span: {} {unit}", v.span)?;
                writeln!(out, "onset: {}", v.onset)?;
                match v.onset_byte {
                    Some(b) => writeln!(out, "onset_byte: {b}")?,
                    None => writeln!(out, "onset_byte: unknown")?,
                }
                writeln!(out, "at: {}", v.at)?;
                writeln!(out, "confidence: {:.2}", v.confidence)?;
                writeln!(out, "symbols: {}", self.engine.pos())?;
                writeln!(out, "bytes: {}", self.stats.bytes)?;
                writeln!(out, "warnings: {}", self.stats.warnings)?;
                writeln!(out, "repeated_text: {:?}", text)
            }
        }
    }

    /// Counters since construction or the last reset.
    pub fn stats(&self) -> StreamStats {
        StreamStats {
            // Every symbol goes through the engine: its position is the count.
            symbols: self.engine.pos(),
            ..self.stats
        }
    }

    /// Bytes this guard owns (its own struct and every buffer): constant for its lifetime, but
    /// for the first [`checkpoint`](Self::checkpoint), which adds a copy of the guard and the
    /// room for the drafts it may take back.
    pub fn memory_usage(&self) -> usize {
        std::mem::size_of::<StreamGuard>()
            - std::mem::size_of::<Engine>()
            - std::mem::size_of::<TextState>()
            + self.engine.memory_usage()
            + self.text.memory_usage()
            + self.evidence.len()
            + self.drafts.as_ref().map_or(0, |d| d.memory_usage())
    }

    /// Forgets the stream, as if new. Allocates nothing.
    pub fn reset(&mut self) {
        self.engine.reset();
        self.text.reset(self.config.inner.breakers.as_ref());
        self.mode = Mode::Fresh;
        self.has_text = false;
        self.plain = false;
        self.url = Url::Out;
        self.verdict = Verdict::default();
        self.evidence_len = 0;
        self.evidence_key = (LoopKind::None, 0, 0);
        self.exempted = (LoopKind::None, 0, 0);
        self.warn_streak = 0;
        self.line_sym = 0;
        self.stats = StreamStats::default();
        self.reasoning = self.reasoning_initial();
        self.end_drafts();
    }
}

/// Pushes word `h` (its text begins at byte `start`) as the next symbol, with its line's say on
/// near-loop coverage, and its own when it lies in a web address (`url`): the one path for
/// every word of a text stream. Returns the engine's level and the symbol's index.
#[inline(always)]
fn push_word(
    engine: &mut Engine,
    t: &mut TextState,
    h: u32,
    start: u64,
    line_sym: u32,
    url: bool,
    journal: Option<&mut Journal>,
) -> (Action, u64) {
    let sym = engine.pos();
    t.mark_symbol_at(sym, start);
    engine.structured = url || left_out(t, sym, line_sym);
    (engine.says_nothing_new, engine.says_little_new) = t.news();
    if let Some(j) = journal {
        engine.note_push(h, j, Owner::Stream);
    }
    (engine.push(h), sym)
}

/// The stream's recent text says nothing new: a near loop may halt only then (see
/// `Engine::says_nothing_new`).
#[inline]
fn says_nothing_new(t: &TextState) -> bool {
    t.says_nothing_new()
}

/// Symbol `sym`, on the line that began at symbol `line_sym`, never counts towards a near
/// loop: its line is not prose (see `TextState::unprose`), or it opens a bullet item.
#[inline]
fn left_out(t: &TextState, sym: u64, line_sym: u32) -> bool {
    t.unprose() || (t.bullet() && line_prefix(sym, line_sym))
}

/// Symbol `sym` is one of the first `LINE_PREFIX` of the line that began at symbol `line_sym`
/// (low 32 bits). Bullet items open alike by nature ("* Add support for"), so on a bullet line
/// those never count towards a near loop.
#[inline]
fn line_prefix(sym: u64, line_sym: u32) -> bool {
    (sym as u32).wrapping_sub(line_sym) < LINE_PREFIX
}

/// Byte offset of symbol `sym`, when the stream has text.
fn text_byte(text: &TextState, sym: u64, now: u64) -> Option<u64> {
    if text.bytes == 0 {
        return None;
    }
    text.symbol_byte(sym, now)
}

/// The bytes of the last copy of the block `v` reports, as two slices. A copy longer than the
/// bytes held is cut to its most recent [`TEXT_RING`] bytes: in a loop any stretch that long is
/// a rotation of the block, so it still shows what repeats.
fn block<'t>(text: &'t TextState, v: &Verdict, now: u64) -> Option<(&'t [u8], &'t [u8])> {
    // A near loop without a period: its latest symbols show what repeats.
    let back = if v.period == 0 {
        v.span.min(NEAR_EVIDENCE)
    } else {
        v.period
    };
    let start = match v.unit {
        Unit::Symbol => text_byte(text, now.saturating_sub(back as u64), now)?,
        Unit::Byte => text.bytes.checked_sub(v.period as u64)?,
        Unit::Line => text.line_byte(text.lines_pos().checked_sub(v.period as u64)?)?,
    };
    text.bytes_from(start.max(text.bytes.saturating_sub(TEXT_RING as u64)))
}

const _: () = {
    // Index of a symbol's starting byte must cover the longest span we report bytes for.
    assert!(STARTS >= 256);
};
