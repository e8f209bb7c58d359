//! Reasoning sections: a loop inside `<think>…</think>` ends the thinking, not the sequence.
//!
//! Reasoning models loop in their thinking more than anywhere else, and a halt there throws
//! the answer away with it. Given the markers that open and close a reasoning section
//! ([`StreamSettings::reasoning_start`], [`StreamSettings::reasoning_end`]), the guard follows
//! them byte by byte in the pieces or text it reads, and a halt that falls inside a section
//! becomes [`Action::EndReasoning`]: the host forces the end marker, the guard reads it, forgets
//! the reasoning's loops (as it does at a breaker) and watches the answer under the usual
//! ladder. Until the marker comes every push answers `EndReasoning` again, without reading
//! further.
//!
//! The markers are found with a Knuth–Morris–Pratt automaton each, whose states (the bytes of
//! a marker matched so far) carry across pushes: markers split between tokens are found, in
//! O(1) amortised per byte and no allocation. Only streams with text can see a marker: on ids
//! alone a halt stays a halt.
//!
//! [`StreamSettings::reasoning_start`]: crate::StreamSettings::reasoning_start
//! [`StreamSettings::reasoning_end`]: crate::StreamSettings::reasoning_end

use super::StreamGuard;
use crate::config::MAX_MARKER;
use crate::journal::Owner;
use crate::verdict::{Action, Verdict};

/// One marker and its failure function: `fail[k]` is the length of the longest proper prefix
/// of `bytes[..=k]` that is also its suffix.
#[derive(Debug)]
struct Marker {
    bytes: Box<[u8]>,
    fail: Box<[u8]>,
}

impl Marker {
    fn new(text: &str) -> Option<Marker> {
        let b = text.as_bytes();
        if b.is_empty() || b.len() > MAX_MARKER {
            return None;
        }
        let mut fail = vec![0u8; b.len()];
        let mut k = 0usize;
        for i in 1..b.len() {
            while k > 0 && b[i] != b[k] {
                k = fail[k - 1] as usize;
            }
            if b[i] == b[k] {
                k += 1;
            }
            fail[i] = k as u8;
        }
        Some(Marker {
            bytes: b.into(),
            fail: fail.into(),
        })
    }

    /// The state after `byte` from `state` (bytes matched), and whether the marker just ended.
    #[inline]
    fn step(&self, mut state: usize, byte: u8) -> (usize, bool) {
        while state > 0 && self.bytes[state] != byte {
            state = self.fail[state - 1] as usize;
        }
        if self.bytes[state] == byte {
            state += 1;
        }
        if state == self.bytes.len() {
            (self.fail[state - 1] as usize, true)
        } else {
            (state, false)
        }
    }
}

/// The compiled markers of a configuration.
#[derive(Debug)]
pub(crate) struct Markers {
    start: Option<Marker>,
    end: Marker,
}

impl Markers {
    /// `None` when `end` is empty (the feature is off). Lengths were validated.
    pub fn new(start: &str, end: &str) -> Option<Markers> {
        Some(Markers {
            start: Marker::new(start),
            end: Marker::new(end)?,
        })
    }

    /// Where a new stream stands: inside a section when no start marker was given.
    pub fn initial(&self) -> Reasoning {
        Reasoning(MARKED).with_inside(self.start.is_none())
    }

    /// Reads `bytes` from `r`: the new state, and whether an end marker ended in them.
    fn read(&self, r: Reasoning, mut bytes: &[u8]) -> (Reasoning, bool) {
        let (mut r, mut ended) = (r, false);
        while !bytes.is_empty() {
            let (k, next, marker) = self.until_marker(r, bytes);
            r = next;
            ended |= marker == Some(Marked::End);
            bytes = &bytes[k..];
        }
        (r, ended)
    }

