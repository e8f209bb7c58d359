//! The topic words of what an agent says, for the semantic comparison of its thoughts and
//! messages: a small set of word hashes per message, compared by Jaccard similarity.

use xxhash_rust::xxh3::xxh3_64;

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

    #[test]
    fn stop_words_are_sorted() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
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
