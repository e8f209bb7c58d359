//! How the detectors' findings become a verdict: each finding judged where it stands (in
//! code, in data, in a drawing, in markup, in a list), the strongest kept, and the guard's
//! warning streak, statistics and evidence brought up to date.

use super::{block, says_nothing_new, text_byte, Mode, StreamGuard};
use crate::engine::Finding;
use crate::text::{
    is_data, is_drawing, is_drawn_pattern, is_empty_comment, is_escaped_fill, is_filler,
    is_list_fill, is_rule_text, is_underline, is_word, Numbers, TextFinding, BUFFER_FACTOR,
    CODE_LINE, NAMED_LADDER_COPIES,
};
use crate::verdict::{Action, LoopKind, Unit, Verdict};

/// Lines a counter ladder covers (copies times the lines in a copy) before it halts. The
/// longest ladders in 3.2 M tokens of human code and documentation (`scripts/code_corpus.py`)
/// cover 17 lines (macro arms counting to 17, generated getters `get 0()` to `get 15()`).
const LADDER_LINES: u64 = 24;

/// Copies of a block of several lines, its counter stepping, from which it may halt (and
/// `LADDER_LINES` lines): people unroll a block a few times (the rounds of a hash, the
/// channels of a device), and two or three copies of a long block are not yet a loop. A block
/// whose numbers run on as one count through the copies halts sooner, once that count has
/// `LADDER_LINES` rungs, as a ladder of one line a rung does.
const BLOCK_LADDER_COPIES: u32 = 5;

/// How many times the copies that halt repeated lines a list of records needs (lines with
/// their own key, a date or an issue number: a change log's entries): a change log lists
/// release after release, but not two dozen saying one thing.
const RECORD_FACTOR: u32 = 3;

/// Copies past which a counter ladder of markup halts. Markup has no loop statement, so an
/// enumeration in it is written out, as long as what it enumerates: the 31 days of a month,
/// the 32 registers of a processor (valgrind's target descriptions), twelve workspaces of
/// three lines each (a GNOME keybinding schema).
const MARKUP_LADDER_COPIES: u32 = 32;

/// How much longer than `halt_span` a loop of data (a block without words) must run before it
/// halts. The longest exact runs of data in 3.2 M tokens of human code cover 135 tokens (a
/// regex repeated eleven times in a shell script; runs of `0x00,` in a Unicode table).
const DATA_SPAN_FACTOR: u32 = 4;

/// Copies of one line of code written out verbatim before they halt. In 3.8 M tokens of
/// human code (`scripts/code_corpus.py`, C and C++ included) the longest such runs are five
/// (`ecp_nistz256_point_double(r, r);`) and four; a block of two to four lines with a word
/// in it never stands three times in a row, but for `NULL` slots (see `is_filler`) and one
/// call wrapped over five lines, written three times (see `one_line`).
const CODE_LINE_COPIES: u32 = 8;

/// Copies of a line of prose in code (a comment that says something, a sentence in a string,
/// between tags or after a statement: see `prose_line`) written out verbatim before they
/// halt. Nobody unrolls a sentence: in 3.8 M tokens of human code and documents three alike
/// stand in a row at most (an example's output, `* // 'tick'`), and those are short.
const PROSE_LINE_COPIES: u32 = 4;

/// Copies of a drawing's row (or block of rows) past which it is taller than a screen.
const DRAWING_ROWS: u32 = 48;