    /// Reads `bytes` from `r` up to and including the first byte that ends a marker: how many
    /// bytes that is (all of them when none does), the state after them, and which marker.
    fn until_marker(&self, r: Reasoning, bytes: &[u8]) -> (usize, Reasoning, Option<Marked>) {
        let (mut s, mut e) = (r.start(), r.end());
        let mut i = 0;
        while i < bytes.len() {
            if s == 0 && e == 0 {
                // Nothing matched: skip to the next byte a marker begins with (most pieces
                // hold none). A plain loop: pieces are a few bytes, too short for memchr.
                let (a, z) = (
                    self.start
                        .as_ref()
                        .map_or(self.end.bytes[0], |m| m.bytes[0]),
                    self.end.bytes[0],
                );
                while i < bytes.len() && bytes[i] != a && bytes[i] != z {
                    i += 1;
                }
                if i == bytes.len() {
                    break;
                }
            }
            let b = bytes[i];
            i += 1;
            let mut found = None;
            if let Some(m) = &self.start {
                let (next, hit) = m.step(s, b);
                s = next;
                if hit {
                    found = Some(Marked::Start);
                }
            }
            let (next, hit) = self.end.step(e, b);
            e = next;
            if hit {
                found = Some(Marked::End);
            }
            if let Some(marked) = found {
                let inside = marked == Marked::Start;
                return (i, r.with_inside(inside).with_states(s, e), found);
            }
        }
        (bytes.len(), r.with_states(s, e), None)
    }
}

/// Which marker a byte ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Marked {
    Start,
    End,
}

/// A stream's place among the markers, in two bytes of the guard: the bytes of the start
/// and end markers matched so far (7 bits each: markers are at most 64 bytes) and whether the
/// stream is inside a section.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Reasoning(u16);

const STATE_BITS: u32 = 7;
const STATE_MASK: u16 = (1 << STATE_BITS) - 1;
const INSIDE: u16 = 1 << (2 * STATE_BITS);
/// The guard has markers: the one bit a push without them tests, next to the fields it reads.
const MARKED: u16 = 1 << (2 * STATE_BITS + 1);
const _: () = assert!(MAX_MARKER < 1 << STATE_BITS);

impl Reasoning {
    fn start(self) -> usize {
        (self.0 & STATE_MASK) as usize
    }

    fn end(self) -> usize {
        ((self.0 >> STATE_BITS) & STATE_MASK) as usize
    }

    pub fn inside(self) -> bool {
        self.0 & INSIDE != 0
    }

    fn with_inside(self, inside: bool) -> Reasoning {
        Reasoning(if inside {
            self.0 | INSIDE
        } else {
            self.0 & !INSIDE
        })
    }

    fn with_states(self, start: usize, end: usize) -> Reasoning {
        Reasoning((self.0 & (INSIDE | MARKED)) | start as u16 | (end as u16) << STATE_BITS)
    }

    /// The guard follows markers.
    #[inline]
    pub fn marked(self) -> bool {
        self.0 & MARKED != 0
    }
}

impl StreamGuard {
    /// The markers in a token's piece, read before the token is: the state after it and
    /// whether an end marker ended in it, for [`after_token`](Self::after_token) to apply
    /// once the token was judged where it stood. `None` without markers. While the guard
    /// waits for the end marker it asked for, an end marker in the piece closes the section
    /// first (the token is then read afresh), and a piece without one leaves the guard waiting:
    /// `Err` with the verdict to answer.
    #[inline]
    pub(super) fn before_token(
        &mut self,
        piece: &[u8],
    ) -> Result<Option<(Reasoning, bool)>, Verdict> {
        let Some(m) = self.config.inner.reasoning.as_ref() else {
            return Ok(None);
        };
        let (after, ended) = m.read(self.reasoning, piece);
        if self.verdict.action == Action::EndReasoning {
            self.reasoning = after;
            if !ended {
                return Err(self.verdict);
            }
            self.close_reasoning();
            return Ok(None);
        }
        Ok(Some((after, ended)))
    }

    /// Applies what [`before_token`](Self::before_token) read, after the token was judged.
    #[inline]
    pub(super) fn after_token(&mut self, read: Option<(Reasoning, bool)>) {
        if let Some((after, ended)) = read {
            self.reasoning = after;
            if ended {
                self.close_reasoning();
            }
        }
    }

