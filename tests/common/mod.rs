//! Helpers shared by the integration tests: loading the bundled samples and feeding records.
#![allow(dead_code)]

use loopguard::{Action, StreamGuard, Verdict};
use serde_json::Value;

/// The next value of a xorshift generator: a fixed, loop-free pseudo-random sequence.
pub fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// One record of a bundled JSON Lines sample.
#[derive(Clone)]
pub struct Record {
    pub id: String,
    pub ids: Vec<u32>,
    pub pieces: Vec<Vec<u8>>,
    pub text: String,
    pub label: Option<String>,
    pub label_onset: Option<u64>,
    pub label_period: Option<u64>,
}

pub fn load(name: &str) -> Vec<Record> {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("sample line is JSON");
            let ids = v["token_ids"]
                .as_array()
                .map(|a| a.iter().map(|x| x.as_u64().unwrap() as u32).collect())
                .unwrap_or_default();
            let pieces = match v["pieces_hex"].as_array() {
                Some(hex) => hex.iter().map(|h| unhex(h.as_str().unwrap())).collect(),
                None => v["pieces"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|p| p.as_str().unwrap().as_bytes().to_vec())
                            .collect()
                    })
                    .unwrap_or_default(),
            };
            Record {
                id: v["id"].as_str().unwrap().to_string(),
                ids,
                pieces,
                text: v["text"].as_str().unwrap_or("").to_string(),
                label: v["label"].as_str().map(str::to_string),
                label_onset: v["label_onset"].as_u64(),
                label_period: v["label_period"].as_u64(),
            }
        })
        .collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// Feeds ids with their pieces, one token at a time; returns the halt verdict, if any.
pub fn feed_tokens(guard: &mut StreamGuard, rec: &Record, with_pieces: bool) -> Option<Verdict> {
    for (i, &id) in rec.ids.iter().enumerate() {
        let piece = with_pieces.then(|| rec.pieces[i].as_slice());
        let v = guard.push_token(id, piece);
        if v.action == Action::Halt {
            return Some(v);
        }
    }
    None
}

/// Feeds the text alone in chunks of `chunk` bytes; returns the halt verdict, if any.
pub fn feed_text(guard: &mut StreamGuard, text: &[u8], chunk: usize) -> Option<Verdict> {
    for c in text.chunks(chunk.max(1)) {
        let v = guard.push_text(c);
        if v.action == Action::Halt {
            return Some(v);
        }
    }
    let v = guard.finish_text();
    (v.action == Action::Halt).then_some(v)
}

/// A toy tokenizer for table tests: each token is a word with the white space before it, and
/// its id a hash of its text, so equal pieces get equal ids.
pub fn tokenize(text: &str) -> Vec<(u32, Vec<u8>)> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    for ch in text.chars() {
        // A token starts at white space that follows a word: " word", "\n\nword".
        if ch.is_whitespace() && cur.chars().last().is_some_and(|c| !c.is_whitespace()) {
            out.push(std::mem::take(&mut cur));
        }
        cur.push(ch);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out.into_iter()
        .map(|t| {
            let id = t
                .bytes()
                .fold(2166136261u32, |h, b| (h ^ b as u32).wrapping_mul(16777619));
            (id, t.into_bytes())
        })
        .collect()
}

/// Pushes text through `tokenize` as ids with pieces; returns the halt verdict, if any.
pub fn feed_tokenized(guard: &mut StreamGuard, text: &str) -> Option<Verdict> {
    for (id, piece) in tokenize(text) {
        let v = guard.push_token(id, Some(&piece));
        if v.action == Action::Halt {
            return Some(v);
        }
    }
    None
}
