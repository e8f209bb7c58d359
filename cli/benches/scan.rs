//! How long `loopguard scan` takes over 25 MB of JSON Lines (target: ≤ 2 s each), for token
//! streams, texts, agent event traces and chat transcripts built from the bundled samples.
//!
//!     cargo bench -p loopguard-cli --bench scan -- [--rounds N]
//!
//! Each file is scanned in both output formats; the JSON run's line count is checked against
//! the records written, so a scan that skipped records cannot look fast.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_loopguard");
const SIZE: usize = 25 << 20;
const TARGET_S: f64 = 2.0;

fn sample(name: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/data")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Writes records round-robin until the file holds `SIZE` bytes; returns the record count.
fn write(path: &Path, records: &[String]) -> usize {
    let mut out = String::with_capacity(SIZE + (1 << 20));
    let mut n = 0;
    for r in records.iter().cycle() {
        if out.len() >= SIZE {
            break;
        }
        out.push_str(r);
        out.push('\n');
        n += 1;
    }
    std::fs::write(path, out).unwrap();
    n
}

fn files(dir: &Path) -> Vec<(&'static str, PathBuf, usize)> {
    let tokens = sample("smollm2-sample.jsonl");
    let agents = sample("agent-sample.jsonl");
    let shapes: [(&str, Vec<String>); 4] = [
        (
            "token streams",
            tokens
                .iter()
                .map(|r| {
                    json!({"id": r["id"], "token_ids": r["token_ids"], "pieces": r["pieces"]})
                        .to_string()
                })
                .collect(),
        ),
        (
            "texts",
            tokens
                .iter()
                .map(|r| json!({"id": r["id"], "text": r["text"]}).to_string())
                .collect(),
        ),
        (
            "agent events",
            agents
                .iter()
                .map(|r| json!({"id": r["id"], "events": r["events"]}).to_string())
                .collect(),
        ),
        ("chat transcripts", agents.iter().map(chat).collect()),
    ];
    shapes
        .into_iter()
        .map(|(name, records)| {
            let path = dir.join(format!("{}.jsonl", name.replace(' ', "-")));
            let n = write(&path, &records);
            (name, path, n)
        })
        .collect()
}

/// An event trace as an OpenAI-style transcript.
fn chat(r: &Value) -> String {
    let mut messages = vec![json!({"role": "user", "content": r["task"]})];
    for (i, e) in r["events"].as_array().unwrap().iter().enumerate() {
        let id = format!("call_{i}");
        let args = serde_json::to_string(&e["args"]).unwrap();
        messages.push(
            json!({"role": "assistant", "content": e["thought"], "tool_calls": [
            {"id": id, "type": "function", "function": {"name": e["tool"], "arguments": args}}]}),
        );
        let content = e["result"].as_str().or(e["error"].as_str()).unwrap_or("");
        messages.push(
            json!({"role": "tool", "tool_call_id": id, "content": content,
            "is_error": e["error"].is_string()}),
        );
    }
    json!({"id": r["id"], "messages": messages}).to_string()
}

fn main() {
    let mut rounds = 3;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--rounds" {
            rounds = args
                .next()
                .and_then(|n| n.parse().ok())
                .expect("--rounds N");
        }
    }
    let dir = std::env::temp_dir().join(format!("lg-scan-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    println!("loopguard scan over 25 MB files, best and median of {rounds} rounds (target ≤ {TARGET_S} s)");
    let mut worst = 0.0f64;
    for (name, path, records) in files(&dir) {
        for format in ["json", "human"] {
            let mut times = Vec::new();
            for _ in 0..rounds {
                let start = Instant::now();
                let o = Command::new(BIN)
                    .args(["scan", "--fail-on", "never", "--format", format])
                    .arg(&path)
                    .output()
                    .unwrap();
                times.push(start.elapsed().as_secs_f64());
                assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
                let out = String::from_utf8(o.stdout).unwrap();
                if format == "json" {
                    assert_eq!(out.lines().count(), records, "{name}: one line per record");
                } else {
                    assert!(
                        out.starts_with(&format!("Scanned {records} records")),
                        "{out}"
                    );
                }
            }
            times.sort_by(f64::total_cmp);
            let median = times[times.len() / 2];
            worst = worst.max(median);
            println!(
                "  {name:<17} {format:<5} {records:>6} records  best {:.2} s  median {median:.2} s  ({:.0} MB/s)",
                times[0],
                SIZE as f64 / 1e6 / median
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
    let verdict = if worst <= TARGET_S { "met" } else { "NOT MET" };
    println!("slowest median {worst:.2} s: target ≤ {TARGET_S} s {verdict}");
}
