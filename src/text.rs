//! The text side of a stream: character runs, words and lines, structure context, breakers,
//! and the recent bytes that become the evidence of a verdict.
//!
//! Text arrives as token pieces or as chunks of any size and is cut the same way whatever the
//! chunking: words are maximal runs of non-space bytes (cut where word bytes and punctuation
//! meet when longer than 24 bytes), each digit is a word of its own and so is each line break,
//! as the tokenizers of the models guarded cut them; lines end at `\n`. Words become symbols
//! of the guard's main engine when the stream has no token ids; lines, with every number read
//! as one `0` so that counters do not hide a loop, feed a small engine of their own.

use aho_corasick::automaton::{Automaton, StateID};
use aho_corasick::dfa::DFA;
use aho_corasick::Anchored;
use xxhash_rust::xxh3::xxh3_64;

use crate::counting::Counting;
use crate::engine::{Engine, EngineParams, Finding};
use crate::novelty::Novelty;
use crate::structure::{LineKind, Structure};
use crate::template::{skeleton, Templates};
use crate::verdict::{Action, LoopKind};

mod content;
mod lines;
mod nesting;
mod runs;

use self::runs::clamp_lanes;
pub(crate) use self::runs::CharLimits;

pub(crate) use self::content::{
    is_data, is_drawing, is_drawn_pattern, is_escaped_fill, is_filler, is_list_fill, is_rule_text,
    is_word, BUFFER_FACTOR,
};

/// Recent bytes kept for evidence and exempt checks.
pub(crate) const TEXT_RING: usize = 1024;
/// Recent symbols whose starting byte is remembered: a default max period, so that the
/// evidence of any default loop is held (the rest of a guard's 16 KiB goes to the symbol ring
/// and the n-gram tables).
pub(crate) const STARTS: usize = 256;
/// Lines held by the line engine.
const LINES: usize = 64;
/// New words among the last 64 at which a text says nothing new.
const NOTHING_NEW: u32 = 1;
/// Copies past which a counter ladder that names something new on each copy (`REG_R0` …
/// `REG_R31`, `user1=user2=…`) halts all the same: tables that long are not written out by
/// hand.
pub(crate) const NAMED_LADDER_COPIES: u32 = 64;
/// New words among the last 64 at which a text says little new: a near loop warns only then.
/// A warning, earlier and cheaper than a halt, allows the odd new word of a paraphrase; a
/// list that names a new thing on most lines (declarations, keywords, menus) gives far more.
const LITTLE_NEW: u32 = 4;
/// New words among the last 64 from which a text names new things densely: a table of named
/// things (registers, cases with their handlers, fields) names one on most rows (13 and more
/// in the tables measured), where a block written out again with a numbered name adds that
/// one name to the eight or so words it repeats (6 to 8 by its fifth copy).
const TABLE_NEW: u32 = 10;
/// A byte that continues a symbol inside a long run (see `long_word`): a letter, a digit or
/// a non-ASCII byte. `_` is a piece of its own there, as tokenizers cut
/// `date_published_by_author` at its underscores.
fn is_run_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b >= 0x80
}

/// Bytes past which a line of code is longer than people write them (style guides stop at
/// 80 to 120): a repetition inside a shorter one may be a literal written on purpose.
pub(crate) const CODE_LINE: u64 = 200;

/// Longest word hashed whole; a longer run is cut here, then where word bytes and punctuation
/// meet (and every `WORD_MAX` bytes of one kind).
const WORD_MAX: usize = 24;
/// Line bytes buffered before they are folded into the line hash.
const LINE_BLOCK: usize = 64;
/// Character runs are counted up to this many bytes (longer ones report this span); the
/// thresholds stay below it.
const RUN_CAP: u64 = 0x7000;
/// The four 16-bit lanes of the character-run state: a 1 in each, the low bits, the top bit.
const LANE1: u64 = 0x0001_0001_0001_0001;
const LANE_LOW: u64 = 0x7fff * LANE1;
const LANE_HIGH: u64 = 0x8000 * LANE1;
/// A lane value no byte equals: no byte before the first.
const NO_BYTE: u64 = 0x0100;

pub(crate) const SPACE: u8 = 1;
const NEWLINE: u8 = 2;
const DIGIT: u8 = 4;
const LETTER: u8 = 8;
const SEPARATOR: u8 = 16;

/// Byte classes. Bytes of multi-byte UTF-8 characters count as letters, so that text in any
/// script has "letters".
pub(crate) static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = if c == b'\n' {
            NEWLINE | SPACE | SEPARATOR
        } else if c == b' ' || c == b'\t' || c == b'\r' || c == 0x0b || c == 0x0c {
            SPACE | SEPARATOR
        } else if c.is_ascii_digit() {
            DIGIT
        } else if c.is_ascii_alphabetic() || c >= 0x80 {
            LETTER
        } else if matches!(
            c,
            b'-' | b'=' | b'_' | b'*' | b'#' | b'~' | b'.' | b'|' | b'+' | b'/' | b'\\' | b'`'
                // A reStructuredText section's underline (`^^^^`, Sphinx's fourth level).
                | b'^'
        ) {
            SEPARATOR
        } else {
            0
        };
        b += 1;
    }
    t
};

/// What the scan hands to the guard as it happens.
pub(crate) enum Event {
    /// A word ended: its symbol and the byte where it began.
    Word(u32, u64),
    /// A breaker pattern just ended.
    Breaker,
    /// A line ended. `heading` when its last visible byte is ':' ("Changes in 2.37:"): a
    /// heading introduces a listing, and its repetition is not a near loop. `kind` is what the
    /// structure model made of the whole line.
    LineEnd { heading: bool, kind: LineKind },
}

