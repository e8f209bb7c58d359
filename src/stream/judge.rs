//! How the detectors' findings become a verdict: each finding judged where it stands (in
//! code, in data, in a drawing, in markup, in a list), the strongest kept, and the guard's
//! warning streak, statistics and evidence brought up to date.

use super::unrolled::{self, assigned, CODE_LINE_COPIES};
use super::{block, says_nothing_new, text_byte, Mode, StreamGuard};
use crate::engine::Finding;
use crate::stutter::{self, STUTTER_HALT, STUTTER_WARN};
use crate::text::{
    is_data, is_digit_fill, is_drawing, is_drawn_pattern, is_empty_comment, is_escaped_fill,
    is_filler, is_list_fill, is_rule_text, is_underline, is_word, patient, whole_tokens, Numbers,
    TextFinding, BUFFER_BYTES, CODE_LINE, INDEXED_LADDER_COPIES, MARKUP_LADDER_COPIES,
    NAMED_LADDER_COPIES, TEXT_RING,
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

/// How much longer than `halt_span` a loop of data (a block without words) must run before it
/// halts. The longest exact runs of data in 3.2 M tokens of human code cover 135 tokens (a
/// regex repeated eleven times in a shell script; runs of `0x00,` in a Unicode table).
const DATA_SPAN_FACTOR: u32 = 4;

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
        // The loop is a name that stutters: judged already, wherever it stands.
        let mut name = false;
        let onset_byte = self.text_byte(f.onset, now);
        if kind == LoopKind::ExactLoop {
            if let Some(start) = self.text_byte(now.saturating_sub(f.period as u64), now) {
                // Three bytes more, so that a character the block begins inside is whole once.
                let from = start.saturating_sub(3);
                if let Some((a, b)) = self.text.bytes_from(from) {
                    let block = block_from(a, b, from, start);
                    let whole = whole_tokens(block);
                    if let Some(units) = stutter::units_in(block) {
                        // One part of a name said again and again (`_yaml_yaml`, a host
                        // name's label in a test of a long name): judged by how often people
                        // say a part, inside a line of code too (see `stutter`), and at least
                        // by the copies the settings ask of any loop.
                        let s = &self.config.inner.settings;
                        let copies = f.span / f.period.max(1) * units;
                        action = if copies >= STUTTER_HALT.max(s.halt_copies) {
                            Action::Halt
                        } else if s.warn_copies > 0 && copies >= STUTTER_WARN.max(s.warn_copies) {
                            Action::Warn
                        } else {
                            Action::Continue
                        };
                        kind = LoopKind::WordStutter;
                        name = true;
                    } else if is_rule_text([a, b]) || is_underline([a, b]) {
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
                    } else if is_data(&whole) || is_filler(&whole) || is_digit_fill(block) {
                        // A block without words — numbers, hex, a regex, base64, only
                        // `NULL`s, or escaped bytes written on (`\xff\xff" +`) — is data,
                        // and tables of data repeat their values and rows: only a long run
                        // of it halts, four times the span and one copy more, and it warns
                        // half way there.
                        let s = &self.config.inner.settings;
                        let copies = f.span / f.period.max(1);
                        let base = DATA_SPAN_FACTOR * s.halt_span.max(16);
                        // A buffer spelled out (one escaped byte, one number in a list) is as
                        // long as the buffer: judged by its bytes, not by the tokens a
                        // tokenizer cuts them into (`0xaa, ` is five of SmolLM2's), and asked
                        // only once the run is long enough to answer.
                        let (run, limit) =
                            if f.span >= base / 2 && self.loop_is_fill(start, onset_byte) {
                                let copy = (block[0].len() + block[1].len()) as u64;
                                (copies as u64 * copy, BUFFER_BYTES)
                            } else {
                                (f.span as u64, base as u64)
                            };
                        action = if run >= limit && copies > s.halt_copies {
                            action
                        } else if run >= limit / 2 {
                            action.min(Action::Warn)
                        } else {
                            Action::Continue
                        };
                    } else if self.text.in_code() {
                        // In code, one line written out again is an unrolled loop
                        // (`point_double(r, r);` five times): people write a few of them, a
                        // model writes its loop on; an item of a list fills it as long as a
                        // buffer (see `unrolled`).
                        // Past `CODE_LINE_COPIES` only an item of a list, which ends in a
                        // comma, waits longer: the rest is not read again on every token.
                        let copies = f.span / f.period.max(1);
                        let may_wait = copies < CODE_LINE_COPIES
                            || block.iter().any(|p| memchr::memchr(b',', p).is_some());
                        let printed = |said: &[u8]| self.text.quoted_before(said, start);
                        match may_wait.then(|| unrolled::copies_to_halt(block, printed)) {
                            Some(Some(n)) if copies < n => action = action.min(Action::Warn),
                            // A block of several lines halts once its next copy has begun:
                            // people write a block two or three times and go on with a line
                            // of their own, a model's loop writes the first line again.
                            Some(None) if !self.next_copy_begun(&f, onset_byte, now) => {
                                action = action.min(Action::Warn)
                            }
                            _ => {}
                        }
                    }
                }
            }
            if kind == LoopKind::ExactLoop && self.is_word_stutter(f.period, now) {
                kind = LoopKind::WordStutter;
            }
        }
        if action > Action::Continue && !name && self.within_a_code_line(onset_byte) {
            action = Action::Continue;
        }
        // In structured text (code, markup, tables, fields, `#` lines) blocks recur by
        // design: a block written twice, one recurring from far back, or a few closing tags
        // or brackets written three times (`</td></tr></table>`) is not a warning there. A
        // loop warns once it has what a halt needs: the copies and the span.
        if action == Action::Warn && !name && (self.text.in_code() || self.text.marked()) {
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

    /// Whether the exact loop `f` (from byte `onset_byte`) holds the copies a halt needs and
    /// then a word of one more. Its copies are counted from the first line it holds from that
    /// line's start: the first copy found may begin with the end of the line before it.
    fn next_copy_begun(&self, f: &Finding, onset_byte: Option<u64>, now: u64) -> bool {
        let period = f.period.max(1) as u64;
        let bytes = self.text.bytes;
        let Some(last) = self.text_byte(now.saturating_sub(period), now) else {
            return true;
        };
        // Bytes of a copy (the last one's: copies of tokens are copies of their bytes), and
        // where the loop began, reckoned by them when its first symbol's byte is forgotten.
        let copy = bytes - last;
        let onset = onset_byte.or_else(|| bytes.checked_sub(f.span as u64 * copy / period));
        // A loop older than the bytes held is long past any block people write out.
        let Some((onset, (a, b))) = onset.and_then(|o| Some((o, self.text.bytes_from(o)?))) else {
            return true;
        };
        let first_line = if self.opens_its_line(onset) {
            onset
        } else {
            let line_break =
                memchr::memchr(b'\n', a).or_else(|| memchr::memchr(b'\n', b).map(|i| a.len() + i));
            match line_break {
                Some(i) => onset + i as u64 + 1,
                None => return true,
            }
        };
        // Whole copies from that line on, and the byte where the rest begins: counted in
        // symbols from the first that begins on that line when it is still known, else in
        // bytes.
        let s = self.text.onset_symbol(Some(first_line), now);
        let (copies, rest) = match self.text_byte(s, now) {
            Some(b) if b <= first_line => {
                let s = if b < first_line { s + 1 } else { s };
                let aligned = now.saturating_sub(s);
                let past = aligned % period;
                let rest = if past == 0 {
                    Some(bytes)
                } else {
                    self.text_byte(now - past, now)
                };
                (aligned / period, rest)
            }
            _ => {
                let aligned = bytes - first_line.min(bytes);
                (aligned / copy.max(1), Some(bytes - aligned % copy.max(1)))
            }
        };
        if copies < self.config.inner.settings.halt_copies as u64 {
            return false;
        }
        rest.and_then(|from| self.text.bytes_from(from))
            .map_or(true, |(x, y)| holds_a_word([x, y]))
    }

    /// Whether only white space stands before byte `at` on its line (as far as held).
    fn opens_its_line(&self, at: u64) -> bool {
        let held = self.text.bytes.saturating_sub(TEXT_RING as u64);
        let from = at.saturating_sub(CODE_LINE).max(held).min(at);
        let Some((a, b)) = self.text.bytes_from(from) else {
            return false;
        };
        let n = (at - from) as usize;
        let (a, b) = (
            &a[..n.min(a.len())],
            &b[..n.saturating_sub(a.len()).min(b.len())],
        );
        for &c in b.iter().rev().chain(a.iter().rev()) {
            match c {
                b'\n' => return true,
                b' ' | b'\t' => {}
                _ => return false,
            }
        }
        from == 0
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
    /// after the loop. Three copies' worth when a copy is one item (`0xffffffff, `, twelve
    /// bytes: two whole ones lie in 36 however they are cut), 24 to 128 bytes: a list wrapped
    /// over indented lines spends a line's indentation between two items (a 17-byte
    /// `0x202020202020202, ` three to a line under twelve spaces showed one whole item in 64).
    fn loop_is_fill(&self, start: u64, onset: Option<u64>) -> bool {
        let back = (3 * self.text.bytes.saturating_sub(start)).clamp(24, 128);
        // An onset no longer mapped to a byte lies before all the bytes held.
        let from = start.saturating_sub(back).max(onset.unwrap_or(0));
        let len = (start - from.min(start)) as usize;
        self.text.bytes_from(from).is_some_and(|(a, b)| {
            let a_len = a.len().min(len);
            let b_len = (len - a_len).min(b.len());
            let parts = [&a[..a_len], &b[..b_len]];
            is_escaped_fill(parts) || is_list_fill(parts) || is_digit_fill(parts)
        })
    }

    fn line_verdict(&self, text: &TextFinding, sym: u64, now: u64) -> Verdict {
        let f = text.lines;
        // A ladder in code covers the lines between its rungs too (a closing `}` after each
        // call, which has no letters and is not a line the line engine counts).
        let line_halt_copies = self.config.inner.settings.line_halt_copies;
        let ladder_lines = patient(LADDER_LINES as u32, line_halt_copies) as u64;
        let lines = if text.lines_structured
            && text.lines_numbers == Numbers::Ladder
            && (f.span as u64) < ladder_lines
        {
            self.text
                .line_byte(f.onset)
                .and_then(|b| self.text.breaks_from(b, ladder_lines))
                .map_or(f.span as u64, |n| n.max(f.span as u64))
        } else {
            f.span as u64
        };
        // What halts depends on the lines and on how the numbers in the copies change. Prose
        // lines repeated halt (`29. Remove the tire…`), their numbers the same or not, but for
        // records: lines that each carry their own key (a date, an issue number, a version)
        // are a change log's entries, however alike their words, and so are lines whose
        // changing numbers are parts of names; both halt only past `RECORD_FACTOR` times as
        // many copies. In code, tables, fields and markup, where a
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
        // (warning half way); a table whose entries carry their index in a comment waits for
        // `INDEXED_LADDER_COPIES`, a byte's values, the same way.
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
        let indexed = text.lines_numbers == Numbers::Ladder && text.lines_indexed;
        // A block whose numbers are one count through its copies (`elif day == 8` ..
        // `== 14` with the weekday names between, then `== 15`) is a count of its rungs.
        let rungs = lines * text.lines_counts as u64 / f.period.max(1) as u64;
        // A preset that waits longer for lines written again waits as much longer for these.
        let block_copies = patient(BLOCK_LADDER_COPIES, line_halt_copies);
        let ladder = text.lines_numbers == Numbers::Ladder
            && lines >= ladder_lines
            && (f.period <= 1 || copies >= block_copies || rungs >= ladder_lines)
            && (!markup || copies > MARKUP_LADDER_COPIES)
            && (!indexed || copies > INDEXED_LADDER_COPIES)
            && !names_new;
        // One line of code written out verbatim again and again halts from
        // `CODE_LINE_COPIES`, an import from its fourth copy, an item of a list once it fills
        // a buffer (`unrolled::line_copies`), as the same loop read as symbols does (as text
        // a whole line may be one symbol, and a short line's loop of symbols waits for the
        // span a halt needs). A line of data or filler (`NULL,` slots) is judged as data is,
        // by the symbols' loop, and a drawing's row (a frame's side in a test's expected
        // screen) as a drawing is: only past a screen's height.
        let unrolled_past = text.lines_structured
            && f.period == 1
            && text.lines_numbers == Numbers::Same
            && f.span >= self.config.inner.settings.halt_copies
            && !self.last_line_is_data()
            && f.span >= self.last_line_copies()
            && (f.span >= DRAWING_ROWS || !self.last_line_is_drawing());
        // Lines whose only changing numbers sit in names (`#:cs-mode-m680x-6301`, `-6309`)
        // name a different thing each, as records do.
        let named_list = text.lines_numbers == Numbers::Varied && text.lines_in_names;
        let records = (text.lines_numbers == Numbers::Records || named_list)
            && copies < RECORD_FACTOR.saturating_mul(line_halt_copies);
        // Prose lines whose counter is part of a name (`val opACC7 : int`, a list of numbered
        // names) declare those names, as a table does: they halt as a ladder in code does.
        let names = text.lines_numbers == Numbers::Ladder && text.lines_in_names;
        let halt = (!text.lines_structured && !records && !names) || ladder || unrolled_past;
        let mut action = f.level;
        if action == Action::Halt && !halt {
            action = Action::Warn;
        }
        // Records warn as much later as they halt: each copy is about its own thing, and
        // three of them are a list, not yet a loop.
        let line_warn_copies = self.config.inner.settings.line_warn_copies;
        if action == Action::Warn
            && records
            && copies < RECORD_FACTOR.saturating_mul(line_warn_copies)
        {
            action = Action::Continue;
        }
        // `line_halt_copies = 0` turns line halts off, ladders included.
        let lines_halt = line_halt_copies > 0;
        if action == Action::Warn && lines_halt && (ladder || unrolled_past) {
            action = Action::Halt;
        }
        // In structured text a warning too needs more than repetition, which is how such text
        // is written: a ladder half way to its halt, or lines repeated exactly as often as
        // prose lines halt.
        if action == Action::Warn && text.lines_structured {
            let evidence = match text.lines_numbers {
                Numbers::Ladder => {
                    lines >= ladder_lines / 2
                        && !names_new
                        && (!markup || copies > MARKUP_LADDER_COPIES / 2)
                        && (!indexed || copies > INDEXED_LADDER_COPIES / 2)
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

    /// Copies of the last whole line, written out verbatim in code, that halt when read as
    /// lines (see `unrolled::line_copies`), as much later as the preset waits for lines
    /// written again, and never fewer than any loop needs.
    fn last_line_copies(&self) -> u32 {
        let s = &self.config.inner.settings;
        let shape = self.last_line().and_then(|(a, b)| {
            // The line and its break, not what the next line has begun with.
            let (a, b) = match memchr::memchr(b'\n', a) {
                Some(i) => (&a[..=i], &[][..]),
                None => (a, &b[..memchr::memchr(b'\n', b).map_or(b.len(), |i| i + 1)]),
            };
            unrolled::line_copies([a, b])
        });
        patient(shape.unwrap_or(CODE_LINE_COPIES), s.line_halt_copies).max(s.halt_copies)
    }

    /// The last whole line is data or filler: no word but literals (`NULL,`) or none at all,
    /// or escaped bytes written on (see `is_digit_fill`).
    fn last_line_is_data(&self) -> bool {
        self.last_line()
            .is_some_and(|(a, b)| is_data(&[a, b]) || is_filler(&[a, b]) || is_digit_fill([a, b]))
    }

    /// The last whole line is a drawing's row (see `is_drawing`).
    fn last_line_is_drawing(&self) -> bool {
        self.last_line().is_some_and(|(a, b)| is_drawing([a, b]))
    }

    /// The held bytes from the last whole line's start to the end, as two parts.
    fn last_line(&self) -> Option<(&[u8], &[u8])> {
        let start = self
            .text
            .line_byte(self.text.lines_pos().saturating_sub(1))?;
        self.text.bytes_from(start)
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

/// The parts `a`, `b` of the held bytes from byte `from`, less those before byte `start`.
fn block_from<'t>(a: &'t [u8], b: &'t [u8], from: u64, start: u64) -> [&'t [u8]; 2] {
    let skip = (start - from) as usize;
    if skip <= a.len() {
        [&a[skip..], b]
    } else {
        [&[], &b[(skip - a.len()).min(b.len())..]]
    }
}

/// The bytes (two parts) hold a word: the next copy of a loop has begun saying something,
/// not only the line break and indentation any next line begins with.
fn holds_a_word(parts: [&[u8]; 2]) -> bool {
    parts
        .iter()
        .any(|p| p.iter().any(u8::is_ascii_alphanumeric))
}