impl StreamGuard {
    /// Turns the detectors' findings into the verdict for symbol `sym`, and records it.
    #[inline(never)]
    pub(super) fn decide(&mut self, sym_f: Finding, sym: u64, text: TextFinding) -> Verdict {
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
                    if is_rule_text([a, b]) || is_underline([a, b]) {
                        // A rule drawn with tokens (`━━━━`, `-----`): judged like a separator
                        // run. One whose first byte is no longer known is long past a line.
                        let limit = self.config.inner.settings.separator_run_halt as u64;
                        let bytes = onset_byte.map_or(u64::MAX, |o| self.text.bytes - o);
                        action = if limit > 0 && bytes >= limit {
                            Action::Halt
                        } else {
                            Action::Continue
                        };
                        kind = LoopKind::CharRun;
                    } else if onset_byte.is_some_and(|o| self.text.bytes - o < CODE_LINE)
                        && is_drawn_pattern([a, b])
                    {
                        // A rule drawn with a pattern (`=x=x=x=`): a decoration as long as a
                        // line; longer, it is judged as any loop.
                        action = Action::Continue;
                        kind = LoopKind::CharRun;
                    } else if is_drawing(block) {
                        // Rows of a drawing (a chart's axis, a frame: no letter or digit)
                        // repeat by design, as many as the picture is tall: only a drawing
                        // taller than a screen halts. Empty comments are no picture: they
                        // halt as a line of code written out again does.
                        let rows = if is_empty_comment(block) {
                            CODE_LINE_COPIES
                        } else {
                            DRAWING_ROWS
                        };
                        if f.span / f.period.max(1) < rows {
                            action = Action::Continue;
                        }
                    } else if is_data(block) || is_filler(block) {
                        // A block without words — numbers, hex, a regex, base64, or only
                        // `NULL`s — is data, and tables of data repeat their values and rows:
                        // only a long run of it halts, four times the span and one copy more,
                        // and it warns half way there.
                        let s = &self.config.inner.settings;
                        let copies = f.span / f.period.max(1);
                        let base = DATA_SPAN_FACTOR * s.halt_span.max(16);
                        // A buffer spelled out (one escaped byte, one number in a list) runs
                        // longer still: asked only once the run is long enough to answer.
                        let span = if f.span >= base / 2 && self.loop_is_fill(start, onset_byte) {
                            BUFFER_FACTOR * base
                        } else {
                            base
                        };
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
                        && !imports(block)
                    {
                        // In code, one line written out again is an unrolled loop
                        // (`point_double(r, r);` five times): people write a few of them,
                        // a model writes its loop on. It halts from `CODE_LINE_COPIES`; a
                        // line of prose (a comment, a sentence) from `PROSE_LINE_COPIES`; an
                        // assignment that does nothing the second time as any loop does.
                        let copies = if prose_line(block) {
                            PROSE_LINE_COPIES
                        } else if same_value_again(block) {
                            0
                        } else {
                            CODE_LINE_COPIES
                        };
                        if f.span / f.period.max(1) < copies {
                            action = action.min(Action::Warn);
                        }
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
        // As text, a loop that began before every symbol whose place is kept (a near loop
        // whose coverage held long before it halted) reports the oldest of them, and its byte:
        // it began there or before.
        let (onset, onset_byte) = match onset_byte {
            None if self.mode == Mode::Text && self.text.bytes > 0 => {
                let oldest = self.text.onset_symbol(None, now).max(f.onset);
                (oldest, self.text_byte(oldest, now))
            }
            _ => (f.onset, onset_byte),
        };
        Verdict {
            action,
            kind,
            unit: Unit::Symbol,
            period: f.period,
            repeats: f.repeats(),
            span: f.span,
            onset,
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

    /// The loop whose last copy begins at byte `start` (the whole loop at `onset`, if still
    /// known) is a buffer spelled out, one escaped byte or one number of a list again and
    /// again: read over the bytes just before that copy, a few escapes' or items' worth, so
    /// that whole ones lie in it however the copy is cut, and whatever the newest token adds
    /// after the loop.
    fn loop_is_fill(&self, start: u64, onset: Option<u64>) -> bool {
        // An onset no longer mapped to a byte lies before all the bytes held.
        let from = start.saturating_sub(24).max(onset.unwrap_or(0));
        let len = (start - from.min(start)) as usize;
        self.text.bytes_from(from).is_some_and(|(a, b)| {
            let a_len = a.len().min(len);
            let b_len = (len - a_len).min(b.len());
            let parts = [&a[..a_len], &b[..b_len]];
            is_escaped_fill(parts) || is_list_fill(parts)
        })
    }

    fn line_verdict(&self, text: &TextFinding, sym: u64, now: u64) -> Verdict {
        let f = text.lines;
        // A ladder in code covers the lines between its rungs too (a closing `}` after each
        // call, which has no letters and is not a line the line engine counts).
        let lines = if text.lines_structured
            && text.lines_numbers == Numbers::Ladder
            && (f.span as u64) < LADDER_LINES
        {
            self.text
                .line_byte(f.onset)
                .and_then(|b| self.text.breaks_from(b, LADDER_LINES))
                .map_or(f.span as u64, |n| n.max(f.span as u64))
        } else {
            f.span as u64
        };
        // What halts depends on the lines and on how the numbers in the copies change. Prose
        // lines repeated halt (`29. Remove the tire…`), their numbers the same or not, but for
        // records: lines that each carry their own key (a date, an issue number, a version)
        // are a change log's entries, however alike their words, and halt only past
        // `RECORD_FACTOR` times as many copies. In code, tables, fields and markup, where a
        // token-level loop decides, repeated lines only warn, but for a counter ladder, which
        // halts once it covers `LADDER_LINES` (and, a block of several lines, from
        // `BLOCK_LADDER_COPIES` copies): people write out short ones (unrolled tables, macro
        // arms, release links), models run theirs to the token limit. Numbers that vary
        // otherwise are a table of values or a list of links.
        // A ladder that names something new as it goes is a table: a one-line ladder whose
        // counter sits in a name (`KEY_F7`, `handler12`) until the text says nothing new, a
        // ladder whose copies hold lines of several shapes (a device's registers for each
        // channel) while it names new things densely; both at most `NAMED_LADDER_COPIES`.
        // Markup has no loop statement, and its ladders wait for `MARKUP_LADDER_COPIES`
        // (warning half way).
        let copies = f.span / f.period.max(1);
        let names_new = copies <= NAMED_LADDER_COPIES
            && if text.lines_block {
                self.text.names_new_densely()
            } else {
                // Names that all take one value say nothing new either.
                let one_value = || {
                    text.lines_structured
                        && text.lines_numbers == Numbers::Ladder
                        && self.ladder_gives_one_value()
                };
                !(says_nothing_new(&self.text) || one_value())
            };
        let markup = text.lines_numbers == Numbers::Ladder && text.lines_markup;
        // A block whose numbers are one count through its copies (`elif day == 8` ..
        // `== 14` with the weekday names between, then `== 15`) is a count of its rungs.
        let rungs = lines * text.lines_counts as u64 / f.period.max(1) as u64;
        let ladder = text.lines_numbers == Numbers::Ladder
            && lines >= LADDER_LINES
            && (f.period <= 1 || copies >= BLOCK_LADDER_COPIES || rungs >= LADDER_LINES)
            && (!markup || copies > MARKUP_LADDER_COPIES)
            && !names_new;
        // One line of code written out verbatim again and again halts from
        // `CODE_LINE_COPIES`, as the same loop read as symbols does (as text a whole line
        // may be one symbol, whose loop would wait for a word stutter's count). A line of
        // data or filler (`NULL,` slots) is judged as data is, by the symbols' loop.
        let unrolled_past = f.period == 1
            && text.lines_numbers == Numbers::Same
            && f.span >= CODE_LINE_COPIES
            && !self.last_line_is_data();
        let line_halt_copies = self.config.inner.settings.line_halt_copies;
        let records = text.lines_numbers == Numbers::Records
            && copies < RECORD_FACTOR.saturating_mul(line_halt_copies);
        let halt = (!text.lines_structured && !records) || ladder || unrolled_past;
        let mut action = f.level;
        if action == Action::Halt && !halt {
            action = Action::Warn;
        }
        // `line_halt_copies = 0` turns line halts off, ladders included.
        let lines_halt = line_halt_copies > 0;
        if action == Action::Warn && lines_halt && ladder {
            action = Action::Halt;
        }
        // In structured text a warning too needs more than repetition, which is how such text
        // is written: a ladder half way to its halt, or lines repeated exactly as often as
        // prose lines halt.
        if action == Action::Warn && text.lines_structured {
            let evidence = match text.lines_numbers {
                Numbers::Ladder => {
                    lines >= LADDER_LINES / 2
                        && !names_new
                        && (!markup || copies > MARKUP_LADDER_COPIES / 2)
                }
                Numbers::Same => copies >= line_halt_copies,
                Numbers::Varied | Numbers::Records | Numbers::Unknown => false,
            };
            if !evidence {
                action = Action::Continue;
            }
        }
        // The evidence is the lines covered, those between the rungs included (each copy
        // that many lines longer).
        let f = Finding {
            period: (f.period as u64 * lines / (f.span as u64).max(1)).max(f.period as u64) as u32,
            span: lines as u32,
            ..f
        };
        let onset_byte = self.text.line_byte(f.onset);
        let kind = if text.lines_numbers == Numbers::Ladder {
            LoopKind::CounterLadder
        } else {
            f.kind
        };
        self.text_verdict(&f, action, kind, Unit::Line, onset_byte, sym, now)
    }

    /// The last two whole lines assign one value (`char *newstr12 = str;`, then `newstr13`):
    /// a ladder of names whose counter names the same thing again. A value that calls
    /// something (`F12 = auto()`, `SENTINEL = object()`) may be a new one each time.
    fn ladder_gives_one_value(&self) -> bool {
        const LONGEST: usize = CODE_LINE as usize;
        let pos = self.text.lines_pos();
        // Line `n`, copied into `buf` (a line of code longer than people write is not one
        // of a table): its length, or `None`.
        let line = |n: u64, buf: &mut [u8; LONGEST]| -> Option<usize> {
            let (a, b) = self.text.bytes_from(self.text.line_byte(n)?)?;
            let mut len = 0;
            for &c in a.iter().chain(b).take_while(|&&c| c != b'\n') {
                *buf.get_mut(len)? = c;
                len += 1;
            }
            Some(len)
        };
        let (mut x, mut y) = ([0u8; LONGEST], [0u8; LONGEST]);
        let (Some(m), Some(n)) = (
            pos.checked_sub(1).and_then(|p| line(p, &mut x)),
            pos.checked_sub(2).and_then(|p| line(p, &mut y)),
        ) else {
            return false;
        };
        match (assigned(&x[..m]), assigned(&y[..n])) {
            (Some(a), Some(b)) => {
                a == b && a.iter().any(u8::is_ascii_alphanumeric) && !a.contains(&b'(')
            }
            _ => false,
        }
    }

    /// The last whole line is data or filler: no word but literals (`NULL,`) or none at all.
    fn last_line_is_data(&self) -> bool {
        let start = self.text.line_byte(self.text.lines_pos().saturating_sub(1));
        start
            .and_then(|s| self.text.bytes_from(s))
            .is_some_and(|(a, b)| is_data([a, b]) || is_filler([a, b]))
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
}

/// The block is one statement: it holds one line break outside parentheses and square
/// brackets (braces open blocks of statements, not one). A call wrapped over
/// several lines (`$this->expectHttpRequest($url,` … `$failure);`, written three times to
/// test three retries) is one line as its writer sees it. The block is a rotation of the
/// loop, so it may begin inside the brackets: breaks count at the shallowest depth any of
/// them stands at. (A repetition inside a line, with none, is judged by the line's length:
/// see `within_a_code_line`.)
fn one_line(parts: [&[u8]; 2]) -> bool {
    let (mut depth, mut shallowest, mut breaks) = (0i32, i32::MAX, 0u32);
    for &b in parts.iter().flat_map(|p| p.iter()) {
        match b {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            b'\n' if depth < shallowest => (shallowest, breaks) = (depth, 1),
            b'\n' if depth == shallowest => breaks += 1,
            _ => {}
        }
    }
    breaks == 1
}

/// A line of the block imports or includes something (`import`, `from … import`,
/// `#include`, `use`, `using`, `require`): importing a thing again does nothing, so such a
/// line written out again is never an unrolled loop. (The block's first 256 bytes are read.)
fn imports(parts: [&[u8]; 2]) -> bool {
    let mut buf = [0u8; 256];
    let block = joined(parts, &mut buf);
    std::iter::once(0)
        .chain(memchr::memchr_iter(b'\n', block).map(|i| i + 1))
        .any(|start| {
            let line = &block[start..];
            let line = &line[line
                .iter()
                .take_while(|&&b| b == b' ' || b == b'\t')
                .count()..];
            let line = &line[..memchr::memchr(b'\n', line).unwrap_or(line.len())];
            [
                &b"import "[..],
                b"#include",
                b"use ",
                b"using ",
                b"require ",
                b"require(",
                b"require_relative ",
            ]
            .iter()
            .any(|k| line.starts_with(k))
                || (line.starts_with(b"from ") && memchr::memmem::find(line, b" import ").is_some())
        })
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

/// What line `l` assigns: the bytes after its first `=` that is not part of `==`, `!=`, `<=`,
/// `>=` or `=>`.
fn assigned(l: &[u8]) -> Option<&[u8]> {
    (1..l.len().saturating_sub(1))
        .find(|&i| l[i] == b'=' && !b"=!<>".contains(&l[i - 1]) && !b"=>".contains(&l[i + 1]))
        .map(|i| &l[i + 1..])
}

/// The block's first 256 bytes, in one slice.
fn joined<'b>(parts: [&[u8]; 2], buf: &'b mut [u8; 256]) -> &'b [u8] {
    let n = parts[0].len().min(buf.len());
    buf[..n].copy_from_slice(&parts[0][..n]);
    let m = parts[1].len().min(buf.len() - n);
    buf[n..n + m].copy_from_slice(&parts[1][..m]);
    &buf[..n + m]
}

/// The block, one line in any rotation, is prose: a comment that says something (after its
/// indentation a comment leader, `//`, `/*`, `*`, `#` and white space, `--`, `;`, `%` or
/// `<!--`, and a word of three letters), or a line that holds a sentence (see
/// [`holds_sentence`]), in a string or between tags. People unroll a statement a few times
/// (`point_double(r, r);`), but do not write one sentence again and again in a row: in 16,600
/// chunks of human code and documents at most three such lines alike stand in a row, all of
/// them short (`* // 'tick'`, `* experimental New snapshot release`), as a program's output
/// shown in a document may. Not `#include` or `#[derive]`: `#` and a word at once is code.
fn prose_line(parts: [&[u8]; 2]) -> bool {
    let mut buf = [0u8; 256];
    let mut line = [0u8; 256];
    let line = line_of(joined(parts, &mut buf), &mut line);
    let body = match line {
        [b'/', b'/' | b'*', rest @ ..]
        | [b'-', b'-', rest @ ..]
        | [b'<', b'!', b'-', b'-', rest @ ..] => rest,
        [b'#' | b'*', b' ' | b'\t' | b'#' | b'!', rest @ ..] => rest,
        [b';' | b'%', rest @ ..] => rest,
        _ => return holds_sentence(line),
    };
    let mut run = 0;
    body.iter().any(|&b| {
        run = if b.is_ascii_alphabetic() || b >= 0x80 {
            run + 1
        } else {
            0
        };
        run >= 3
    })
}

/// The block, one line in any rotation, assigns a value that calls nothing and does not
/// read what it assigns to (`self.state[key] = key`, `ArrayLength = 1;`, `flag=True,`):
/// written again right after itself it does nothing, so no one unrolls it. In 16,400 chunks of
/// human code and documents such a line never stands twice in a row; an unrolled statement
/// calls something or reads what it changes (`r = double(r)`, `x <<= 1`). A declaration
/// (`int x = 0;`) is not one: what precedes the `=` is one name, with its fields and indices.
fn same_value_again(parts: [&[u8]; 2]) -> bool {
    let mut buf = [0u8; 256];
    let mut line = [0u8; 256];
    let line = line_of(joined(parts, &mut buf), &mut line);
    let Some(eq) = memchr::memchr(b'=', line) else {
        return false;
    };
    let target = &line[..eq];
    let target = &target[..target.len()
        - target
            .iter()
            .rev()
            .take_while(|b| b.is_ascii_whitespace())
            .count()];
    let value = &line[eq + 1..];
    // A name and its fields and indices, then `=` alone (not `==`, `+=`, `<=`, `=>`).
    let name = target
        .iter()
        .take_while(|&&b| b.is_ascii_alphanumeric() || b == b'_')
        .count();
    let whole = target
        .first()
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        && target
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b"_.[]'\"".contains(&b));
    if !whole || matches!(value.first(), Some(b'=' | b'>')) || value.contains(&b'(') {
        return false;
    }
    // The value does not read the name assigned to.
    let base = &target[..name];
    !value
        .split(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
        .any(|w| w == base)
}

/// The line a one-line block holds, from its start: the bytes after the block's line break,
/// then those before it, without the indentation.
fn line_of<'l>(block: &[u8], line: &'l mut [u8; 256]) -> &'l [u8] {
    let (i, n) = (
        memchr::memchr(b'\n', block).map_or(0, |i| i + 1),
        block.len(),
    );
    line[..n - i].copy_from_slice(&block[i..]);
    line[n - i..n].copy_from_slice(&block[..i]);
    let line = &line[..n];
    &line[line
        .iter()
        .take_while(|&&b| b == b' ' || b == b'\t' || b == b'\n')
        .count()..]
}

/// Words a line must hold in a row to hold a sentence.
const SENTENCE_WORDS: u32 = 4;

/// The line holds a sentence: `SENTENCE_WORDS` words in a row, each parted from the next by one
/// space, each letters only, of two or more, lower case but maybe its first (an apostrophe
/// inside, quotes or a bracket before, punctuation after: `school year! We are`). Code names
/// its things otherwise (`self.x`, `add(a, b)`, `MAX_LEN`).
fn holds_sentence(line: &[u8]) -> bool {
    let mut run = 0;
    line.split(|&b| b == b' ').any(|word| {
        // Quotes and brackets around it, punctuation (and the line end) after it.
        let from = word.iter().take_while(|b| b"\"'(".contains(b)).count();
        let to = word.len()
            - word
                .iter()
                .rev()
                .take_while(|b| b",.!?;:\"')\n\r".contains(b))
                .count();
        let word = &word[from.min(to)..to];
        let plain = word.len() >= 2
            && word[0].is_ascii_alphabetic()
            && word[1..]
                .iter()
                .all(|&b| b.is_ascii_lowercase() || b == b'\'');
        run = if plain { run + 1 } else { 0 };
        run >= SENTENCE_WORDS
    })
}

#[cfg(test)]
mod tests {
    use super::one_line;

    fn lines(text: &str) -> bool {
        let (a, b) = text.split_at(text.len() / 2);
        one_line([a.as_bytes(), b.as_bytes()])
    }

    #[test]
    fn a_statement_wrapped_over_lines_is_one_line() {
        assert!(lines("point_double(r, r);\n"));
        assert!(lines(
            "$this->expect($url,\n        GET,\n        $failure);\n"
        ));
        // A rotation of that block, beginning inside its brackets.
        assert!(lines(
            "        GET,\n        $failure);\n$this->expect($url,\n"
        ));
        assert!(!lines("a = f(x)\nb = g(a)\n"));
        assert!(!lines("if x:\n    return y\n"));
        assert!(!lines("    return *this;\n}\nV& operator*=(V o) {\n"));
        assert!(!lines("no break at all"));
    }

    #[test]
    fn imports_are_told_in_any_rotation() {
        let imports = |t: &str| super::imports([t.as_bytes(), b""]);
        assert!(imports("import os.path\n"));
        assert!(imports("_service\nimport bank_account.account_data"));
        assert!(imports("))\nfrom flask_cors import (CORS,\n    x"));
        assert!(imports("\n#include <stdio.h>"));
        assert!(!imports("point_double(r, r);\n"));
        assert!(!imports("from the start, it was\n"));
        assert!(imports("require 'json'\n"));
        assert!(!imports("required: true\n"));
    }

    #[test]
    fn assignments_that_change_nothing_the_second_time() {
        let same = |t: &str| super::same_value_again([t.as_bytes(), b""]);
        assert!(same(
            "        self.state_machine[initial_state][initial_state] = initial_state\n"
        ));
        assert!(same(
            "initial_state] = initial_state\n        self.state_machine[initial_state]["
        ));
        assert!(same("    ArrayLength = 1;\n"));
        assert!(same("    allow_cache_expiration=True,\n"));
        assert!(same("curr_val_val = curr_val_val_val + 1;\n"));
        assert!(!same("    r = double(r);\n"), "calls something");
        assert!(!same("    x = x * 2\n"), "reads what it changes");
        assert!(!same("    total += step;\n"));
        assert!(!same("    if a == b:\n"));
        assert!(!same("    int count = 0;\n"), "a declaration");
        assert!(
            !same("    a, b = b, a\n"),
            "a swap changes something every time"
        );
        assert!(!same("    <div class=\"row\">\n"));
        assert!(!same("    print(a)\n"));
    }

    #[test]
    fn comments_and_sentences_are_prose_in_any_rotation() {
        let comment = |t: &str| super::prose_line([t.as_bytes(), b""]);
        assert!(comment("    # TODO: Implement this function in Python\n"));
        assert!(comment("in Python\n    # TODO: Implement this function "));
        assert!(
            comment("  Animal:\n  //"),
            "the leader cut from its words by the rotation"
        );
        assert!(!comment("  \n  //"));
        assert!(comment("-- the name of the table\n"));
        assert!(comment(" * Returns the value.\n"));
        assert!(comment("<!-- navigation -->\n"));
        assert!(!comment("#include <algorithm>\n"));
        assert!(!comment("#[derive(Debug)]\n"));
        assert!(!comment("    # 1\n"), "no word in it");
        assert!(!comment("point_double(r, r);\n"));
        assert!(!comment("x = y  # set x\n"), "code first");
        let p = "      <p class=\"text\">Welcome to the new school year! We are excited</p>\n";
        assert!(comment(p) && comment(&p[30..]));
        assert!(comment("    print(\"Hello, welcome to the program\")\n"));
        assert!(!comment("    print(\"HTTP status code: \" + str(code))\n"));
        assert!(!comment("ecp_nistz256_point_double(r, r);\n"));
        assert!(!comment(
            "    return self.items if the_list else none_of_them\n"
        ));
    }
}
