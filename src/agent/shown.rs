//! Searches that find nothing new: a search whose every line earlier searches have already
//! shown taught the agent nothing, whatever words it searched for.
//!
//! An agent hunting for something that is not where it looks rewords its search again and
//! again (`codebase_search` for "password reset email", then "function that sends the reset
//! email", …) and gets back the snippets it has read already, in another order; or it replays
//! searches it made before, a file's `search_file` and the tree's `search_dir` in turn. Each
//! answer differs from the one before, so the rules on results alike never see it. Its lines
//! do: a search that shows only lines shown before found nothing new, and three such searches
//! since the last write, none between them finding a new line, are the same result
//! (`same_result`, a warning at most: the evidence is what the agent saw, not a call repeated).
//!
//! People narrow a search too, and a narrower search shows a subset of what the wider one did;
//! so one or two searches that find nothing new are nothing, and any search that shows a new
//! line ends the run.
//!
//! Memory: the lines' hashes in two bit filters taken in turn (a generation holds the lines of
//! [`TURN`] or fewer, and a line is known while either generation holds it), so what is
//! remembered is the last few hundred lines searches showed, in 4 KiB whatever the session's
//! length. A filter can take a new line for one it holds: with a generation's 16,384 bits and
//! two bits a line, about one line in 140 — a search of one new line then finds "nothing new"
//! once, which a run of three absorbs.

use super::harness::{harness_line, markup_line};
use super::text::{line_fingerprint, trim_ascii};
use super::{AgentGuard, AgentLoopKind, AgentSettings, Finding, Reason, Thresholds};
use xxhash_rust::xxh3::xxh3_64;

/// Bits of one generation.
const BITS: usize = 1 << 14;
/// Lines a generation takes before the older one is forgotten.
const TURN: u32 = 512;
/// Lines of one output read (a search that lists more says something new at its end, or is
/// too broad to be read in a loop).
const MAX_LINES: usize = 256;
/// Lines up to this long are read with their chatter folded (see [`Shown::show`]).
const CHATTER_LINE: usize = 160;
/// Lines shorter than this (`--`, `}`) are layout, shown by any search.
const MIN_LINE: usize = 4;

/// The lines searches have shown (see the module's documentation).
#[derive(Clone)]
pub(crate) struct Shown {
    now: Box<[u64; BITS / 64]>,
    before: Box<[u64; BITS / 64]>,
    taken: u32,
}

impl Default for Shown {
    fn default() -> Shown {
        Shown {
            now: Box::new([0; BITS / 64]),
            before: Box::new([0; BITS / 64]),
            taken: 0,
        }
    }
}

/// The two bits of a line's hash.
fn bits(h: u64) -> [usize; 2] {
    [(h as usize) % BITS, ((h >> 32) as usize) % BITS]
}

fn holds(filter: &[u64; BITS / 64], h: u64) -> bool {
    bits(h)
        .iter()
        .all(|&b| filter[b / 64] & (1 << (b % 64)) != 0)
}

impl Shown {
    /// Reads the lines of a search's `output` and remembers them: `Some(true)` when every one
    /// was shown before, `Some(false)` when one was not, `None` when it has none (markup, the
    /// harness's own lines and lines under [`MIN_LINE`] bytes are not the search's).
    pub(crate) fn show(&mut self, output: &[u8]) -> Option<bool> {
        let mut lines = 0;
        let mut all_known = true;
        for line in output.split(|&b| b == b'\n').take(MAX_LINES) {
            let t = trim_ascii(line);
            // Markup, and the harness's lines in brackets, which change with the session, not
            // the search (`[Current working directory: …]`, `(Open file: …)`); its other lines
            // read the same every time, and so are known after their first.
            if markup_line(t) || (matches!(t.first(), Some(b'[' | b'(')) && harness_line(t)) {
                continue;
            }
            let t = content(t);
            if t.len() < MIN_LINE {
                continue;
            }
            // A line's chatter (`Wall time: 0.4 seconds`, a timestamp) says nothing new. Such
            // lines are short; a long one (a page's paragraph) is hashed as it is, in one pass.
            let h = if t.len() <= CHATTER_LINE && t.iter().any(u8::is_ascii_digit) {
                line_fingerprint(t)
            } else {
                xxh3_64(t)
            };
            lines += 1;
            if holds(&self.now, h) || holds(&self.before, h) {
                continue;
            }
            all_known = false;
            if self.taken == TURN {
                std::mem::swap(&mut self.now, &mut self.before);
                self.now.fill(0);
                self.taken = 0;
            }
            for b in bits(h) {
                self.now[b / 64] |= 1 << (b % 64);
            }
            self.taken += 1;
        }
        (lines > 0).then_some(all_known)
    }