/// What a chunk of text produced.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TextFinding {
    /// Strongest character-run evidence (unit: bytes; onset is a byte offset), and whether
    /// it lay inside a line of code when found (see `TextState::within_code_line`).
    pub chars: Finding,
    pub chars_in_code_line: bool,
    /// Strongest line evidence (unit: lines; onset is a line index).
    pub lines: Finding,
    /// The line finding was made inside a code fence, a table or an indented block.
    pub lines_structured: bool,
    /// How the numbers of the repeated lines change from copy to copy.
    pub lines_numbers: Numbers,
    /// The repeated block holds lines of different shapes (at least half of its lines,
    /// and two): a block of code written out again, not one line of a table repeated.
    pub lines_block: bool,
    /// The repeated block's lines all open with markup (a tag), read when the finding was
    /// made (later lines of the same push do not change it).
    pub lines_markup: bool,
    /// With a ladder of a block whose numbers are one count through its copies, the numbers
    /// of a copy; 0 otherwise.
    pub lines_counts: u32,
    /// Names that grow (unit: bytes; period is what the last growth added, span the latest
    /// name's length, onset the line it is on).
    pub growth: Finding,
    /// A counter stepping with the same text around it (unit: bytes; period is the bytes of
    /// a copy, span the bytes since the first, onset its byte).
    pub counter: Finding,
    /// A template re-filled (unit: lines; period the lines of a copy, span the lines of the
    /// run, onset the line it began on).
    pub templates: Finding,
}

/// How the numbers in the copies of a block of repeated lines (lines equal once their digits
/// are folded) change from copy to copy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Numbers {
    /// The copies are no longer all held: not known.
    #[default]
    Unknown,
    /// The same numbers in every copy: the lines repeat exactly.
    Same,
    /// Every number steps by the same amount from copy to copy: a counter ladder.
    Ladder,
    /// The numbers vary otherwise: a table of values, a list of links.
    Varied,
    /// The numbers vary, and each copy has its own key: its first numbers (a date, an issue
    /// number) sorted from copy to copy without counting, or a version that changes. A list
    /// of records, each copy about its own thing, as a change log's entries
    /// (`433469  FreeBSD support, part 4`, `433473  … part 5`) are.
    Records,
}

impl TextFinding {
    /// The strongest action the text detectors reached.
    #[inline]
    pub fn level(&self) -> Action {
        self.chars
            .level
            .max(self.lines.level)
            .max(self.growth.level)
            .max(self.counter.level)
            .max(self.templates.level)
    }
}

/// Text state of one stream. Buffers are allocated at construction.
#[derive(Clone)]
pub(crate) struct TextState {
    /// Total bytes seen.
    pub bytes: u64,
    ring: Box<[u8]>,
    /// Low 32 bits of the starting byte of each recent stream symbol.
    starts: Box<[u32]>,
    // Character runs of byte periods 1..=4, a 16-bit lane each: the last four bytes (newest in
    // the low lane; `NO_BYTE` before the first), and how many bytes in a row matched the byte
    // `p` back (at most `RUN_CAP`).
    last: u64,
    runs: u64,
    // The word being read (text-only streams). Past `WORD_MAX` bytes without white space
    // (`long_word`), a run is cut where word bytes and punctuation meet, as tokenizers cut it;
    // `word_byte` is the kind of its last byte.
    word: [u8; WORD_MAX],
    /// Bytes of the word held (at most `WORD_MAX`).
    word_len: u8,
    word_start: u64,
    long_word: bool,
    word_byte: bool,
    // The line being read.
    line: [u8; LINE_BLOCK],
    /// Bytes of the line held (at most `LINE_BLOCK`).
    line_len: u8,
    line_hash: u64,
    line_letters: u32,
    /// What kind of line is being read, and the region around it.
    structure: Structure,
    /// How many of the recent words are new.
    novelty: Novelty,
    /// Numbers that count; the onset of the count last seen, and the words read when it was.
    counting: Counting,
    count_onset: u64,
    count_words: u16,
    /// Whether line evidence (counts and growing names among it) may warn, and halt.
    lines_warn: bool,
    lines_halt: bool,
    line_start: u64,
    lines: Engine,
    /// Low 32 bits of the starting byte of each recent line fed to `lines`.
    line_starts: Box<[u32]>,
    /// Per recent line fed to `lines`, newest in bit 0: set when it was markup.
    markup_lines: u16,
    /// Lines that come back one level deeper each copy.
    nesting: nesting::Nesting,
    /// Skeletons of the recent code lines, for templates re-filled.
    templates: Templates,
    template_warn: u16,
    template_budget: u16,
    /// The skeleton of the line being read, once its first block was read.
    line_skeleton: Option<u16>,
    /// Breaker automaton state, carried across pushes.
    breaker_state: StateID,
    min_letters: u16,
}

