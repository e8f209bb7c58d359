//! The text side of a stream: character runs, words and lines, structure context, breakers,
//! and the recent bytes that become the evidence of a verdict.
//!
//! Text arrives as token pieces or as chunks of any size and is cut the same way whatever the
//! chunking: words are maximal runs of non-space bytes (cut where word bytes and punctuation
//! meet when longer than 8 bytes, two tokens' worth), each digit is a word of its own and so is each line break,
//! as the tokenizers of the models guarded cut them; lines end at `\n`. Words become symbols
//! of the guard's main engine when the stream has no token ids; lines, with every number read
//! as one `0` so that counters do not hide a loop, feed a small engine of their own.

use aho_corasick::automaton::{Automaton, StateID};
use aho_corasick::dfa::DFA;
use aho_corasick::Anchored;
use xxhash_rust::xxh3::xxh3_64;

use crate::counting::Counting;
use crate::engine::{Engine, EngineParams, Finding};
use crate::journal::{Array, Journal, Owner};
use crate::novelty::Novelty;
use crate::structure::{LineKind, Structure};
use crate::template::{skeleton, Templates};
use crate::verdict::{Action, LoopKind};

mod content;
mod lines;
mod links;
mod nesting;
mod runs;
mod scan;

pub(crate) use self::links::{in_url, Url};
pub(crate) use self::runs::CharLimits;

pub(crate) use self::content::{
    is_data, is_digit_fill, is_drawing, is_drawn_pattern, is_empty_comment, is_escaped_fill,
    is_filler, is_list_fill, is_rule_text, is_underline, is_word, whole_tokens, BUFFER_BYTES,
};

/// Recent bytes kept for evidence and exempt checks.
pub(crate) const TEXT_RING: usize = 1024;
/// Recent symbols whose starting byte is remembered: a default max period, so that the
/// evidence of any default loop is held (the rest of a guard's 16 KiB goes to the symbol ring
/// and the n-gram tables).
pub(crate) const STARTS: usize = 256;
/// Lines held by the line engine.
const LINES: usize = 64;
/// Copies of a line written again at which the default presets halt it.
pub(crate) const LINE_HALT_DEFAULT: u32 = 8;

/// Bound `n` of a ladder or a count (people write those out too, short ones) for a preset that
/// halts lines written again at `line_halt` copies: one that waits longer for those than the
/// default (lenient: 12) waits as much longer for ladders and counts, up to 255 copies'
/// worth; none waits less.
pub(crate) fn patient(n: u32, line_halt: u32) -> u32 {
    n * line_halt.clamp(LINE_HALT_DEFAULT, u8::MAX as u32) / LINE_HALT_DEFAULT
}
/// New words among the last 64 at which a text says nothing new.
const NOTHING_NEW: u32 = 1;
/// Copies past which a counter ladder that names something new on each copy (`REG_R0` …
/// `REG_R31`, `user1=user2=…`) halts all the same: tables that long are not written out by
/// hand.
pub(crate) const NAMED_LADDER_COPIES: u32 = 64;

/// Copies past which a counter ladder of markup halts. Markup has no loop statement, so an
/// enumeration in it is written out, as long as what it enumerates: the 31 days of a month,
/// the 32 registers of a processor (valgrind's target descriptions), twelve workspaces of
/// three lines each (a GNOME keybinding schema).
pub(crate) const MARKUP_LADDER_COPIES: u32 = 32;

/// Copies of a ladder whose entries carry their index in a comment (`#  65 A`, `/* 58 */`)
/// before it halts (a warning half way): a table numbered for its reader runs over its
/// domain, up to a byte's 256 values (a key map, a signal table); a model's ladder does not
/// number itself so (see `TextState::indexed`). A count numbered so waits as long.
pub(crate) const INDEXED_LADDER_COPIES: u32 = 256;
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
/// meet (and every `WORD_MAX` bytes of one kind). Two tokens' worth: the tokenizers guarded
/// give 3 to 4 bytes a token (SmolLM2 on prose 4.1, on code 3.2; Gemma3 on code 2.9), and a
/// quoted name or a path written again in a line (`'git-branch-show.py', `) is then a loop of
/// several symbols a copy, as it is of several tokens, not of one symbol that waits for 40.
const WORD_MAX: usize = 8;
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
                // A comment leader drawn across the line, as `////` and `####` are: Lisp's
                // and assembly's `;;;;`, TeX's, MATLAB's and Erlang's `%%%%`.
                | b';'
                | b'%'
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
    /// A word ended: its symbol, the byte where it began, and whether it lies in a web address
    /// (see [`in_url`]).
    Word(u32, u64, bool),
    /// A breaker pattern just ended.
    Breaker,
    /// A line ended. `heading` when its last visible byte is ':' ("Changes in 2.37:"): a
    /// heading introduces a listing, and its repetition is not a near loop. `kind` is what the
    /// structure model made of the whole line.
    LineEnd { heading: bool, kind: LineKind },
}