    /// Bytes held on the heap: the two generations.
    pub(crate) fn heap_usage(&self) -> usize {
        2 * BITS / 8
    }

    /// Forgets every line.
    pub(crate) fn clear(&mut self) {
        self.now.fill(0);
        self.before.fill(0);
        self.taken = 0;
    }
}

/// A line without the place a search printed before it: `Line 18:` (Cursor's `grep_search`),
/// `src/app.ts:18:` or `src/app.ts:18:7:` (`grep -n`, `rg`), `18:` or `18|` (a numbered
/// view), or a snippet's range alone (`L14-41`). The same line of code shown by a `grep` and
/// in a snippet, or from another directory, is the same thing found.
fn content(t: &[u8]) -> &[u8] {
    let digits = |s: &[u8]| s.iter().take_while(|b| b.is_ascii_digit()).count();
    let mut r = match t.strip_prefix(b"Line ") {
        Some(x) if digits(x) > 0 && x.get(digits(x)) == Some(&b':') => x,
        _ => t,
    };
    // A snippet's range alone.
    if r.first() == Some(&b'L') {
        let n = digits(&r[1..]);
        let rest = &r[1 + n..];
        let m = rest.strip_prefix(b"-").map_or(0, |x| 1 + digits(x));
        if n > 0 && m == rest.len() {
            return &[];
        }
    }
    let n = digits(r);
    if n > 0 && matches!(r.get(n), Some(b':' | b'|' | b'\t')) {
        r = &r[n + 1..];
    } else {
        // `path:N:` or `path:N:M:` in the line's first word.
        let word = r
            .iter()
            .position(u8::is_ascii_whitespace)
            .unwrap_or(r.len());
        if let Some(colon) = r[..word].iter().position(|&b| b == b':') {
            let mut at = colon;
            let mut numbers = 0;
            while r.get(at) == Some(&b':') && digits(&r[at + 1..]) > 0 {
                at += 1 + digits(&r[at + 1..]);
                numbers += 1;
            }
            if numbers > 0 && matches!(r.get(at), Some(b':' | b'-')) {
                r = &r[at + 1..];
            }
        }
    }
    trim_ascii(r)
}

/// The tool searches, by the words of its name (see [`name_words`](super::asking::name_words)):
/// `search`, `grep`, `glob` or `find` among them (`codebase_search`, `grep_search`,
/// `search_files`, `Grep`, `Glob`, `find_by_name`, `mcp__github__search_code`). A shell's
/// searches are told by the program it runs (see `ShellEffect::searches`).
pub(crate) fn searches_by_name(tool: &str) -> bool {
    let mut searches = false;
    super::asking::name_words(tool, |w| {
        searches |= ["search", "grep", "glob", "find"]
            .iter()
            .any(|k| k.eq_ignore_ascii_case(w));
    });
    searches
}