impl TextState {
    /// `templates`: the copies of a template that warn and the copies allowed (0: off).
    pub fn new(
        line_warn: u32,
        line_halt: u32,
        min_letters: u32,
        templates: (u32, u32),
        breakers: Option<&DFA>,
    ) -> TextState {
        let lines = Engine::new(EngineParams {
            window: LINES as u32,
            dense: 16,
            ngram: 1,
            min_period: 1,
            max_period: 16,
            halt_copies: if line_halt == 0 { 1001 } else { line_halt },
            halt_span: 0,
            warn_copies: line_warn,
            warn_span: 0,
            long_warn_run: 0,
            long_halt_run: 0,
            near_window: 0,
            near_warn: 1.0,
            near_halt: 1.0,
            near_patience: 0,
            index_bits: 0,
            loop_kind: LoopKind::RepeatedLines,
        });
        TextState {
            bytes: 0,
            ring: vec![0; TEXT_RING].into_boxed_slice(),
            starts: vec![0; STARTS].into_boxed_slice(),
            last: NO_BYTE * LANE1,
            runs: 0,
            word: [0; WORD_MAX],
            word_len: 0,
            word_start: 0,
            long_word: false,
            word_byte: false,
            line: [0; LINE_BLOCK],
            line_len: 0,
            line_hash: 0,
            line_letters: 0,
            structure: Structure::new(),
            novelty: Novelty::new(),
            counting: Counting::new(),
            count_onset: u64::MAX,
            count_words: 0,
            lines_warn: line_warn > 0,
            lines_halt: line_halt > 0,
            line_start: 0,
            lines,
            line_starts: vec![0; LINES].into_boxed_slice(),
            markup_lines: 0,
            nesting: nesting::Nesting::default(),
            templates: Templates::new(),
            // Settings are checked to be at most 1,000.
            template_warn: templates.0.min(u16::MAX as u32) as u16,
            template_budget: templates.1.min(u16::MAX as u32) as u16,
            line_skeleton: None,
            breaker_state: start_state(breakers),
            min_letters: min_letters.min(u16::MAX as u32) as u16,
        }
    }

    pub fn memory_usage(&self) -> usize {
        // The line engine's inline part is inside `TextState` already.
        std::mem::size_of::<TextState>() + self.lines.memory_usage() - std::mem::size_of::<Engine>()
            + self.ring.len()
            + 4 * (self.starts.len() + self.line_starts.len())
    }

    pub fn reset(&mut self, breakers: Option<&DFA>) {
        self.bytes = 0;
        self.last = NO_BYTE * LANE1;
        self.runs = 0;
        self.word_len = 0;
        self.long_word = false;
        self.clear_line();
        self.line_start = 0;
        self.markup_lines = 0;
        self.nesting.reset();
        self.lines.reset();
        self.structure.reset();
        self.novelty.reset();
        self.counting.reset();
        self.templates.reset();
        self.count_onset = u64::MAX;
        self.breaker_state = start_state(breakers);
        // Offsets of the old stream would read as bytes of the new one (a symbol pushed
        // without a piece marks no start): back to the zeros a new guard holds.
        self.starts.fill(0);
        self.line_starts.fill(0);
    }

    /// Makes this state a copy of `src`, built with the same settings, without allocating.
    pub fn copy_from(&mut self, src: &TextState) {
        self.lines.copy_from(&src.lines);
        copy_fields!(
            self,
            src,
            [
                bytes,
                ring,
                starts,
                last,
                runs,
                word,
                word_len,
                word_start,
                long_word,
                word_byte,
                line,
                line_len,
                line_hash,
                line_letters,
                structure,
                novelty,
                counting,
                count_onset,
                count_words,
                lines_warn,
                lines_halt,
                line_start,
                line_starts,
                markup_lines,
                nesting,
                templates,
                template_warn,
                template_budget,
                line_skeleton,
                breaker_state,
                min_letters,
            ],
            skip[lines]
        );
    }

    /// Forgets the evidence (after a breaker) but keeps positions and the held bytes.
    pub fn forget(&mut self) {
        self.runs = 0;
        self.lines.forget();
        self.counting.forget();
    }

    /// Inside a code fence, a table or an indented line: thresholds stretch.
    pub fn structured(&self) -> bool {
        self.structure.structured()
    }

    /// Symbols on the line being read do not count towards a near loop (see
    /// [`Structure::unprose`]).
    #[inline]
    pub fn unprose(&self) -> bool {
        self.structure.unprose()
    }

    /// The line is not prose by its first bytes (see [`Structure::marked`]).
    pub fn marked(&self) -> bool {
        self.structure.marked()
    }

    /// In a run of code lines, a fence, a table or an indented block.
    pub fn in_code(&self) -> bool {
        self.structure.in_code()
    }

    /// In code, a repetition that began at byte `onset` inside the line being read, which at
    /// byte `now` is still no longer than people write lines (`CODE_LINE` bytes): a literal
    /// or an expression written so on purpose, not yet evidence.
    pub fn within_code_line(&self, onset: u64, now: u64) -> bool {
        self.structure.in_code()
            && self.structure.unprose()
            && onset >= self.line_start
            && now.saturating_sub(self.line_start) < CODE_LINE
    }

    /// The line is a bullet item (`* `, `- `, `+ `).
    #[inline]
    pub fn bullet(&self) -> bool {
        self.structure.bullet()
    }

    /// The recent text says nothing new: at most [`NOTHING_NEW`] of its last
    /// [`NOVELTY_WINDOW`](crate::novelty::NOVELTY_WINDOW) words are new.
    #[inline]
    pub fn says_nothing_new(&self) -> bool {
        self.news().0
    }

    /// Whether the recent text says nothing new and whether it says little new: at most
    /// [`NOTHING_NEW`] and at most [`LITTLE_NEW`] of its last 64 words are new.
    #[inline]
    pub fn news(&self) -> (bool, bool) {
        let new = self.novelty.new_words();
        (new <= NOTHING_NEW, new <= LITTLE_NEW)
    }

