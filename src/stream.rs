//! [`StreamGuard`]: one per generated sequence, fed a token (or a chunk of text) at a time.

use std::fmt;

use crate::config::StreamConfig;
use crate::engine::{Engine, EngineParams, Finding};
use crate::text::{
    is_data, is_drawing, is_filler, is_rule_text, is_word, CharLimits, Event, Numbers, TextFinding,
    TextState, STARTS, TEXT_RING,
};
use crate::verdict::{Action, LoopKind, Unit, Verdict};

mod reasoning;
mod speculative;

pub(crate) use reasoning::Markers;

pub use speculative::{RollbackError, DRAFT_BYTES, MAX_DRAFTS};

/// Bytes of the repeated block kept as evidence.
pub const EVIDENCE_BYTES: usize = 256;

/// The opening symbols of a bullet line that never count towards a near loop (see
/// `line_prefix`).
const LINE_PREFIX: u32 = 4;

/// Lines a counter ladder covers (copies times the lines in a copy) before it halts. The
/// longest ladders in 3.2 M tokens of human code and documentation (`scripts/code_corpus.py`)
/// cover 17 lines (macro arms counting to 17, generated getters `get 0()` to `get 15()`).
const LADDER_LINES: u64 = 24;

/// How much longer than `halt_span` a loop of data (a block without words) must run before it
/// halts. The longest exact runs of data in 3.2 M tokens of human code cover 135 tokens (a
/// regex repeated eleven times in a shell script; runs of `0x00,` in a Unicode table).
const DATA_SPAN_FACTOR: u32 = 4;
/// Copies of one line of code written out verbatim before they halt. In 3.8 M tokens of
/// human code (`scripts/code_corpus.py`, C and C++ included) the longest such runs are five
/// (`ecp_nistz256_point_double(r, r);`) and four; a block of two to four lines with a word
/// in it never stands three times in a row, but for `NULL` slots (see `is_filler`).
const CODE_LINE_COPIES: u32 = 8;
/// Copies of a drawing's row (or block of rows) past which it is taller than a screen.
const DRAWING_ROWS: u32 = 48;

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
    /// Symbols are words cut from the text.
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
    /// Symbols pushed: token ids, or words for text-only streams.
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
    /// Where the pieces stand in a web address (see [`in_url`]).
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
            warn_copies: s.warn_copies,
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
            url: Url::Out,
            verdict: Verdict::default(),
            evidence: vec![0; EVIDENCE_BYTES].into_boxed_slice(),
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
            self.record(speculative::Push::Token(id), piece);
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
        self.engine.says_nothing_new = says_nothing_new(&self.text);
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
            self.record(speculative::Push::Text, Some(text));
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
            self.record(speculative::Push::Finish, None);
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
        self.text.flush_word(|t, event| {
            if let Event::Word(h, start) = event {
                let (level, sym) = push_word(engine, t, h, start, line_sym);
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
            |t, event| {
                match event {
                    Event::Word(h, start) => {
                        // Where this word is read, not where the chunk began: a chunk may
                        // run from prose into an indented block.
                        engine.slack = if t.structured() { structure_slack } else { 1.0 };
                        engine.text_known = text_known;
                        let (level, sym) = push_word(engine, t, h, start, *line_sym);
                        if level > Action::Continue {
                            word = Some((engine.finding(), sym));
                            return true;
                        }
                    }
                    Event::Breaker => {
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

    /// Turns the detectors' findings into the verdict for symbol `sym`, and records it.
    #[inline(never)]
    fn decide(&mut self, sym_f: Finding, sym: u64, text: TextFinding) -> Verdict {
        let now = self.engine.pos();
        let mut candidates: [Option<Verdict>; 6] = [None; 6];
        if sym_f.level > Action::Continue {
            candidates[0] = Some(self.symbol_verdict(sym_f, sym, now));
        }
        if text.chars.level > Action::Continue {
            candidates[1] = Some(self.char_verdict(text.chars, text.chars_in_code_line, sym, now));
        }
        if text.lines.level > Action::Continue {
            candidates[2] = Some(self.line_verdict(&text, sym, now));
        }
        if text.growth.level > Action::Continue {
            candidates[3] = Some(self.char_verdict(
                text.growth,
                self.within_a_code_line(Some(text.growth.onset)),
                sym,
                now,
            ));
        }
        if text.counter.level > Action::Continue {
            candidates[4] = Some(self.char_verdict(
                text.counter,
                self.within_a_code_line(Some(text.counter.onset)),
                sym,
                now,
            ));
        }
        if text.templates.level > Action::Continue {
            candidates[5] = Some(self.template_verdict(text.templates, sym, now));
        }
        // Drop what an exempt pattern excuses; fuse the confidence of the rest.
        let mut best: Option<Verdict> = None;
        let mut doubt = 1.0f32;
        for v in candidates.iter_mut().flatten() {
            if v.action == Action::Continue || self.is_exempt(v, now) {
                continue;
            }
            doubt *= 1.0 - v.confidence;
            if best.map_or(true, |b| {
                (v.action, v.confidence) > (b.action, b.confidence)
            }) {
                best = Some(*v);
            }
        }
        let mut v = match best {
            Some(mut b) => {
                b.confidence = 1.0 - doubt;
                b
            }
            None => Verdict {
                at: sym,
                ..Verdict::default()
            },
        };
        // The ladder: warnings that persist become a halt.
        if v.action == Action::Warn {
            self.warn_streak = self.warn_streak.saturating_add(1);
            let after = self.config.inner.settings.escalate_after;
            if after > 0 && self.warn_streak >= after {
                v.action = Action::Halt;
            }
        } else if v.action == Action::Continue {
            self.warn_streak = 0;
        }
        v.action = self.reasoning_action(v.action);
        match v.action {
            Action::Continue => {}
            Action::Warn => {
                self.stats.warnings += 1;
                self.stats.first_warn_at.get_or_insert(sym);
                self.capture_evidence(&v, now);
            }
            // The stream detectors never block; treat it as the halt it would escalate to.
            Action::Block | Action::Halt => {
                self.stats.first_warn_at.get_or_insert(sym);
                self.stats.halted_at = Some(sym);
                self.capture_evidence(&v, now);
            }
            // Not a halt: the sequence goes on once the reasoning is closed.
            Action::EndReasoning => {
                self.stats.first_warn_at.get_or_insert(sym);
                self.capture_evidence(&v, now);
            }
        }
        self.verdict = v;
        self.plain &= v.action != Action::Halt;
        v
    }

    fn symbol_verdict(&self, f: Finding, sym: u64, now: u64) -> Verdict {
        let mut kind = f.kind;
        let mut action = f.level;
        let onset_byte = self.text_byte(f.onset, now);
        if kind == LoopKind::ExactLoop {
            if let Some(start) = self.text_byte(now.saturating_sub(f.period as u64), now) {
                // Three bytes more, so that a character the block begins inside is whole once.
                let from = start.saturating_sub(3);
                if let Some((a, b)) = self.text.bytes_from(from) {
                    let block = block_from(a, b, from, start);
                    if is_rule_text([a, b]) {
                        // A rule drawn with tokens (`━━━━`, `-----`): judged like a separator run.
                        let limit = self.config.inner.settings.separator_run_halt as u64;
                        let bytes = onset_byte.map_or(0, |o| self.text.bytes - o);
                        action = if limit > 0 && bytes >= limit {
                            Action::Halt
                        } else {
                            Action::Continue
                        };
                        kind = LoopKind::CharRun;
                    } else if is_drawing(block) {
                        // Rows of a drawing (a chart's axis, a frame: no letter or digit)
                        // repeat by design, as many as the picture is tall: only a drawing
                        // taller than a screen halts.
                        if f.span / f.period.max(1) < DRAWING_ROWS {
                            action = Action::Continue;
                        }
                    } else if is_data(block) || is_filler(block) {
                        // A block without words — numbers, hex, a regex, base64, or only
                        // `NULL`s — is data, and tables of data repeat their values and rows:
                        // only a long run of it halts, four times the span and one copy more,
                        // and it warns half way there.
                        let s = &self.config.inner.settings;
                        let copies = f.span / f.period.max(1);
                        let span = DATA_SPAN_FACTOR * s.halt_span.max(16);
                        action = if f.span >= span && copies > s.halt_copies {
                            action
                        } else if f.span >= span / 2 {
                            action.min(Action::Warn)
                        } else {
                            Action::Continue
                        };
                    } else if self.text.in_code()
                        && f.span / f.period.max(1) < CODE_LINE_COPIES
                        && one_line(block)
                    {
                        // In code, one line written out again is an unrolled loop
                        // (`point_double(r, r);` five times): people write a few of them,
                        // a model writes its loop on. It halts from `CODE_LINE_COPIES`.
                        action = action.min(Action::Warn);
                    }
                }
            }
            if kind == LoopKind::ExactLoop && self.is_word_stutter(f.period, now) {
                kind = LoopKind::WordStutter;
            }
        }
        if action > Action::Continue && self.within_a_code_line(onset_byte) {
            action = Action::Continue;
        }
        // In structured text (code, markup, tables, fields, `#` lines) blocks recur by
        // design: a block written twice, one recurring from far back, or a few closing tags
        // or brackets written three times (`</td></tr></table>`) is not a warning there. A
        // loop warns once it has what a halt needs: the copies and the span.
        if action == Action::Warn && (self.text.in_code() || self.text.marked()) {
            let s = &self.config.inner.settings;
            if kind == LoopKind::LongRepeat
                || f.span / f.period.max(1) < s.halt_copies
                || f.span < s.halt_span
            {
                action = Action::Continue;
            }
        }
        Verdict {
            action,
            kind,
            unit: Unit::Symbol,
            period: f.period,
            repeats: f.repeats(),
            span: f.span,
            onset: f.onset,
            onset_byte,
            at: sym,
            confidence: f.confidence,
        }
    }

    /// In code, a repetition inside the line being read, while that line is no longer than
    /// people write lines (`text::CODE_LINE` bytes), is a literal or an expression written so on
    /// purpose (`"{s}12345{s:#} "` four times, a hundred `f`s in a test string): not yet
    /// evidence. A model looping inside a line runs it far past any line a person writes.
    fn within_a_code_line(&self, onset_byte: Option<u64>) -> bool {
        onset_byte.is_some_and(|o| self.text.within_code_line(o, self.text.bytes))
    }

    /// A character run, judged where it was found (`in_code_line`): the piece that holds it
    /// may go on past the end of its line.
    fn char_verdict(&self, f: Finding, in_code_line: bool, sym: u64, now: u64) -> Verdict {
        let onset_byte = f.onset;
        let action = if in_code_line {
            Action::Continue
        } else {
            f.level
        };
        self.text_verdict(&f, action, f.kind, Unit::Byte, Some(onset_byte), sym, now)
    }

    /// A template re-filled: its evidence in lines, from the run's first line.
    fn template_verdict(&self, f: Finding, sym: u64, now: u64) -> Verdict {
        let onset_byte = self.text.line_byte(f.onset);
        self.text_verdict(&f, f.level, f.kind, Unit::Line, onset_byte, sym, now)
    }

    /// The verdict for a text detector's finding `f` (in `unit`), whose onset is at byte
    /// `onset_byte` when still known: its symbol is the one that holds that byte.
    // One call per finding: the finding, what was decided of it, and where it stands.
    #[allow(clippy::too_many_arguments)]
    fn text_verdict(
        &self,
        f: &Finding,
        action: Action,
        kind: LoopKind,
        unit: Unit,
        onset_byte: Option<u64>,
        sym: u64,
        now: u64,
    ) -> Verdict {
        Verdict {
            action,
            kind,
            unit,
            period: f.period,
            repeats: f.repeats(),
            span: f.span,
            onset: self.text.onset_symbol(onset_byte, now),
            onset_byte,
            at: sym,
            confidence: f.confidence,
        }
    }

    fn line_verdict(&self, text: &TextFinding, sym: u64, now: u64) -> Verdict {
        let f = text.lines;
        let lines = f.span as u64;
        // What halts depends on the lines and on how the numbers in the copies change. Prose
        // lines repeated, their numbers the same or not, halt (`29. Remove the tire…`). In
        // code, tables, fields and markup, where a token-level loop decides, repeated lines
        // only warn, but for a counter ladder, which halts once it covers `LADDER_LINES`:
        // people write out short ones (unrolled tables, macro arms, release links), models
        // run theirs to the token limit. Numbers that vary otherwise are a table of values or
        // a list of links.
        // A one-line ladder whose counter sits in a name (`KEY_F7`, `handler12`) names
        // something new on each line, as tables of constants do: it halts only once the text
        // says nothing new. A block of several lines written out again and again with only a
        // counter changed is not how people write.
        let ladder = text.lines_numbers == Numbers::Ladder
            && lines >= LADDER_LINES
            && (text.lines_block || says_nothing_new(&self.text));
        let halt = !text.lines_structured || ladder;
        let mut action = f.level;
        if action == Action::Halt && !halt {
            action = Action::Warn;
        }
        // `line_halt_copies = 0` turns line halts off, ladders included.
        let lines_halt = self.config.inner.settings.line_halt_copies > 0;
        if action == Action::Warn && lines_halt && ladder {
            action = Action::Halt;
        }
        // In structured text a warning too needs more than repetition, which is how such text
        // is written: a ladder half way to its halt, or lines repeated exactly as often as
        // prose lines halt.
        if action == Action::Warn && text.lines_structured {
            let copies = f.span / f.period.max(1);
            let evidence = match text.lines_numbers {
                Numbers::Ladder => lines >= LADDER_LINES / 2,
                Numbers::Same => copies >= self.config.inner.settings.line_halt_copies,
                Numbers::Varied | Numbers::Unknown => false,
            };
            if !evidence {
                action = Action::Continue;
            }
        }
        let onset_byte = self.text.line_byte(f.onset);
        let kind = if text.lines_numbers == Numbers::Ladder {
            LoopKind::CounterLadder
        } else {
            f.kind
        };
        self.text_verdict(&f, action, kind, Unit::Line, onset_byte, sym, now)
    }

    /// Byte offset of symbol `sym`, when the stream has text.
    fn text_byte(&self, sym: u64, now: u64) -> Option<u64> {
        text_byte(&self.text, sym, now)
    }

    /// A period-1 loop of words, or a one- or two-token loop whose text is one word.
    fn is_word_stutter(&self, period: u32, now: u64) -> bool {
        if self.mode == Mode::Text {
            return period == 1;
        }
        if period > 2 || self.text.bytes == 0 {
            return false;
        }
        let Some(start) = self.text_byte(now.saturating_sub(period as u64), now) else {
            return false;
        };
        self.text
            .bytes_from(start)
            .is_some_and(|(a, b)| is_word([a, b]))
    }

    fn is_exempt(&mut self, v: &Verdict, now: u64) -> bool {
        let Some(ac) = self.config.inner.exempt.as_ref() else {
            return false;
        };
        let key = (v.kind, v.period, v.onset);
        if key == self.exempted {
            return true;
        }
        let Some((a, b)) = block(&self.text, v, now) else {
            return false;
        };
        // The block may wrap around the ring: search both halves and the seam between them.
        let mut seam = [0u8; 512];
        let ta = &a[a.len().saturating_sub(256)..];
        let tb = &b[..b.len().min(256)];
        seam[..ta.len()].copy_from_slice(ta);
        seam[ta.len()..ta.len() + tb.len()].copy_from_slice(tb);
        let found = ac.is_match(a) || ac.is_match(b) || ac.is_match(&seam[..ta.len() + tb.len()]);
        if found {
            self.exempted = key;
        }
        found
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
/// near-loop coverage: the one path for every word of a text stream. Returns the engine's level
/// and the symbol's index.
#[inline(always)]
fn push_word(
    engine: &mut Engine,
    t: &mut TextState,
    h: u32,
    start: u64,
    line_sym: u32,
) -> (Action, u64) {
    let sym = engine.pos();
    t.mark_symbol_at(sym, start);
    engine.structured = left_out(t, sym, line_sym);
    engine.says_nothing_new = says_nothing_new(t);
    (engine.push(h), sym)
}

/// The stream's recent text says nothing new: a near loop may halt only then (see
/// `Engine::says_nothing_new`).
#[inline]
fn says_nothing_new(t: &TextState) -> bool {
    t.says_nothing_new()
}

/// Where a stream stands in a web address, read across pieces: `://` may come in pieces of
/// its own (`:`, `/`, `/`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Url {
    Out,
    Colon,
    ColonSlash,
    In,
}

/// Whether a token is part of a web address, and where the next one starts: from the piece
/// that completes `://` (its colon at an end of its piece) to the one that ends the address with white space or a closing
/// bracket or quote. Links are references: people cite one address again and again (a
/// changelog links the same advisory in every section), so their tokens never count towards a
/// near loop; a model repeating links verbatim is still an exact loop.
#[inline]
fn in_url(state: Url, piece: &[u8]) -> (bool, Url) {
    // The common case, two compares: outside an address, a piece can begin one only with the
    // colon of `://` at one of its ends (tokenizers cut `https`, `://` and `github` apart, or
    // `:`, `/`, `/`).
    if state == Url::Out && piece.first() != Some(&b':') && piece.last() != Some(&b':') {
        return (false, Url::Out);
    }
    let mut url = state == Url::In;
    let mut state = state;
    for &b in piece {
        state = match (state, b) {
            (Url::In, b' ' | b'\t' | b'\n' | b'\r' | b')' | b'>' | b'"' | b'\'') => Url::Out,
            (Url::In, _) => Url::In,
            (_, b':') => Url::Colon,
            (Url::Colon, b'/') => Url::ColonSlash,
            (Url::ColonSlash, b'/') => Url::In,
            _ => Url::Out,
        };
        url |= state == Url::In;
    }
    (url, state)
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

/// The block is one whole line: it holds one line break. (A repetition inside a line, with
/// none, is judged by the line's length: see `within_a_code_line`.)
fn one_line(parts: [&[u8]; 2]) -> bool {
    parts
        .iter()
        .map(|p| memchr::memchr_iter(b'\n', p).count())
        .sum::<usize>()
        == 1
}

/// The parts `a`, `b` of the held bytes from byte `from`, less those before byte `start`.
fn block_from<'t>(a: &'t [u8], b: &'t [u8], from: u64, start: u64) -> [&'t [u8]; 2] {
    let skip = (start - from) as usize;
    if skip <= a.len() {
        [&a[skip..], b]
    } else {
        [&[], &b[(skip - a.len()).min(b.len())..]]
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The tokens of a web address, however `://` is cut into pieces, from the piece that
    /// completes it to the one that ends the address.
    #[test]
    fn web_addresses_are_followed_across_pieces() {
        let marks = |pieces: &[&str]| {
            let mut state = Url::Out;
            pieces
                .iter()
                .map(|p| {
                    let (url, next) = in_url(state, p.as_bytes());
                    state = next;
                    url
                })
                .collect::<Vec<bool>>()
        };
        let link = [
            "See", " [", "x", "](", "https", "://", "github", ".com", "/a", ")", " for",
        ];
        assert_eq!(
            marks(&link),
            [false, false, false, false, false, true, true, true, true, true, false]
        );
        let cut = ["https", ":", "/", "/", "example", ".org", " and", " more"];
        assert_eq!(
            marks(&cut),
            [false, false, false, true, true, true, true, false]
        );
        // A colon alone, or `:/` without the second slash, is no address.
        assert_eq!(marks(&["Note", ":", " the", " a:/b"]), [false; 4]);
        assert_eq!(marks(&["x:", "//y z", " next"]), [false, true, false]);
    }
}