    /// Reads a chunk of text with the markers: the detectors read each stretch up to a marker
    /// with the stream inside or outside a section as it stands there, and the marker's effect
    /// comes between two stretches, so that where the chunks were cut does not matter. While
    /// the guard waits for the end marker, stretches are skipped. Returns the strongest
    /// verdict since the last end of a section (or the halt).
    pub(super) fn read_marked(&mut self, text: &[u8]) -> Verdict {
        if !self.reasoning.marked() {
            return self.read_stretch(text);
        }
        // The markers are read while the detectors change the guard: held by a second
        // reference to the configuration (one count per chunk, with markers only).
        let config = self.config.clone();
        let m = config.inner.reasoning.as_ref().expect("checked above");
        let mut best = self.verdict;
        let mut rest = text;
        while !rest.is_empty() {
            let (k, after, marker) = m.until_marker(self.reasoning, rest);
            if self.verdict.action != Action::EndReasoning {
                let v = self.read_stretch(&rest[..k]);
                if v.action == Action::Halt {
                    return v;
                }
                if v.action > best.action {
                    best = v;
                }
            }
            self.reasoning = after;
            if marker == Some(Marked::End) {
                self.close_reasoning();
                best = self.verdict;
            }
            rest = &rest[k..];
        }
        if best.action > self.verdict.action {
            best
        } else {
            self.verdict
        }
    }

    /// An end marker: the loops read so far are forgotten, as at a breaker, and an
    /// `EndReasoning` the guard was answering is over.
    fn close_reasoning(&mut self) {
        if let Some(j) = super::speculative::noting(&mut self.drafts) {
            self.engine.note_forget(j, Owner::Stream);
            self.text.note_forget(j);
        }
        self.engine.forget();
        self.text.forget();
        self.warn_streak = 0;
        if self.verdict.action == Action::EndReasoning {
            self.verdict = Verdict {
                at: self.verdict.at,
                ..Verdict::default()
            };
        }
    }

    /// A halt inside a reasoning section, on a stream with text, ends the section instead.
    #[inline]
    pub(super) fn reasoning_action(&self, action: Action) -> Action {
        if action == Action::Halt && self.has_text && self.reasoning.inside() {
            Action::EndReasoning
        } else {
            action
        }
    }

    /// The reasoning state of a new stream.
    pub(super) fn reasoning_initial(&self) -> Reasoning {
        self.config
            .inner
            .reasoning
            .as_ref()
            .map_or(Reasoning::default(), Markers::initial)
    }

    /// The end marker the host should force after [`Action::EndReasoning`] (empty when the
    /// guard has none).
    pub fn reasoning_end(&self) -> &[u8] {
        self.config
            .inner
            .reasoning
            .as_ref()
            .map_or(&[][..], |m| &m.end.bytes)
    }

    /// Whether the stream is inside a reasoning section now (always `false` without markers).
    pub fn in_reasoning(&self) -> bool {
        self.config.inner.reasoning.is_some() && self.reasoning.inside()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every marker, split at every byte and fed after a prefix that half matches it, is found
    /// exactly where it ends.
    #[test]
    fn markers_are_found_across_pushes() {
        for marker in ["</think>", "aab", "abab", "x", "]]>]]>"] {
            let m = Markers::new("", marker).unwrap();
            let text = format!("a{}{marker} tail", &marker[..marker.len() - 1]);
            for cut in 0..=text.len() {
                let (r, e1) = m.read(m.initial(), &text.as_bytes()[..cut]);
                let (r, e2) = m.read(r, &text.as_bytes()[cut..]);
                assert!(e1 || e2, "{marker} cut at {cut}");
                assert!(!r.inside());
                let naive = text.find(marker).unwrap() + marker.len();
                assert_eq!(e1, cut >= naive, "{marker} cut at {cut}");
            }
        }
    }

    #[test]
    fn a_start_marker_opens_a_section() {
        let m = Markers::new("<think>", "</think>").unwrap();
        let r = m.initial();
        assert!(!r.inside());
        let (r, _) = m.read(r, b"hi <thi");
        assert!(!r.inside());
        let (r, _) = m.read(r, b"nk> hmm");
        assert!(r.inside());
        let (r, ended) = m.read(r, b"</think> done");
        assert!(!r.inside() && ended);
        assert!(Markers::new("<think>", "").is_none());
    }
}
