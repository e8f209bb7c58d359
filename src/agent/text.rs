//! Fingerprints of what tools return and of what the agent says.
//!
//! Results are compared by fingerprint and never stored: a 10 MB output costs one pass.

use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed, Xxh3};

/// Normalised bytes of an error kept for its fingerprint: the start says what went wrong.
const ERROR_PREFIX: usize = 512;
/// Quoted or bracketed spans up to this long are folded to `[]` in error fingerprints.
const QUOTE_MAX: usize = 160;

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

/// The fingerprint of a result, normalised for layout only: surrounding whitespace trimmed and
/// every whitespace run read as one space. A changed result (a new page, a new time, a different
/// test failure) is progress, so nothing else is folded. Returns the fingerprint and the
/// trimmed length. One pass, constant memory, whatever the size.
pub(crate) fn result_fingerprint(output: &[u8]) -> (u64, usize) {
    let t = trim_ascii(output);
    let mut hasher = Xxh3::new();
    let mut buf = [0u8; 1024];
    let (mut n, mut in_space) = (0, false);
    for &b in t {
        if b.is_ascii_whitespace() {
            if in_space {
                continue;
            }
            in_space = true;
            buf[n] = b' ';
        } else {
            in_space = false;
            buf[n] = b;
        }
        n += 1;
        if n == buf.len() {
            hasher.update(&buf);
            n = 0;
        }
    }
    hasher.update(&buf[..n]);
    (hasher.digest(), t.len())
}

/// The fingerprint of an error message, the same whatever the arguments that caused it:
/// ASCII case, digits, hex words, paths, and quoted or bracketed spans (which usually echo the
/// argument) are folded, and whitespace runs become one space. Only the first 512 normalised
/// bytes count.
pub(crate) fn error_fingerprint(error: &[u8], scratch: &mut Vec<u8>) -> u64 {
    scratch.clear();
    let mut i = 0;
    while i < error.len() && scratch.len() < ERROR_PREFIX {
        let b = error[i];
        // A quoted or bracketed span: fold it when it closes soon enough.
        let close = match b {
            b'"' => Some(b'"'),
            b'\'' if i == 0 || !error[i - 1].is_ascii_alphanumeric() => Some(b'\''),
            b'`' => Some(b'`'),
            b'[' => Some(b']'),
            b'(' => Some(b')'),
            b'{' => Some(b'}'),
            b'<' => Some(b'>'),
            _ => None,
        };
        if let Some(c) = close {
            let end = (i + 1 + QUOTE_MAX).min(error.len());
            if let Some(j) = memchr::memchr(c, &error[i + 1..end]) {
                scratch.extend_from_slice(&[b, c]);
                i += j + 2;
                continue;
            }
        }
        if b.is_ascii_whitespace() {
            if scratch.last().is_some_and(|&l| l != b' ') {
                scratch.push(b' ');
            }
            i += 1;
            continue;
        }
        // One word: up to the next whitespace or bracket (an unclosed bracket is a word).
        let start = i;
        i += 1;
        while i < error.len()
            && !error[i].is_ascii_whitespace()
            && !matches!(error[i], b'"' | b'`' | b'[' | b'(' | b'{' | b'<')
        {
            i += 1;
        }
        let room = ERROR_PREFIX - scratch.len();
        push_word(&error[start..i.min(start + room)], scratch);
    }
    while scratch.last() == Some(&b' ') {
        scratch.pop();
    }
    xxh3_64_with_seed(scratch, 0x0065_7272)
}

/// One word of an error message, folded.
fn push_word(w: &[u8], out: &mut Vec<u8>) {
    if w.contains(&b'/') || w.contains(&b'\\') {
        out.push(b'/');
        // Keep what ends the word (`:` or `,`) so "at /a/b:" and "at /c:" agree.
        if let Some(&last) = w.last() {
            if last.is_ascii_punctuation() && last != b'/' && last != b'\\' {
                out.push(last);
            }
        }
        return;
    }
    let has_digit = w.iter().any(u8::is_ascii_digit);
    // A hex word or a UUID: fold it whole (`0x7ffd`, `deadbeef42`, `9f1c-…`).
    if has_digit && w.len() >= 6 && w.iter().all(|b| b.is_ascii_hexdigit() || *b == b'-') {
        out.push(b'#');
        return;
    }
    if w.len() > 2 && w[0] == b'0' && (w[1] | 0x20) == b'x' {
        out.push(b'#');
        return;
    }
    let mut in_digits = false;
    for &b in w {
        if b.is_ascii_digit() {
            if !in_digits {
                out.push(b'#');
            }
            in_digits = true;
        } else {
            out.push(b.to_ascii_lowercase());
            in_digits = false;
        }
    }
}