    /// The recent text names new things densely: at least [`TABLE_NEW`] of its last 64
    /// words are new.
    #[inline]
    pub fn names_new_densely(&self) -> bool {
        self.novelty.new_words() >= TABLE_NEW
    }

    /// Records that stream symbol `sym` starts at the current byte.
    #[inline]
    pub fn mark_symbol(&mut self, sym: u64) {
        self.mark_symbol_at(sym, self.bytes);
    }

    /// Records that stream symbol `sym` starts at byte `byte`.
    #[inline]
    pub fn mark_symbol_at(&mut self, sym: u64, byte: u64) {
        self.starts[sym as usize % STARTS] = byte as u32;
    }

    /// Lines fed to the line engine so far.
    pub fn lines_pos(&self) -> u64 {
        self.lines.pos()
    }

    /// Byte where stream symbol `sym` starts, if still remembered (`now` is the next symbol).
    pub fn symbol_byte(&self, sym: u64, now: u64) -> Option<u64> {
        if sym >= now || now - sym > STARTS as u64 {
            return None;
        }
        Some(widen(self.starts[sym as usize % STARTS], self.bytes))
    }

    /// The stream symbol that holds byte `byte` (`now` is the next symbol): the onset of a
    /// finding measured in bytes or lines. White space before the stream's first word belongs
    /// to that word. A byte older than every symbol remembered (the last `STARTS`), or no byte
    /// at all (a line start forgotten), gives the oldest symbol remembered: the loop began
    /// there or before.
    pub fn onset_symbol(&self, byte: Option<u64>, now: u64) -> u64 {
        let oldest = now.saturating_sub(STARTS as u64);
        byte.and_then(|byte| {
            (oldest..now)
                .rev()
                .find(|&s| self.symbol_byte(s, now).is_some_and(|b| b <= byte))
        })
        .unwrap_or(oldest)
    }

    /// Byte where line `line` (of the line engine) starts, if still remembered.
    pub fn line_byte(&self, line: u64) -> Option<u64> {
        self.line_byte_before(line, self.bytes)
    }

    /// [`line_byte`](Self::line_byte) while a scan is under way: `end` is a byte read already
    /// (the scan records how far it read only when it stops).
    fn line_byte_before(&self, line: u64, end: u64) -> Option<u64> {
        let now = self.lines.pos();
        if line >= now || now - line > LINES as u64 {
            return None;
        }
        Some(widen(self.line_starts[line as usize % LINES], end))
    }

    /// Line breaks in the held bytes from `from` to the end, at most `cap`; `None` when some
    /// of them are no longer held.
    pub fn breaks_from(&self, from: u64, cap: u64) -> Option<u64> {
        let (a, b) = self.bytes_from(from)?;
        let n = a
            .iter()
            .chain(b)
            .filter(|&&c| c == b'\n')
            .take(cap as usize)
            .count();
        Some(n as u64)
    }

    /// The held bytes from `from` to the end, as two slices (the ring may wrap); `None` when
    /// some of them are no longer held.
    pub fn bytes_from(&self, from: u64) -> Option<(&[u8], &[u8])> {
        if from > self.bytes || self.bytes - from > TEXT_RING as u64 {
            return None;
        }
        let a = from as usize % TEXT_RING;
        let b = self.bytes as usize % TEXT_RING;
        Some(if from == self.bytes {
            (&[][..], &[][..])
        } else if a < b {
            (&self.ring[a..b], &[][..])
        } else {
            (&self.ring[a..], &self.ring[..b])
        })
    }

