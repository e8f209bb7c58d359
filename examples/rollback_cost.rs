//! What a rollback costs, for the README's *Speculative decoding*: steps of `DRAFTS` drafted
//! tokens (ids with pieces, from the bundled SmolLM2 sample), each ending with
//! `rollback(BACK)` and a commit. Run it under callgrind with `BACK=n` and with `BACK=0` (a
//! rollback of nothing returns at once): the difference over `STEPS` steps is what the
//! rollbacks of `n` pushes cost.
//!
//! `valgrind --tool=callgrind BACK=4 DRAFTS=16 STEPS=2000 target/release/examples/rollback_cost`
use loopguard::{StreamConfig, StreamGuard};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let path = std::env::args()
        .nth(1)
        .unwrap_or("tests/data/smollm2-sample.jsonl".into());
    let (drafts, back, steps) = (env("DRAFTS", 16), env("BACK", 4), env("STEPS", 2000));
    assert!(back <= drafts, "BACK must be at most DRAFTS");
    let mut tokens: Vec<(u32, Vec<u8>)> = Vec::new();
    for line in std::fs::read_to_string(&path).expect("read corpus").lines() {
        let Ok(row) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let (Some(ids), Some(pieces)) = (row["token_ids"].as_array(), row["pieces"].as_array())
        else {
            continue;
        };
        for (id, piece) in ids.iter().zip(pieces) {
            let piece = piece.as_str().unwrap_or_default().as_bytes().to_vec();
            tokens.push((id.as_u64().unwrap_or(0) as u32, piece));
        }
    }
    assert!(!tokens.is_empty(), "no token ids with pieces in {path}");
    let mut guard = StreamGuard::new(&StreamConfig::default());
    let mut at = 0;
    let mut acc = 0u64;
    for _ in 0..steps {
        guard.checkpoint();
        for _ in 0..drafts {
            let (id, piece) = &tokens[at % tokens.len()];
            acc += guard.push_token(*id, Some(piece)).action as u64;
            at += 1;
        }
        acc += guard.rollback(back).expect("drafts held").action as u64;
        guard.commit();
        if guard.verdict().action == loopguard::Action::Halt {
            guard.reset();
        }
    }
    println!("{steps} steps of {drafts} drafts, {back} rolled back each ({acc})");
}
