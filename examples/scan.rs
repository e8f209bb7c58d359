//! Scans JSON Lines of model output the way a server would see it, one token at a time, and
//! shows where each stream would have been halted and what it was repeating.
//!
//! ```text
//! cargo run --release --example scan -- tests/data/smollm2-sample.jsonl [--preset NAME]
//! ```
//!
//! Each record needs `token_ids` (with `pieces` or `pieces_hex` for the text) or `text`.

use std::io::BufRead;

use loopguard::{Action, Preset, StreamConfig, StreamGuard, Verdict};
use serde_json::Value;

fn main() {
    let mut args = std::env::args().skip(1);
    let mut files = Vec::new();
    let mut preset = Preset::Balanced;
    while let Some(a) = args.next() {
        if a == "--preset" {
            let name = args.next().unwrap_or_default();
            preset = Preset::from_name(&name).unwrap_or_else(|| {
                eprintln!("unknown preset {name:?}: strict, balanced or lenient");
                std::process::exit(2)
            });
        } else {
            files.push(a);
        }
    }
    if files.is_empty() {
        eprintln!("usage: scan FILE.jsonl... [--preset strict|balanced|lenient]");
        std::process::exit(2);
    }
    let config = StreamConfig::preset(preset);
    let mut guard = StreamGuard::new(&config);
    let (mut streams, mut halted, mut warned, mut tokens, mut saved) = (0, 0, 0, 0u64, 0u64);
    for file in &files {
        let reader = match std::fs::File::open(file) {
            Ok(f) => std::io::BufReader::new(f),
            Err(e) => {
                eprintln!("{file}: {e}");
                std::process::exit(2);
            }
        };
        for (n, line) in reader.lines().enumerate() {
            let Ok(line) = line else { break };
            let rec: Value = match serde_json::from_str(&line) {
                Ok(v) => v,
                Err(e) => {
                    eprintln!("{file}:{}: not JSON: {e}", n + 1);
                    continue;
                }
            };
            guard.reset();
            let (len, halt) = feed(&mut guard, &rec);
            streams += 1;
            tokens += len;
            if guard.stats().first_warn_at.is_some() {
                warned += 1;
            }
            if let Some(v) = halt {
                halted += 1;
                saved += len - 1 - v.at;
                let text = String::from_utf8_lossy(guard.repeated_text());
                println!(
                    "HALT {:<40} at {:>4}/{:<4} {:<14} period {:>3} x{:<5.1} onset {:>4}  saves {:>4}  repeating {:?}",
                    rec["id"].as_str().unwrap_or("?"),
                    v.at,
                    len,
                    v.kind.as_str(),
                    v.period,
                    v.repeats,
                    v.onset,
                    len - 1 - v.at,
                    text.chars().take(60).collect::<String>()
                );
            }
        }
    }
    println!(
        "\n{streams} streams, {tokens} tokens: {halted} halted, {warned} warned; {saved} tokens would have been saved ({:.0}%)",
        100.0 * saved as f64 / tokens.max(1) as f64
    );
}

/// Feeds one record token by token (or its text in small chunks); returns its length in
/// symbols and the halt.
fn feed(guard: &mut StreamGuard, rec: &Value) -> (u64, Option<Verdict>) {
    let ids: Vec<u32> = rec["token_ids"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_u64())
                .map(|v| v as u32)
                .collect()
        })
        .unwrap_or_default();
    if ids.is_empty() {
        let text = rec["text"].as_str().unwrap_or("").as_bytes();
        let mut halt = None;
        for chunk in text.chunks(16) {
            let v = guard.push_text(chunk);
            if v.action == Action::Halt {
                halt = Some(v);
                break;
            }
        }
        let v = guard.finish_text();
        if halt.is_none() && v.action == Action::Halt {
            halt = Some(v);
        }
        let words = String::from_utf8_lossy(text).split_whitespace().count() as u64;
        return (words.max(guard.stats().symbols), halt);
    }
    let pieces: Vec<Vec<u8>> = match rec["pieces_hex"].as_array() {
        Some(hex) => hex
            .iter()
            .map(|h| {
                let h = h.as_str().unwrap_or("");
                (0..h.len() / 2)
                    .filter_map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).ok())
                    .collect()
            })
            .collect(),
        None => rec["pieces"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|p| p.as_str().unwrap_or("").as_bytes().to_vec())
                    .collect()
            })
            .unwrap_or_default(),
    };
    for (i, &id) in ids.iter().enumerate() {
        let v = guard.push_token(id, pieces.get(i).map(Vec::as_slice));
        if v.action == Action::Halt {
            return (ids.len() as u64, Some(v));
        }
    }
    (ids.len() as u64, None)
}