    /// Scans `text`. Words (when `words` is set) and breakers are passed to `on_event`, which
    /// returns `true` to stop the scan there. The scan also stops after a byte that completes
    /// a halting character run or line loop. Returns how many bytes were consumed; what the
    /// text detectors found is merged into `found` (the strongest of each kind is kept), so
    /// that a push that finds nothing copies no evidence around. `read_ahead`, when given, is
    /// what [`read_piece`](Self::read_piece) already read from the start of `text` (its bytes
    /// and the class of the last): the scan goes on from there.
    ///
    /// Every byte goes through one short loop that tracks character runs and counts letters;
    /// words, lines and breakers are handled where a word or a line ends, so the work per byte
    /// does not grow with the detectors. Each byte is fully handled before the scan stops
    /// after it.
    #[inline]
    // One call per chunk: the detectors' settings, where to go on from, the findings, the sink.
    #[allow(clippy::too_many_arguments)]
    pub fn scan(
        &mut self,
        text: &[u8],
        words: bool,
        limits: &CharLimits,
        breakers: Option<&DFA>,
        mut read_ahead: Option<(usize, u8)>,
        found: &mut TextFinding,
        mut on_event: impl FnMut(&mut TextState, Event) -> bool,
    ) -> usize {
        let n = text.len();
        let base = self.bytes;
        // A halt found by this scan (one found earlier is the caller's to act on).
        let mut halted = false;
        // `text[head_from..i]` has yet to be added to the line's indentation, lead and first
        // word (until they are settled), and `text[word_from..i]` to the word (both hold no
        // white space).
        let (mut i, mut head_from, mut word_from) = (0, 0, 0);
        // The breaker automaton runs ahead to its next match, `brk` (`n` when there is none);
        // `dfa_from` and `dfa_state` are where it started, to step it again on an early stop.
        let (mut dfa_from, mut dfa_state) = (0, self.breaker_state);
        let mut brk = breakers.map_or(n, |dfa| self.next_breaker(dfa, text, 0));
        while i < n {
            let word_end = if !words {
                n
            } else if self.long_word {
                // Up to where word bytes and punctuation meet (a symbol ends there), or the
                // symbol reaches WORD_MAX; at least a byte.
                let room = WORD_MAX - (self.word_len as usize + (i - word_from));
                let kind = self.word_byte;
                let same = text[i..n.min(i + room)]
                    .iter()
                    .take_while(|&&b| is_run_byte(b) == kind)
                    .count();
                i + same.max(1)
            } else {
                word_from + (WORD_MAX - self.word_len as usize)
            };
            let (read, class) = match read_ahead.take() {
                Some(read_ahead) => read_ahead,
                None => {
                    // The line buffer takes the bytes as they are read, up to a full block.
                    let end = n
                        .min(word_end)
                        .min(brk + 1)
                        .min(i + (LINE_BLOCK - self.line_len as usize));
                    // White space ends a word, and a line's head until it is settled; after
                    // that, in a stream of tokens, only a newline needs a stop (fewer
                    // mispredicted exits).
                    let stop_at = if words {
                        SPACE | DIGIT
                    } else if !self.head_settled() {
                        SPACE
                    } else {
                        NEWLINE
                    };
                    self.read_bytes(
                        &text[i..end],
                        (base as usize).wrapping_add(i),
                        limits.alert_add,
                        stop_at,
                    )
                }
            };
            i += read;
            let mut stop = false;
            if self.run_alert(limits) {
                let f = self.char_finding(limits, base + i as u64);
                if f.beats(&found.chars) {
                    found.chars_in_code_line = self.within_code_line(f.onset, base + i as u64);
                }
                halted |= keep(&mut found.chars, f);
                self.runs = clamp_lanes(self.runs);
            }
            if class & SPACE != 0 {
                if !self.head_settled() {
                    self.line_head(&text[head_from..i - 1]);
                }
                head_from = i;
                if words && (self.word_len > 0 || word_from < i - 1) {
                    stop |= self.emit_word(
                        &text[word_from..i - 1],
                        base + word_from as u64,
                        &mut on_event,
                    );
                }
                word_from = i;
                self.long_word = false;
                if words && class & NEWLINE != 0 {
                    // A line break is a symbol, as it is a token: a loop of data does not run
                    // on from one line to the next unless its lines are cut alike.
                    stop |= self.emit_word(b"\n", base + (i - 1) as u64, &mut on_event);
                }
                if class & NEWLINE != 0 {
                    // The newline is not part of the line. The line is a heading when the
                    // last visible byte before the newline (behind at most two spaces or a
                    // "\r") is ':'.
                    self.line_len -= 1;
                    let last = (1..4)
                        .map(|k| (self.last >> (16 * k)) as u8)
                        .take_while(|&b| b != b'\n')
                        .find(|&b| CLASS[b as usize] & SPACE == 0)
                        .unwrap_or(0);
                    let heading = last == b':';
                    let line_start = self.line_start;
                    let (f, structured, kind, template) = self.end_line(base + i as u64, last);
                    halted |= f.level == Action::Halt;
                    halted |= keep(&mut found.templates, template);
                    if f.beats(&found.lines) {
                        found.lines = f;
                        found.lines_structured = structured;
                        let copies = f.span / f.period.max(1);
                        let end = base + i as u64;
                        let ladder = self.ladder_numbers(f.period, copies, end);
                        (found.lines_numbers, found.lines_counts) = (ladder.numbers, ladder.counts);
                        if ladder.numbers == Numbers::Ladder && ladder.regular < copies {
                            // The ladder is the copies since its last irregular step.
                            let cut = (copies - ladder.regular) * f.period;
                            found.lines.span -= cut;
                            found.lines.onset += cut as u64;
                        }
                        // A counter may step every other copy (`m[5][5] += 1` twice, then
                        // `m[6][6] += 1` twice): read as copies of twice the block, it is a
                        // ladder.
                        if matches!(found.lines_numbers, Numbers::Varied | Numbers::Records)
                            && copies >= 6
                            && self.numbers(2 * f.period, copies / 2, end) == Numbers::Ladder
                        {
                            found.lines_numbers = Numbers::Ladder;
                        }
                        found.lines_block = self.block_of_shapes(f.period);
                        found.lines_markup = self.block_of_markup(f.period);
                    }
                    halted |= keep(&mut found.growth, self.growth_finding(line_start));
                    halted |= keep(&mut found.counter, self.counter_finding());
                    stop |= on_event(self, Event::LineEnd { heading, kind });
                } else if !self.head_settled() {
                    self.line_space(text[i - 1]);
                }
            } else if words && class & DIGIT != 0 {
                // A digit is a symbol of its own, as the tokenizers of the models guarded cut
                // numbers (Llama's, Gemma's, SmolLM2's): a loop of `1234567890, ` is eleven
                // symbols a copy, as it is eleven tokens, not one word.
                if !self.head_settled() {
                    self.line_head(&text[head_from..i]);
                }
                head_from = i;
                if self.word_len > 0 || word_from < i - 1 {
                    stop |= self.emit_word(
                        &text[word_from..i - 1],
                        base + word_from as u64,
                        &mut on_event,
                    );
                }
                stop |= self.emit_word(&text[i - 1..i], base + (i - 1) as u64, &mut on_event);
                word_from = i;
                self.word_byte = true;
            } else if words && self.long_word {
                // In a long run, a byte of the other kind than the last begins a symbol (a run
                // of one kind is still cut at WORD_MAX).
                let b = text[i - 1];
                let word_byte = is_run_byte(b);
                let len = self.word_len as usize + (i - 1 - word_from);
                if (word_byte != self.word_byte && len > 0) || len == WORD_MAX {
                    if !self.head_settled() {
                        self.line_head(&text[head_from..i - 1]);
                    }
                    head_from = i - 1;
                    stop |= self.emit_word(
                        &text[word_from..i - 1],
                        base + word_from as u64,
                        &mut on_event,
                    );
                    word_from = i - 1;
                }
                self.word_byte = word_byte;
            } else if words && i == word_end {
                // A word as long as WORD_MAX is cut here, and the run goes on in symbols cut
                // where word bytes and punctuation meet: `std::iter::new(` repeated without a
                // space is a loop of six symbols, not of 24-byte slices.
                if !self.head_settled() {
                    self.line_head(&text[head_from..i]);
                }
                head_from = i;
                stop |= self.emit_word(&text[word_from..i], base + word_from as u64, &mut on_event);
                word_from = i;
                self.long_word = true;
                self.word_byte = is_run_byte(text[i - 1]);
            }
            if self.line_len as usize == LINE_BLOCK {
                // A template's skeleton is its line's first block; only code needs one.
                if self.line_skeleton.is_none() && self.structure.structured() {
                    self.line_skeleton = Some(skeleton(&self.line, self.structure.indent()));
                }
                self.structure.block(&self.line);
                self.novelty.read(&self.line, false);
                self.counting.read(&self.line);
                halted |= keep(&mut found.counter, self.counter_finding());
                self.line_hash = fold(self.line_hash, hash_folded(&mut self.line, LINE_BLOCK));
                self.line_len = 0;
            }
            if i - 1 == brk {
                if let Some(dfa) = breakers {
                    stop |= on_event(self, Event::Breaker);
                    (dfa_from, dfa_state) = (i, self.breaker_state);
                    brk = self.next_breaker(dfa, text, i);
                }
            }
            if stop || halted {
                break;
            }
        }
        if !self.head_settled() {
            self.line_head(&text[head_from..i]);
        }
        if words && word_from < i {
            if self.word_len == 0 {
                self.word_start = base + word_from as u64;
            }
            let held = self.word_len as usize;
            self.word[held..held + i - word_from].copy_from_slice(&text[word_from..i]);
            self.word_len += (i - word_from) as u8;
        }
        if let Some(dfa) = breakers.filter(|_| i <= brk && i < n) {
            // Stopped before the automaton's lookahead ended: step it to here.
            self.breaker_state = text[dfa_from..i]
                .iter()
                .fold(dfa_state, |s, &b| dfa.next_state(Anchored::No, s, b));
        }
        self.bytes = base + i as u64;
        i
    }

