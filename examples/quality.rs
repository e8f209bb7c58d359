//! Quality report on real model output: how many runaway loops the guard halts, how soon, and
//! whether it ever halts a normal stream.
//!
//! ```text
//! cargo run --release --example quality -- [--preset NAME] [--mode pieces|ids|text] [--verbose]
//!     [--labels LABELS.jsonl | --unlabelled] [--set FIELD=VALUE]... [--warnings] FILE.jsonl...
//! ```
//!
//! Each line of FILE is a record with `token_ids` (and `pieces`) or `text`. Labels come from
//! `../shared/tools/label.py` (run on FILE unless `--labels` names its saved output); records
//! without a label (human text) are counted as `normal`. Streams are fed one token at a time,
//! exactly as a server would: `pieces` feeds ids with their pieces, `ids` the ids alone, `text`
//! the pieces as text chunks without ids.

use std::collections::HashMap;
use std::io::BufRead;
use std::process::Command;

use loopguard::{Action, Preset, StreamConfig, StreamGuard, StreamSettings, Verdict};
use serde_json::Value;

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Pieces,
    Ids,
    Text,
}

struct Label {
    label: String,
    onset: Option<u64>,
    /// The loop's period, when the labels give one: latency is then also counted in copies.
    period: Option<u64>,
}