/// `s` without leading and trailing ASCII whitespace.
pub(crate) fn trim_ascii(s: &[u8]) -> &[u8] {
    let start = s
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &s[start..end]
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
    /// A ladder's newest copies hold an index comment (`#  65 A`, `/* 58 */`): a table
    /// numbered for its reader (see `TextState::indexed`).
    pub lines_indexed: bool,
    /// A ladder steps a number in a name (`opACC7`, `$t2`), or the changing numbers of varied
    /// lines are all parts of names (`m680x-6301`): see `Ladder::in_names`.
    pub lines_in_names: bool,
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
    /// Whether line evidence (counts and growing names among it) may warn.
    lines_warn: bool,
    /// The copies at which lines written again halt, up to 255 (see [`patient`]); 0: line
    /// evidence never halts.
    line_halt: u8,
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
            line_halt: line_halt.min(u8::MAX as u32) as u8,
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
        self.copy_scalars_from(src);
        // The rings `copy_scalars_from` leaves alone (its `skip` list), the line engine's too.
        self.lines.copy_from(&src.lines);
        self.ring.copy_from_slice(&src.ring);
        self.starts.copy_from_slice(&src.starts);
        self.line_starts.copy_from_slice(&src.line_starts);
    }

    /// Makes this state's scalars a copy of `src`'s (a state of the same settings, or one
    /// [`hollow`](Self::hollow)ed from it), leaving its rings alone (see
    /// [`Engine::copy_scalars_from`]). Allocates nothing.
    pub fn copy_scalars_from(&mut self, src: &TextState) {
        self.lines.copy_scalars_from(&src.lines);
        copy_fields!(
            self,
            src,
            [
                bytes,
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
                line_halt,
                line_start,
                markup_lines,
                nesting,
                templates,
                template_warn,
                template_budget,
                line_skeleton,
                breaker_state,
                min_letters,
            ],
            // Copied by `copy_from`.
            skip[lines, ring, starts, line_starts]
        );
    }

    /// A copy of this state without its rings, to hold
    /// [`copy_scalars_from`](Self::copy_scalars_from)'s copies. Allocates.
    pub fn hollow(&self) -> TextState {
        TextState {
            ring: Box::default(),
            starts: Box::default(),
            line_starts: Box::default(),
            lines: self.lines.hollow(),
            structure: self.structure.clone(),
            novelty: self.novelty.clone(),
            counting: self.counting.clone(),
            nesting: self.nesting.clone(),
            templates: self.templates.clone(),
            ..*self
        }
    }

    /// Notes in `journal` every slot of the rings that a push of `bytes`, making at most
    /// `symbols` stream symbols from `sym` on, can overwrite: the bytes' place in the byte ring,
    /// where each symbol begins and where each line they end began. The line engine's own
    /// rings are noted line by line, as each is pushed.
    pub fn note_push(&self, bytes: &[u8], symbols: u64, sym: u64, journal: &mut Journal) {
        for b in self.bytes..self.bytes + bytes.len() as u64 {
            let at = b as usize % TEXT_RING;
            journal.note(Owner::Stream, Array::Ring, at, self.ring[at] as u32);
        }
        for s in sym..sym + symbols {
            let at = s as usize % STARTS;
            journal.note(Owner::Stream, Array::Starts, at, self.starts[at]);
        }
        // A line ends at a newline only.
        let lines = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
        let n = self.lines.pos();
        for l in n..n + lines {
            let at = l as usize % LINES;
            journal.note(Owner::Stream, Array::LineStarts, at, self.line_starts[at]);
        }
    }

    /// Every slot of the rings, the line engine's included, for tests that compare two states.
    #[cfg(test)]
    pub fn arrays(&self) -> Vec<u64> {
        let mut all = self.lines.arrays();
        all.extend(self.ring.iter().map(|&x| x as u64));
        all.extend(self.starts.iter().map(|&x| x as u64));
        all.extend(self.line_starts.iter().map(|&x| x as u64));
        all.extend([self.bytes, self.line_hash, self.runs, self.last]);
        all
    }

    /// Notes in `journal` the slots [`forget`](Self::forget) will clear.
    pub fn note_forget(&self, journal: &mut Journal) {
        self.lines.note_forget(journal, Owner::Lines);
    }

    /// Puts `old` back into slot `index` of `array` (of the line engine, for `Owner::Lines`),
    /// as [`Journal::rewind`] asks.
    pub fn put(&mut self, owner: Owner, array: Array, index: usize, old: u32) {
        match (owner, array) {
            (Owner::Lines, _) => self.lines.put(array, index, old),
            (Owner::Stream, Array::Ring) => self.ring[index] = old as u8,
            (Owner::Stream, Array::Starts) => self.starts[index] = old,
            (Owner::Stream, Array::LineStarts) => self.line_starts[index] = old,
            (Owner::Stream, _) => debug_assert!(false, "{array:?} is the stream engine's"),
        }
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
        (
            new <= NOTHING_NEW && !self.novelty.in_new_section(),
            new <= LITTLE_NEW,
        )
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

    /// The held bytes before byte `before` hold `said` in quotes (`"…"` or `'…'`): the text
    /// printed it, or named it, before (see `unrolled::copies_to_halt`). Words of 8 to 200
    /// bytes only; a pass over the bytes held, made when a loop of prose lines is judged.
    pub fn quoted_before(&self, said: &[u8], before: u64) -> bool {
        if !(8..=200).contains(&said.len()) {
            return false;
        }
        let from = self.bytes.saturating_sub(TEXT_RING as u64);
        let Some((a, b)) = self.bytes_from(from) else {
            return false;
        };
        let held = before.min(self.bytes).saturating_sub(from) as usize;
        let mut text = [0u8; TEXT_RING];
        let a_len = a.len().min(held);
        let b_len = (held - a_len).min(b.len());
        text[..a_len].copy_from_slice(&a[..a_len]);
        text[a_len..a_len + b_len].copy_from_slice(&b[..b_len]);
        let text = &text[..a_len + b_len];
        memchr::memmem::find_iter(text, said).any(|i| {
            let (open, close) = (i.checked_sub(1).map(|o| text[o]), text.get(i + said.len()));
            matches!(open, Some(q @ (b'"' | b'\'')) if close == Some(&q))
        })
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
            &mut Url::Out,
            None,
            |_, _, _| false,
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