    /// Reads a token piece at once when it lies inside a line whose head is settled, with no
    /// breakers to look for (the common case): it then stops only at a newline or a run
    /// alert. Returns `Ok` when the whole piece is read and nothing stopped it; otherwise the
    /// bytes it read and the class of the last, for [`scan`](Self::scan) to go on from.
    #[inline]
    pub fn read_piece(
        &mut self,
        piece: &[u8],
        limits: &CharLimits,
        breakers: bool,
    ) -> Result<(), Option<(usize, u8)>> {
        let n = piece.len();
        if breakers || !self.head_settled() || n + self.line_len as usize >= LINE_BLOCK {
            return Err(None);
        }
        let at = self.bytes as usize;
        let (read, class) = self.read_bytes(piece, at, limits.alert_add, NEWLINE);
        if read < n || class & NEWLINE != 0 || self.run_alert(limits) {
            return Err(Some((read, class)));
        }
        self.bytes += n as u64;
        Ok(())
    }

    /// A character run has reached the smallest threshold that is on: it needs judging.
    #[inline(always)]
    fn run_alert(&self, limits: &CharLimits) -> bool {
        (self.runs + limits.alert_add) & LANE_HIGH != 0
    }

    /// Reads `bytes` up to and including the first byte whose class has a bit of `stop_at`
    /// (white space, or a newline) or at which a character run reaches the level `alert_add`
    /// is made for. Keeps each byte in the ring (the first at byte `at`) and the line buffer
    /// (`bytes` fits in it), updates the run lanes and counts the letters. Returns how many
    /// bytes it read and the class of the last one. Every byte of the text goes through this
    /// loop: it is kept short, with its state in registers.
    #[inline(always)]
    fn read_bytes(&mut self, bytes: &[u8], at: usize, alert_add: u64, stop_at: u8) -> (usize, u8) {
        let ring: &mut [u8; TEXT_RING] = (&mut *self.ring).try_into().expect("TEXT_RING bytes");
        let line = &mut self.line;
        let line_at = self.line_len as usize;
        let (mut l, mut r, mut n) = (self.last, self.runs, self.line_letters);
        let mut class = 0;
        let mut read = 0;
        for &b in bytes {
            ring[(at + read) & (TEXT_RING - 1)] = b;
            line[(line_at + read) & (LINE_BLOCK - 1)] = b;
            read += 1;
            // Runs of byte periods 1..=4, one 16-bit lane each: a lane whose byte `p` back
            // differs from `b` starts again from 0 (the lanes stay below 0x8000: a mask of the
            // low 15 bits is enough).
            let same = (((l ^ (b as u64 * LANE1)) + LANE_LOW) & LANE_HIGH) ^ LANE_HIGH;
            r = (r + LANE1) & (same - (same >> 15));
            l = (l << 16) | b as u64;
            class = CLASS[b as usize];
            n += (class & LETTER != 0) as u32;
            if ((r + alert_add) & LANE_HIGH) | (class & stop_at) as u64 != 0 {
                break;
            }
        }
        (self.last, self.runs, self.line_letters) = (l, r, n);
        self.line_len += read as u8;
        (read, class)
    }