/// Words that carry no topic, left out of the semantic comparison.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as", "at",
    "be", "because", "been", "before", "being", "but", "by", "can", "could", "did", "do", "does",
    "for", "from", "had", "has", "have", "he", "her", "here", "his", "how", "i", "if", "in",
    "into", "is", "it", "its", "just", "let", "me", "more", "my", "no", "not", "now", "of", "on",
    "or", "our", "should", "so", "some", "that", "the", "their", "them", "then", "there", "these",
    "they", "this", "those", "to", "too", "up", "was", "we", "were", "what", "when", "which",
    "while", "will", "with", "would", "you", "your",
];

/// Distinct words kept per message (the smallest hashes, so two sketches stay comparable).
pub(crate) const WORDS: usize = 48;

/// The set of topic words of a message, for token-set Jaccard similarity.
#[derive(Clone, Debug, Default)]
pub(crate) struct WordSet {
    words: Vec<u32>,
}

impl WordSet {
    /// Lower-cased alphanumeric words, stop words removed, at most [`WORDS`] kept.
    pub(crate) fn of(text: &[u8], scratch: &mut Vec<u8>) -> WordSet {
        let mut words: Vec<u32> = Vec::with_capacity(WORDS + 1);
        for w in text.split(|b| !b.is_ascii_alphanumeric() && *b < 0x80) {
            if w.is_empty() {
                continue;
            }
            scratch.clear();
            scratch.extend(w.iter().map(u8::to_ascii_lowercase));
            if std::str::from_utf8(scratch).is_ok_and(|s| STOP_WORDS.binary_search(&s).is_ok()) {
                continue;
            }
            let h = (xxh3_64(scratch) >> 32) as u32;
            if let Err(at) = words.binary_search(&h) {
                if at < WORDS {
                    words.insert(at, h);
                    words.truncate(WORDS);
                }
            }
        }
        WordSet { words }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// |A ∩ B| / |A ∪ B| over the kept words.
    pub(crate) fn jaccard(&self, other: &WordSet) -> f32 {
        let (a, b) = (&self.words, &other.words);
        if a.is_empty() || b.is_empty() {
            return 0.0;
        }
        let (mut i, mut j, mut both) = (0, 0, 0usize);
        while i < a.len() && j < b.len() {
            match a[i].cmp(&b[j]) {
                std::cmp::Ordering::Equal => {
                    both += 1;
                    i += 1;
                    j += 1;
                }
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
            }
        }
        both as f32 / (a.len() + b.len() - both) as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(s: &str) -> u64 {
        error_fingerprint(s.as_bytes(), &mut Vec::new())
    }

    #[test]
    fn stop_words_are_sorted() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn errors_fold_what_varies() {
        assert_eq!(
            fp("Permission denied: /etc/shadow (errno 13)"),
            fp("permission  denied: /root/.ssh/id_rsa (errno 13)\n")
        );
        assert_eq!(
            fp("TypeError: x is undefined (line 10)"),
            fp("TypeError: x is undefined (line 12)")
        );
        assert_eq!(
            fp("Could not find [The Dark Tower]. Similar: ['a', 'b']"),
            fp("Could not find [Aunt May]. Similar: ['c']")
        );
        assert_eq!(
            fp("request 9f1c2d3e-aaaa-bbbb-cccc-1234567890ab failed at 2026-11-22T08:14:44Z"),
            fp("request 0a1b2c3d-aaaa-bbbb-cccc-0987654321ff failed at 2025-01-02T00:00:01Z")
        );
        assert_ne!(
            fp("TypeError: x is undefined"),
            fp("ImportError: cannot import y")
        );
        assert_eq!(fp(""), fp("   "));
        // Unclosed quotes and brackets are plain characters.
        assert_ne!(fp("bad \"quote"), fp("bad (paren"));
        fp(&"\"".repeat(10_000));
        fp(&"[(".repeat(10_000));
    }

    #[test]
    fn results_ignore_layout_only() {
        let fp = |s: &str| result_fingerprint(s.as_bytes()).0;
        assert_eq!(fp("a  b\n\tc "), fp("a b c"));
        assert_ne!(fp("chunk 1"), fp("chunk 2"));
        assert_ne!(fp("ab"), fp("a b"));
        let long = "x ".repeat(5000);
        assert_eq!(fp(&long), fp(&long.replace(' ', "\n\n")));
    }

    #[test]
    fn word_sets() {
        let mut s = Vec::new();
        let a = WordSet::of(
            b"I need to check the file. The file does not exist.",
            &mut s,
        );
        let b = WordSet::of(
            b"I need to check the FILE; the file does not exist!",
            &mut s,
        );
        let c = WordSet::of(b"Searching the web for rust allocators", &mut s);
        assert_eq!(a.jaccard(&b), 1.0);
        assert_eq!(a.jaccard(&c), 0.0);
        assert!(WordSet::of(b"the a of", &mut s).is_empty());
    }
}