impl AgentGuard {
    /// Call `me`, a search, showed only lines shown before: with the searches before it since
    /// the last write that did the same, none between showing a new line, from the count
    /// `same_result` warns at, it is the same result.
    pub(super) fn nothing_new(&self, s: &AgentSettings, me: usize, found: &mut Vec<Finding>) {
        if s.same_result.is_off() || !s.results_are_progress || self.calls[me].shown != Some(true) {
            return;
        }
        let mut calls = Vec::new();
        for i in (0..=me).rev() {
            let c = &self.calls[i];
            if c.wrote || c.shown == Some(false) {
                break;
            }
            if c.shown == Some(true) {
                calls.push(i);
            }
        }
        calls.reverse();
        let warn = s.same_result.warn;
        found.extend(Finding::of_calls(
            AgentLoopKind::SameResult,
            Reason::NoProgress,
            Thresholds::new(warn, 0, 0),
            warn,
            calls,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_shown_again_are_known() {
        let mut shown = Shown::default();
        assert_eq!(
            shown.show(b"src/a.rs:3: fn main()\nsrc/b.rs:9: fn other()\n"),
            Some(false)
        );
        // A subset, in another order, with markup around it.
        assert_eq!(
            shown.show(b"<output>\n  src/b.rs:9: fn other()\nsrc/a.rs:3: fn main()\n</output>"),
            Some(true)
        );
        assert_eq!(
            shown.show(b"src/a.rs:3: fn main()\nsrc/c.rs:1: fn new_one()\n"),
            Some(false)
        );
        // Nothing but layout: no lines of its own.
        assert_eq!(shown.show(b"--\n}\n\n"), None);
        // Chatter on a line is folded as in results: the same hits, timed again.
        assert_eq!(
            shown.show(b"Exit code: 0\nWall time: 0.4 seconds\nsrc/b.rs:9: fn other()"),
            Some(false)
        );
        assert_eq!(
            shown.show(b"Exit code: 0\nWall time: 1.3 seconds\nsrc/a.rs:3: fn main()"),
            Some(true)
        );
        shown.clear();
        assert_eq!(shown.show(b"src/a.rs:3: fn main()"), Some(false));
    }

    #[test]
    fn a_line_is_its_content_wherever_it_was_found() {
        for (line, text) in [
            (
                "Line 18:       maxAge: config.session.maxAgeMs,",
                "maxAge: config.session.maxAgeMs,",
            ),
            ("src/auth/session.ts:18:      maxAge: x,", "maxAge: x,"),
            ("src/a.rs:18:7: fn main()", "fn main()"),
            ("18:    fn main()", "fn main()"),
            ("  18|    fn main()", "fn main()"),
            ("L14-41", ""),
            ("L7", ""),
            // Not a place: kept whole.
            ("Line up the values", "Line up the values"),
            ("key: value", "key: value"),
            ("http://host:8080/path", "http://host:8080/path"),
            ("12 files changed", "12 files changed"),
        ] {
            assert_eq!(content(line.trim().as_bytes()), text.as_bytes(), "{line}");
        }
        let mut shown = Shown::default();
        assert_eq!(
            shown.show(b"File: src/auth/session.ts\n  Line 18:       maxAge: config.maxAgeMs,"),
            Some(false)
        );
        assert_eq!(
            shown.show(b"src/auth/session.ts:18:      maxAge: config.maxAgeMs,"),
            Some(true)
        );
    }

    #[test]
    fn memory_is_two_generations() {
        let mut shown = Shown::default();
        assert_eq!(shown.show(b"the first line"), Some(false));
        // Two generations' worth of new lines push it out. A filter takes a new line for a
        // known one now and then (under one in a hundred here).
        let known = (0..2 * TURN + 32)
            .filter(|g| shown.show(format!("line number {g}").as_bytes()) == Some(true))
            .count();
        assert!(
            known <= 10,
            "{known} of {} new lines read as known",
            2 * TURN
        );
        assert_eq!(shown.show(b"the first line"), Some(false));
        // One generation's worth does not.
        for g in 0..TURN / 2 {
            shown.show(format!("another line {g}").as_bytes());
        }
        assert_eq!(shown.show(b"the first line"), Some(true));
    }

    #[test]
    fn search_tools_by_name() {
        for t in [
            "codebase_search",
            "grep_search",
            "search_files",
            "Grep",
            "Glob",
            "find_by_name",
            "mcp__github__search_code",
            "google_web_search",
            "FileSearch",
        ] {
            assert!(searches_by_name(t), "{t}");
        }
        for t in [
            "read_file",
            "Bash",
            "research_notes",
            "finder_open",
            "list_dir",
            "grepper",
        ] {
            assert!(!searches_by_name(t), "{t}");
        }
    }
}