    /// Steps the breaker automaton from `text[from]` up to and including the next byte that
    /// completes a breaker, whose index it returns (`text.len()` when none does).
    fn next_breaker(&mut self, dfa: &DFA, text: &[u8], from: usize) -> usize {
        let mut state = self.breaker_state;
        for (k, &b) in text.iter().enumerate().skip(from) {
            state = dfa.next_state(Anchored::No, state, b);
            if dfa.is_match(state) {
                self.breaker_state = state;
                return k;
            }
        }
        self.breaker_state = state;
        text.len()
    }

    /// The line's indentation, lead and first word are known: nothing more is read for them.
    #[inline]
    fn head_settled(&self) -> bool {
        self.structure.head_settled()
    }

    /// Reads bytes without white space into the line's lead and first word.
    fn line_head(&mut self, seg: &[u8]) {
        self.structure.head(seg);
    }

    /// Reads one white-space byte other than a newline into the line's indentation, lead and
    /// first word.
    fn line_space(&mut self, b: u8) {
        self.structure.space(b);
    }

    /// Ends the word being read, if any, as a symbol. Returns what `on_event` returned.
    pub fn flush_word(&mut self, mut on_event: impl FnMut(&mut TextState, Event) -> bool) -> bool {
        self.word_len > 0 && self.emit_word(&[], 0, &mut on_event)
    }

    /// Ends the word made of the bytes held from earlier chunks and `tail`, which begins at
    /// byte `start` when nothing is held. Returns what `on_event` returned.
    fn emit_word(
        &mut self,
        tail: &[u8],
        start: u64,
        on_event: &mut impl FnMut(&mut TextState, Event) -> bool,
    ) -> bool {
        let (h, start) = if self.word_len == 0 {
            (xxh3_64(tail), start)
        } else {
            let held = self.word_len as usize;
            let len = held + tail.len();
            self.word[held..len].copy_from_slice(tail);
            (xxh3_64(&self.word[..len]), self.word_start)
        };
        self.word_len = 0;
        on_event(self, Event::Word(h as u32, start))
    }

    fn clear_line(&mut self) {
        self.line_len = 0;
        self.line_hash = 0;
        self.line_letters = 0;
        self.line_skeleton = None;
    }

    /// Ends the line being read (the next begins at byte `next`; `last` is its last visible
    /// byte); returns the line engine's evidence, whether the line was code or a table row,
    /// and its kind.
    fn end_line(&mut self, next: u64, last: u8) -> (Finding, bool, LineKind, Finding) {
        let indent = self.structure.indent();
        let (kind, structured) = self
            .structure
            .end_line(&self.line[..self.line_len as usize], last);
        self.novelty
            .read(&self.line[..self.line_len as usize], true);
        self.novelty.end_word();
        self.counting.read(&self.line[..self.line_len as usize]);
        self.counting.read(b"\n");
        debug_assert_eq!(self.counting.pos(), next, "every byte is counted once");
        let mut f = Finding::default();
        let mut template = Finding::default();
        if self.line_letters >= self.min_letters.max(1) as u32 {
            if structured {
                let skel = self
                    .line_skeleton
                    .unwrap_or_else(|| skeleton(&self.line[..self.line_len as usize], indent));
                if let Some(run) = self.templates.push(skel) {
                    template = self.template_finding(run);
                }
            } else {
                self.templates.interrupt();
            }
            // Read before `hash_folded` overwrites the line: only code nests its blocks, one
            // copy deeper than another, within the buffer.
            let n = self.lines.pos();
            let nest = if structured && indent > 0 && self.line_hash == 0 {
                self.nest_line(n, indent)
            } else {
                self.nesting.gap();
                nesting::Nest::default()
            };
            let h = fold(
                fold(
                    self.line_hash,
                    hash_folded(&mut self.line, self.line_len as usize),
                ),
                indent as u64,
            );
            if nest.run >= nesting::NEST_WARN {
                let f = self.nest_finding(nest, n);
                if f.beats(&template) {
                    template = f;
                }
            }
            self.line_starts[n as usize % LINES] = self.line_start as u32;
            self.markup_lines = self.markup_lines << 1 | (kind == LineKind::Markup) as u16;
            if self.lines.push_plain(h as u32) != Action::Continue {
                f = self.lines.finding();
            }
        }
        self.clear_line();
        self.line_start = next;
        (f, structured, kind, template)
    }

    /// Signs the line being read (whole in the buffer), the line engine's line `line`, and
    /// reads it into the nesting detector. Out of line: the per-byte loop it would sit beside is kept small.
    #[inline(never)]
    fn nest_line(&mut self, line: u64, indent: u32) -> nesting::Nest {
        let sig = nesting::signature(&self.line[..self.line_len as usize]);
        if sig == 0 {
            self.nesting.gap();
            return nesting::Nest::default();
        }
        self.nesting.push(line, sig, indent)
    }
}

fn start_state(dfa: Option<&DFA>) -> StateID {
    dfa.and_then(|d| d.start_state(Anchored::No).ok())
        .unwrap_or(StateID::ZERO)
}