#[derive(Default)]
struct Tally {
    streams: usize,
    halted: usize,
    warned: usize,
    latencies: Vec<f64>,
    latencies_tokens: Vec<f64>,
    saved: u64,
    after_onset: u64,
    tokens: u64,
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut preset = Preset::Balanced;
    let mut mode = Mode::Pieces;
    let mut verbose = false;
    let mut warn_kinds = false;
    let mut labels_path = None;
    let mut files = Vec::new();
    let mut overrides = Vec::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--preset" => {
                let name = args.next().unwrap_or_else(|| die("--preset NAME"));
                preset = Preset::from_name(&name)
                    .unwrap_or_else(|| die(&format!("--preset: unknown preset {name:?}")));
            }
            "--mode" => {
                mode = match args.next().as_deref() {
                    Some("pieces") => Mode::Pieces,
                    Some("ids") => Mode::Ids,
                    Some("text") => Mode::Text,
                    other => die(&format!("--mode pieces|ids|text, not {other:?}")),
                }
            }
            "--set" => {
                let kv = args.next().unwrap_or_default();
                let (k, v) = kv
                    .split_once('=')
                    .unwrap_or_else(|| die("--set FIELD=VALUE"));
                overrides.push((k.to_string(), v.to_string()));
            }
            "--labels" => labels_path = Some(args.next().unwrap_or_else(|| die("--labels FILE"))),
            // Human text: no labeller, every record is normal.
            "--unlabelled" => labels_path = Some(String::new()),
            "--verbose" | "-v" => verbose = true,
            // The first warning of every record that warns, with its kind.
            "--warnings" => warn_kinds = true,
            _ => files.push(a),
        }
    }
    if files.is_empty() {
        eprintln!(
            "usage: quality [--preset NAME] [--mode pieces|ids|text] [--labels L] FILE.jsonl..."
        );
        std::process::exit(2);
    }
    let labels = load_labels(labels_path.as_deref(), &files);
    let mut settings = StreamSettings::preset(preset);
    for (k, v) in &overrides {
        settings
            .set(k, v)
            .unwrap_or_else(|e| die(&format!("--set: {e}")));
    }
    let config = StreamConfig::new(&settings).unwrap_or_else(|e| die(&e.to_string()));
    let mut guard = StreamGuard::new(&config);
    let mut tallies: HashMap<String, Tally> = HashMap::new();
    for file in &files {
        let reader = std::fs::File::open(file)
            .map(std::io::BufReader::new)
            .unwrap_or_else(|e| die(&format!("FILE {file}: {e}")));
        for (lineno, line) in reader.lines().enumerate() {
            let line = line.unwrap_or_else(|e| die(&format!("FILE {file}: {e}")));
            let rec: Value = match serde_json::from_str(&line) {
                Ok(v) => v,
                Err(e) => {
                    eprintln!("{file}:{}: {e}", lineno + 1);
                    continue;
                }
            };
            let id = rec["id"].as_str().unwrap_or("").to_string();
            // A label stored in the record (the bundled sample) wins over the labeller's.
            let stored = rec["label"].as_str().map(|l| Label {
                label: l.to_string(),
                onset: rec["label_onset"].as_u64(),
                period: rec["label_period"].as_u64(),
            });
            let label = stored.as_ref().or_else(|| labels.get(&id));
            let name = label.map_or("normal".to_string(), |l| l.label.clone());
            guard.reset();
            let (n, halt, first_warn) = run(&mut guard, &rec, mode);
            let t = tallies.entry(name.clone()).or_default();
            t.streams += 1;
            t.tokens += n;
            if let Some(w) = first_warn.filter(|_| warn_kinds) {
                // What the warning saw: the text from its onset on, when the record has it.
                let seen = w
                    .onset_byte
                    .and_then(|b| rec["text"].as_str()?.as_bytes().get(b as usize..))
                    .map(|t| String::from_utf8_lossy(&t[..t.len().min(120)]).into_owned())
                    .unwrap_or_default();
                println!(
                    "{name:9} WARN {id} at {} kind={} period={} span={} repeats={:.2} text={seen:?}",
                    w.at,
                    w.kind.as_str(),
                    w.period,
                    w.span,
                    w.repeats
                );
            }
            if first_warn.is_some() {
                t.warned += 1;
            }
            if let Some(h) = halt {
                t.halted += 1;
                t.saved += n - 1 - h.at;
                if let Some(l) = label.filter(|l| l.label == "looping") {
                    let onset = l.onset.unwrap_or(0);
                    let late = h.at as f64 - onset as f64;
                    t.latencies_tokens.push(late);
                    if let Some(p) = l.period.filter(|&p| p > 0) {
                        t.latencies.push(late / p as f64);
                    }
                    t.after_onset += n - onset;
                }
                if verbose || name == "normal" {
                    println!(
                        "{name:9} HALT {id} at {}/{n} kind={} period={} repeats={:.1} onset={} conf={:.2} text={:?}",
                        h.at,
                        h.kind.as_str(),
                        h.period,
                        h.repeats,
                        h.onset,
                        h.confidence,
                        String::from_utf8_lossy(guard.repeated_text()).chars().take(80).collect::<String>()
                    );
                }
            } else if let Some(l) = label.filter(|l| l.label == "looping") {
                t.after_onset += n - l.onset.unwrap_or(0);
                println!(
                    "{name:9} MISS {id} period={:?} onset={:?} n={n}",
                    l.period, l.onset
                );
            } else if name == "fuzzy" {
                println!("{name:9} MISS {id} n={n}");
            }
        }
    }
    println!();
    println!(
        "{:10} {:>7} {:>8} {:>8} {:>12} {:>10} {:>12} {:>10}",
        "label",
        "streams",
        "halted",
        "warned",
        "latency(p50)",
        "in tokens",
        "tokens saved",
        "waste saved"
    );
    let mut names: Vec<_> = tallies.keys().cloned().collect();
    names.sort();
    for name in names {
        let t = &tallies[&name];
        let p50 = median(&t.latencies, 2);
        let p50_tokens = median(&t.latencies_tokens, 0);
        let waste = if t.after_onset > 0 {
            format!("{:.0}%", 100.0 * t.saved as f64 / t.after_onset as f64)
        } else {
            "-".into()
        };
        println!(
            "{:10} {:>7} {:>7.1}% {:>7.1}% {:>12} {:>10} {:>12} {:>10}",
            name,
            t.streams,
            100.0 * t.halted as f64 / t.streams as f64,
            100.0 * t.warned as f64 / t.streams as f64,
            p50,
            p50_tokens,
            t.saved,
            waste
        );
    }
    let total: u64 = tallies.values().map(|t| t.tokens).sum();
    println!("symbols fed: {total}");
}

