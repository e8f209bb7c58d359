//! The scanner: text cut into symbols, the way tokenizers cut it, in one pass over its bytes.
//! Every byte goes through one short loop (character runs, letters, the ring and the line
//! buffer); words, lines and breakers are handled where a word or a line ends, so the work
//! per byte does not grow with the detectors.

use aho_corasick::automaton::Automaton;
use aho_corasick::dfa::DFA;
use aho_corasick::Anchored;
use xxhash_rust::xxh3::xxh3_64;

use super::runs::{clamp_lanes, CharLimits};
use super::{
    fold, hash_folded, in_url, is_run_byte, keep, nesting, skeleton, Event, Numbers, TextFinding,
    TextState, Url, CLASS, DIGIT, LANE1, LANE_HIGH, LANE_LOW, LETTER, LINES, LINE_BLOCK, NEWLINE,
    SPACE, TEXT_RING, WORD_MAX,
};
use crate::engine::Finding;
use crate::journal::{Journal, Owner};
use crate::structure::LineKind;
use crate::verdict::Action;

impl TextState {
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
        url: &mut Url,
        mut journal: Option<&mut Journal>,
        mut on_event: impl FnMut(&mut TextState, Event, Option<&mut Journal>) -> bool,
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
                        url,
                        &text[word_from..i - 1],
                        base + word_from as u64,
                        journal.as_deref_mut(),
                        &mut on_event,
                    );
                }
                if words {
                    // White space ends a web address.
                    *url = Url::Out;
                }
                word_from = i;
                self.long_word = false;
                if words && class & NEWLINE != 0 {
                    // A line break is a symbol, as it is a token: a loop of data does not run
                    // on from one line to the next unless its lines are cut alike.
                    stop |= self.emit_word(
                        url,
                        b"\n",
                        base + (i - 1) as u64,
                        journal.as_deref_mut(),
                        &mut on_event,
                    );
                }
                if class & NEWLINE != 0 {
                    // The newline is not part of the line. The line is a heading when the
                    // last visible byte before the newline (behind at most two spaces or a
                    // "\r") is ':'.
                    self.line_len -= 1;
                    let back = |k: u32| (self.last >> (16 * k)) as u8;
                    let at = (1..4)
                        .take_while(|&k| back(k) != b'\n')
                        .find(|&k| CLASS[back(k) as usize] & SPACE == 0);
                    let last = at.map_or(0, back);
                    // The byte before it, while the bytes held reach it within the line.
                    let before = at
                        .filter(|&k| k < 3 && back(k + 1) != b'\n')
                        .map_or(0, |k| back(k + 1));
                    let heading = last == b':';
                    let line_start = self.line_start;
                    let (f, structured, kind, template) =
                        self.end_line(base + i as u64, [before, last], journal.as_deref_mut());
                    halted |= f.level == Action::Halt;
                    halted |= keep(&mut found.templates, template);
                    if f.beats(&found.lines) {
                        found.lines = f;
                        found.lines_structured = structured;
                        let copies = f.span / f.period.max(1);
                        let end = base + i as u64;
                        let ladder = self.ladder_numbers(f.period, copies, end);
                        (found.lines_numbers, found.lines_counts) = (ladder.numbers, ladder.counts);
                        found.lines_indexed =
                            ladder.numbers == Numbers::Ladder && self.indexed(f.period, end);
                        found.lines_in_names = ladder.in_names;
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
                            found.lines_in_names = false;
                        }
                        found.lines_block = self.block_of_shapes(f.period);
                        found.lines_markup = self.block_of_markup(f.period);
                    }
                    halted |= keep(&mut found.growth, self.growth_finding(line_start));
                    halted |= keep(&mut found.counter, self.counter_finding());
                    stop |= on_event(
                        self,
                        Event::LineEnd { heading, kind },
                        journal.as_deref_mut(),
                    );
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
                        url,
                        &text[word_from..i - 1],
                        base + word_from as u64,
                        journal.as_deref_mut(),
                        &mut on_event,
                    );
                }
                stop |= self.emit_word(
                    url,
                    &text[i - 1..i],
                    base + (i - 1) as u64,
                    journal.as_deref_mut(),
                    &mut on_event,
                );
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
                        url,
                        &text[word_from..i - 1],
                        base + word_from as u64,
                        journal.as_deref_mut(),
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
                stop |= self.emit_word(
                    url,
                    &text[word_from..i],
                    base + word_from as u64,
                    journal.as_deref_mut(),
                    &mut on_event,
                );
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
                self.novelty.titling(self.structure.titles());
                self.novelty.read(&self.line, false);
                self.counting.read(&self.line);
                halted |= keep(&mut found.counter, self.counter_finding());
                self.line_hash = fold(self.line_hash, hash_folded(&mut self.line, LINE_BLOCK));
                self.line_len = 0;
            }
            if i - 1 == brk {
                if let Some(dfa) = breakers {
                    stop |= on_event(self, Event::Breaker, journal.as_deref_mut());
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
    pub fn flush_word(
        &mut self,
        url: &mut Url,
        journal: Option<&mut Journal>,
        mut on_event: impl FnMut(&mut TextState, Event, Option<&mut Journal>) -> bool,
    ) -> bool {
        self.word_len > 0 && self.emit_word(url, &[], 0, journal, &mut on_event)
    }

    /// Ends the word made of the bytes held from earlier chunks and `tail`, which begins at
    /// byte `start` when nothing is held. Returns what `on_event` returned.
    fn emit_word(
        &mut self,
        url_state: &mut Url,
        tail: &[u8],
        start: u64,
        journal: Option<&mut Journal>,
        on_event: &mut impl FnMut(&mut TextState, Event, Option<&mut Journal>) -> bool,
    ) -> bool {
        let held = self.word_len as usize;
        let (h, start, url) = if held == 0 {
            let (url, next) = in_url(*url_state, tail);
            *url_state = next;
            (xxh3_64(tail), start, url)
        } else {
            let len = held + tail.len();
            self.word[held..len].copy_from_slice(tail);
            let (url, next) = in_url(*url_state, &self.word[..len]);
            *url_state = next;
            (xxh3_64(&self.word[..len]), self.word_start, url)
        };
        self.word_len = 0;
        on_event(self, Event::Word(h as u32, start, url), journal)
    }

    pub(super) fn clear_line(&mut self) {
        self.line_len = 0;
        self.line_hash = 0;
        self.line_letters = 0;
        self.line_skeleton = None;
    }

    /// Ends the line being read (the next begins at byte `next`; `ends` is its last visible
    /// byte and the byte before that, 0 where not known); returns the line engine's evidence,
    /// whether the line was code or a table row, and its kind.
    fn end_line(
        &mut self,
        next: u64,
        ends: [u8; 2],
        journal: Option<&mut Journal>,
    ) -> (Finding, bool, LineKind, Finding) {
        let indent = self.structure.indent();
        let titles = self.structure.titles();
        let (kind, structured) = self
            .structure
            .end_line(&self.line[..self.line_len as usize], ends);
        self.novelty.titling(titles);
        self.novelty
            .read(&self.line[..self.line_len as usize], true);
        self.novelty.end_word();
        self.novelty.titling(false);
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
            if let Some(j) = journal {
                // The slot of `line_starts` is noted before the push, with the ring's.
                self.lines.note_push(h as u32, j, Owner::Lines);
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