/// The hash of `line[..len]` with every number read as `0`, however many digits it has (so
/// that a counter does not hide a repeated line, even as it goes from 9 to 10); the line is
/// overwritten.
fn hash_folded(line: &mut [u8; LINE_BLOCK], len: usize) -> u64 {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    // Whether two digits stand side by side anywhere, the last chunk's last byte included.
    let (mut runs, mut carry) = (0u64, 0u64);
    for chunk in line[..len.div_ceil(8) * 8].chunks_exact_mut(8) {
        let x = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        // Digits become 0..=9; a byte is one when it is below 0x80 and stays below 0x80
        // after 10 is taken from it with its top bit set (no borrow crosses bytes).
        let a = x ^ ZEROS;
        let digit = !((a | HIGH) - 0x0a0a_0a0a_0a0a_0a0a) & !a & HIGH;
        runs |= digit & (digit << 8 | carry);
        carry = digit >> 56;
        let mask = (digit >> 7) * 0xff;
        chunk.copy_from_slice(&(x & !mask | ZEROS & mask).to_le_bytes());
    }
    if runs == 0 {
        return xxh3_64(&line[..len]);
    }
    // Numbers of several digits: keep one `0` of each run (every digit is a `0` now, and
    // every `0` a digit).
    let mut w = 0;
    for r in 0..len {
        let b = line[r];
        if b != b'0' || w == 0 || line[w - 1] != b'0' {
            line[w] = b;
            w += 1;
        }
    }
    xxh3_64(&line[..w])
}

/// Keeps `f` in `slot` when it is the stronger evidence; whether `f` halts.
#[inline]
fn keep(slot: &mut Finding, f: Finding) -> bool {
    if f.beats(slot) {
        *slot = f;
    }
    f.level == Action::Halt
}

#[inline]
fn fold(h: u64, v: u64) -> u64 {
    (h ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29)
}

/// Restores a full byte offset from its low 32 bits, given a later offset `now`.
fn widen(low: u32, now: u64) -> u64 {
    now - (now as u32).wrapping_sub(low) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text state after reading `text` in one chunk, as words.
    fn read(text: &str) -> TextState {
        let mut t = TextState::new(3, 8, 4, (12, 0), None);
        let limits = CharLimits::new(24, 96, 2048);
        t.scan(
            text.as_bytes(),
            true,
            &limits,
            None,
            None,
            &mut TextFinding::default(),
            |_, _| false,
        );
        t
    }

    /// Whether the end of `text` (read in one chunk) lies on a line near loops leave out.
    fn unprose_after(text: &str) -> bool {
        read(text).unprose()
    }

    #[test]
    fn prose_lists_and_quotes_count_but_fields_markup_and_code_do_not() {
        for prose in [
            "The cat sat on the mat",
            "12. **Refine Your Bread:** Refine it",
            "*   **Speed**: JavaScript is fast",
            "- Add support for the vector extension",
            "> As the saying goes",
            "\"Quoted speech\" goes on",
            "Note the colon: inside a line",
            "first line\nsecond line",
        ] {
            assert!(!unprose_after(prose), "{prose:?}");
        }
        for structured in [
            "License: GPL-2+",
            "gcc/m2/examples:",
            "Files: doc/po4a/po/pl.po",
            "<a href=\"x\">link</a>",
            "@node Overview",
            "# | True  | add   |",
            ">>> print(c.flags)",
            "    indented code",
            "```\nfenced code",
            "| a | b |\n| c | d |",
            "2021-01-09  H.J. Lu  <hongjiu.lu@intel.com>",
            "━━━━━━━━━━",
            "--- a/src/lib.rs",
        ] {
            assert!(unprose_after(structured), "{structured:?}");
        }
        // A new line starts afresh.
        assert!(!unprose_after("License: GPL-2+\nThe text goes on"));
    }

    #[test]
    fn lines_with_names_only_code_writes_aligned_columns_or_data_lead_out_of_prose() {
        // What follows such a line stands in a run of code.
        for code in [
            "assert_type(f4 + i8, np.floating)\nassert_type",
            "def add(x1: i8, x2: u8) -> Any: ...\n@overload\ndef",
            "syn keyword sqlType bigint_unsigned\nsyn",
            "nnoremenu 1.80 PopUp.Select\\ &Line\tV\nonoremenu",
            // After a line of data: a table of values (a program's printed output).
            "y = 0, m = 10, d = 5\ny",
            // A line ending in a colon in a run of code is a label or a block, not a heading.
            "switch (c) {\ncase 3:\ncase 4:\nre",
        ] {
            assert!(unprose_after(code), "{code:?}");
        }
        // Prose: brackets after a space, names joined by spaces, code quoted in backticks.
        for prose in [
            "The cat (a tabby) sat on the mat.\nThe",
            "Call `run_all(jobs)` to start them.\nThe",
            "\tIndented by a tab, then prose.\nThe",
            "The steps are as follows:\nFirst",
        ] {
            assert!(!unprose_after(prose), "{prose:?}");
        }
    }

    #[test]
    fn bullet_items_are_told_apart() {
        let bullet_after = |text: &str| read(text).bullet();
        for item in ["* Add support for", "- item", "+ more", "x\n* next"] {
            assert!(bullet_after(item), "{item:?}");
        }
        for other in ["*Bold*", "12. Step", "The - dash", "* item\nnext line"] {
            assert!(!bullet_after(other), "{other:?}");
        }
    }
}