/// The median (the upper one of an even count) with `digits` decimals, or "-".
fn median(values: &[f64], digits: usize) -> String {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2)
        .map_or("-".into(), |m| format!("{m:.digits$}"))
}

/// Feeds one record; returns its length in symbols, the halt verdict and the first warning.
fn run(
    guard: &mut StreamGuard,
    rec: &Value,
    mode: Mode,
) -> (u64, Option<Verdict>, Option<Verdict>) {
    let ids: Vec<u32> = rec["token_ids"]
        .as_array()
        .map(|a| a.iter().map(|v| v.as_u64().unwrap_or(0) as u32).collect())
        .unwrap_or_default();
    // Exact piece bytes when the record has them (a piece may split a UTF-8 character).
    let pieces: Vec<Vec<u8>> = match rec["pieces_hex"].as_array() {
        Some(hex) => hex
            .iter()
            .map(|v| unhex(v.as_str().unwrap_or("")))
            .collect(),
        None => rec["pieces"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|v| v.as_str().unwrap_or("").as_bytes().to_vec())
                    .collect()
            })
            .unwrap_or_default(),
    };
    let mut halt = None;
    let mut warn: Option<Verdict> = None;
    if ids.is_empty() || mode == Mode::Text && pieces.is_empty() {
        let text = rec["text"].as_str().unwrap_or("");
        // Text-only records arrive in small chunks, as from a server's event stream.
        for chunk in text.as_bytes().chunks(16) {
            let v = guard.push_text(chunk);
            if v.action == Action::Warn && warn.is_none() {
                warn = Some(v);
            }
            if v.action == Action::Halt {
                halt = Some(v);
                break;
            }
        }
        if halt.is_none() {
            let v = guard.finish_text();
            if v.action == Action::Halt {
                halt = Some(v);
            }
        }
        let n = guard.stats().symbols.max(1);
        // For text the "length" is in words; the labeler counts whitespace words the same way.
        let words = text.split_whitespace().count() as u64;
        return (words.max(n), halt, warn.or(halt));
    }
    for (i, &id) in ids.iter().enumerate() {
        let piece = pieces.get(i).map(|p| p.as_slice());
        let v = match mode {
            Mode::Pieces => guard.push_token(id, piece),
            Mode::Ids => guard.push_token(id, None),
            Mode::Text => guard.push_text(piece.unwrap_or_default()),
        };
        if v.action == Action::Warn && warn.is_none() {
            warn = Some(v);
        }
        if v.action == Action::Halt {
            let mut v = v;
            if mode == Mode::Text {
                // Report in tokens: the token whose piece completed the halting word.
                v.at = i as u64;
            }
            halt = Some(v);
            break;
        }
    }
    (ids.len() as u64, halt, warn.or(halt))
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .filter_map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok())
        .collect()
}

fn load_labels(saved: Option<&str>, files: &[String]) -> HashMap<String, Label> {
    let mut out = HashMap::new();
    let text = match saved {
        Some("") => return out,
        Some(path) => {
            std::fs::read_to_string(path).unwrap_or_else(|e| die(&format!("--labels {path}: {e}")))
        }
        None => {
            let labeler = ["../shared/tools/label.py", "../../shared/tools/label.py"]
                .into_iter()
                .find(|p| std::path::Path::new(p).exists());
            let Some(labeler) = labeler else {
                eprintln!("no label.py found: every record counts as normal");
                return out;
            };
            let o = Command::new("python3")
                .arg(labeler)
                .args(files)
                .output()
                .unwrap_or_else(|e| die(&format!("python3 {labeler}: {e}")));
            String::from_utf8_lossy(&o.stdout).into_owned()
        }
    };
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| die(&format!("labels: {e} in {line:.80}")));
        out.insert(
            v["id"].as_str().unwrap_or("").to_string(),
            Label {
                label: v["label"].as_str().unwrap_or("").to_string(),
                onset: v["onset"].as_u64(),
                period: v["period"].as_u64(),
            },
        );
    }
    out
}

/// Bad arguments or an unreadable file: say which, and exit 2.
fn die(msg: &str) -> ! {
    eprintln!("quality: {msg}");
    std::process::exit(2)
}
