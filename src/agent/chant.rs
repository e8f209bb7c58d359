//! Content chanting in streamed assistant text, measured the way gemini-cli measures it: every
//! fixed-size chunk of characters is hashed at every offset, and a loop is a chunk seen
//! `threshold` times close together whose gaps are mostly the same text. Markdown structure
//! (fences, tables, list items, headings, quotes) resets the count and code is not analysed.
//!
//! The [`AgentGuard`](crate::AgentGuard) uses the stream engine for message text by default;
//! this detector exists so the `gemini_cli` preset answers as gemini-cli does.

use std::collections::HashMap;

use xxhash_rust::xxh3::xxh3_64;

/// Thresholds of the chanting detector.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChantSettings {
    /// Characters per chunk. `8..=1000`.
    pub chunk: u32,
    /// Sightings of one chunk that make a loop. `2..=1000`.
    pub threshold: u32,
    /// Mean distance between the last `threshold` sightings must not exceed `chunk × spread`.
    /// `1..=100`.
    pub spread: u32,
    /// Characters of history kept; older text is forgotten. `chunk..=1_000_000`.
    pub history: u32,
}

impl Default for ChantSettings {
    fn default() -> ChantSettings {
        ChantSettings {
            chunk: 50,
            threshold: 10,
            spread: 5,
            history: 5000,
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Chant {
    history: Vec<char>,
    seen: HashMap<u64, Vec<u32>>,
    next: usize,
    in_code: bool,
    scratch: String,
}

impl Chant {
    pub(crate) fn new() -> Chant {
        Chant {
            history: Vec::new(),
            seen: HashMap::new(),
            next: 0,
            in_code: false,
            scratch: String::new(),
        }
    }

    /// Bytes held now (bounded by the history setting).
    pub(crate) fn memory_usage(&self) -> usize {
        self.history.capacity() * 4
            + self.seen.capacity() * 40
            + self.seen.values().map(|v| v.capacity() * 4).sum::<usize>()
            + self.scratch.capacity()
    }

    /// Forgets the text (a tool call or a new scope); fence state is kept.
    pub(crate) fn clear(&mut self) {
        self.history.clear();
        self.seen.clear();
        self.next = 0;
    }

    /// Adds one streamed chunk; returns the repeated chunk's offset when it makes a loop.
    pub(crate) fn push(&mut self, s: &ChantSettings, content: &str) -> Option<usize> {
        let fences = content.matches("```").count();
        let divider = is_divider(content);
        if fences > 0 || divider || has_structure(content) {
            self.clear();
        }
        let was_in_code = self.in_code;
        if fences % 2 == 1 {
            self.in_code = !self.in_code;
        }
        if was_in_code || self.in_code || divider {
            return None;
        }
        self.history.extend(content.chars());
        let cap = s.history as usize;
        if self.history.len() > cap {
            let cut = self.history.len() - cap;
            self.history.drain(..cut);
            self.next = self.next.saturating_sub(cut);
            self.seen.retain(|_, at| {
                at.retain_mut(|i| match i.checked_sub(cut as u32) {
                    Some(j) => {
                        *i = j;
                        true
                    }
                    None => false,
                });
                !at.is_empty()
            });
        }
        let chunk = s.chunk as usize;
        while self.next + chunk <= self.history.len() {
            if self.is_loop(s, self.next) {
                return Some(self.next);
            }
            self.next += 1;
        }
        None
    }

    fn is_loop(&mut self, s: &ChantSettings, at: usize) -> bool {
        let chunk = s.chunk as usize;
        self.scratch.clear();
        self.scratch.extend(&self.history[at..at + chunk]);
        let h = xxh3_64(self.scratch.as_bytes());
        let Some(seen) = self.seen.get_mut(&h) else {
            self.seen.insert(h, vec![at as u32]);
            return false;
        };
        // Every hit is checked against the text, so a collision cannot make a loop.
        let first = seen[0] as usize;
        if self.history[first..first + chunk] != self.history[at..at + chunk] {
            return false;
        }
        seen.push(at as u32);
        let n = s.threshold as usize;
        if seen.len() < n {
            return false;
        }
        let recent = &seen[seen.len() - n..];
        let mean = (recent[n - 1] - recent[0]) as f64 / (n - 1) as f64;
        if mean > (chunk * s.spread as usize) as f64 {
            return false;
        }
        // A list whose items share a long prefix has distinct gaps; a loop has one or two.
        let mut gaps: Vec<&[char]> = recent
            .windows(2)
            .map(|w| &self.history[w[0] as usize..w[1] as usize])
            .collect();
        gaps.sort_unstable();
        gaps.dedup();
        gaps.len() <= n / 2
    }
}

/// A chunk made only of rule characters (`-`, `=`, `_`, `*`, `+`, box drawing).
pub(crate) fn is_divider(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| matches!(c, '-' | '=' | '_' | '*' | '+' | '\u{2500}'..='\u{257F}'))
}

/// A line that opens a markdown table, list item, heading or block quote.
fn has_structure(s: &str) -> bool {
    s.split('\n').any(|line| {
        let t = line.trim_start();
        let b = t.as_bytes();
        let table = (b.first() == Some(&b'|') && t[1..].contains('|'))
            || (b.len() >= 3 && b[..3].iter().all(|c| matches!(c, b'|' | b'+' | b'-')));
        let item = matches!(b, [b'*' | b'-' | b'+', c, ..] if c.is_ascii_whitespace())
            || t.find(|c: char| !c.is_ascii_digit())
                .is_some_and(|k| k > 0 && t[k..].starts_with(". "));
        let heading = line.starts_with('#')
            && line
                .trim_start_matches('#')
                .starts_with(|c: char| c.is_whitespace());
        let quote = line.starts_with("> ");
        table || item || heading || quote
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_close_copies_make_a_loop() {
        let s = ChantSettings::default();
        let mut c = Chant::new();
        let chunk = "This is a unique sentence, id=1. This is a unique ";
        for i in 0..9 {
            assert_eq!(c.push(&s, chunk), None, "copy {i}");
        }
        assert!(c.push(&s, chunk).is_some());
    }

    #[test]
    fn structure_and_code_reset() {
        let s = ChantSettings::default();
        let mut c = Chant::new();
        let chunk = "This is a unique sentence, id=1. This is a unique ";
        for _ in 0..9 {
            assert_eq!(c.push(&s, chunk), None);
        }
        assert_eq!(c.push(&s, "| a | b |"), None);
        for _ in 0..9 {
            assert_eq!(c.push(&s, chunk), None);
        }
        assert_eq!(c.push(&s, "```\n"), None);
        for _ in 0..30 {
            assert_eq!(c.push(&s, chunk), None);
        }
        assert!(has_structure("1. item") && has_structure("## H") && has_structure("> q"));
        assert!(!has_structure("plain words. 12 more"));
        assert!(is_divider("━━━━") && is_divider("-----") && !is_divider("--a"));
    }

    #[test]
    fn history_is_bounded() {
        let s = ChantSettings {
            history: 200,
            ..ChantSettings::default()
        };
        let mut c = Chant::new();
        for i in 0..10_000u32 {
            c.push(&s, &format!("w{} ", i.wrapping_mul(2_654_435_761)));
        }
        assert!(c.history.len() <= 200);
        assert!(c.seen.values().map(Vec::len).sum::<usize>() <= 200);
    }
}
