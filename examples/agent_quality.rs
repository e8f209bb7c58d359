//! Agent-guard quality on real ReAct trajectories (FEVER and WebShop, text-davinci-002):
//! warns on stuck runs, silence on the others (hand labels), and the share of all runs the
//! guard warns on, blocks and halts.
//!
//!     cargo run --release --example agent_quality -- [CORPUS_DIR] [--preset NAME] [--list]
//!
//! CORPUS_DIR defaults to `../shared/corpus`; it holds `fever_react.jsonl`,
//! `webshop_react.jsonl` and `agent_labels_dev.jsonl`. `--list` prints every run the guard
//! halts or blocks, with its recovery text, for reading.

use std::collections::HashMap;

use loopguard::{Action, AgentConfig, AgentGuard, AgentPreset, AgentVerdict, Verbosity};
use serde_json::Value;

/// Feeds one trajectory; returns the most severe action per event.
fn run(config: &AgentConfig, events: &[Value]) -> (Vec<Action>, Vec<AgentVerdict>) {
    let mut g = AgentGuard::new(config);
    let mut actions = Vec::new();
    let mut verdicts = Vec::new();
    for e in events {
        let tool = e["tool"].as_str().unwrap_or("");
        let args = serde_json::to_string(&e["args"]).unwrap();
        let mut worst = g
            .call_with_thought(tool, args.as_bytes(), e["thought"].as_str())
            .clone();
        let (result, error) = (e["result"].as_str(), e["error"].as_str());
        if result.is_some() || error.is_some() {
            let v = g.result(result.map(str::as_bytes), error.map(str::as_bytes));
            if v.action > worst.action {
                worst = v.clone();
            }
        }
        actions.push(worst.action);
        verdicts.push(worst);
    }
    (actions, verdicts)
}

fn main() {
    let mut dir = "../shared/corpus".to_string();
    let mut preset = AgentPreset::Default;
    let mut list = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--preset" => {
                let name = args.next().expect("--preset NAME");
                preset = AgentPreset::from_name(&name).expect("a preset name");
            }
            "--list" => list = true,
            _ => dir = a,
        }
    }
    let config = AgentConfig::preset(preset);
    let mut runs: HashMap<String, Value> = HashMap::new();
    let mut order = Vec::new();
    for file in ["fever_react.jsonl", "webshop_react.jsonl"] {
        let path = format!("{dir}/{file}");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        for line in text.lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            let id = v["id"].as_str().unwrap().to_string();
            order.push(id.clone());
            runs.insert(id, v);
        }
    }
    println!("preset: {}", preset.name());

    // Every run: how many the guard warns on, blocks and halts.
    let mut totals: HashMap<(&str, Action), usize> = HashMap::new();
    let mut per_file: HashMap<&str, usize> = HashMap::new();
    for id in &order {
        let file = if id.starts_with("fever") {
            "fever"
        } else {
            "webshop"
        };
        *per_file.entry(file).or_default() += 1;
        let (actions, verdicts) = run(&config, runs[id]["events"].as_array().unwrap());
        let worst = actions.iter().copied().max().unwrap_or(Action::Continue);
        for a in [Action::Warn, Action::Block, Action::Halt] {
            if worst >= a {
                *totals.entry((file, a)).or_default() += 1;
            }
        }
        if list && worst >= Action::Block {
            let at = actions.iter().position(|&a| a == worst).unwrap();
            let v = &verdicts[at];
            println!(
                "{id}: {} at event {at} ({}, {})",
                worst.as_str(),
                v.kind.as_str(),
                v.subject
            );
        }
    }
    for file in ["fever", "webshop"] {
        let n = per_file[file];
        let pct = |a| 100.0 * *totals.get(&(file, a)).unwrap_or(&0) as f64 / n as f64;
        println!(
            "{file}: {n} runs; warned {:.1}%, blocked {:.1}%, halted {:.1}%",
            pct(Action::Warn),
            pct(Action::Block),
            pct(Action::Halt)
        );
    }

    // The hand-labelled runs.
    let labels = std::fs::read_to_string(format!("{dir}/agent_labels_dev.jsonl")).unwrap();
    let (mut stuck, mut stuck_warned, mut ok, mut ok_warned) = (0, 0, 0, 0);
    let mut delays = Vec::new();
    let mut misses = Vec::new();
    let mut false_alarms = Vec::new();
    for line in labels.lines() {
        let l: Value = serde_json::from_str(line).unwrap();
        let id = l["id"].as_str().unwrap();
        let (actions, verdicts) = run(&config, runs[id]["events"].as_array().unwrap());
        let first = actions.iter().position(|&a| a > Action::Continue);
        if l["stuck"].as_bool().unwrap() {
            stuck += 1;
            let want = l["should_warn_at"].as_i64().unwrap();
            match first {
                Some(at) => {
                    stuck_warned += 1;
                    delays.push(at as i64 - want);
                }
                None => misses.push(id.to_string()),
            }
        } else {
            ok += 1;
            if let Some(at) = first {
                ok_warned += 1;
                let v = &verdicts[at];
                false_alarms.push(format!("{id} at {at}: {} {}", v.kind.as_str(), v.subject));
            }
        }
    }
    delays.sort_unstable();
    let near = delays.iter().filter(|d| d.abs() <= 1).count();
    println!(
        "labelled stuck: warned {stuck_warned}/{stuck} ({:.1}%), {near} within one event of \
         should_warn_at, median offset {}",
        100.0 * stuck_warned as f64 / stuck as f64,
        delays.get(delays.len() / 2).copied().unwrap_or(0)
    );
    println!(
        "labelled not stuck: warned {ok_warned}/{ok} ({:.1}%)",
        100.0 * ok_warned as f64 / ok as f64
    );
    println!("offsets (first warning − should_warn_at): {delays:?}");
    for m in &misses {
        println!("missed: {m}");
    }
    for f in &false_alarms {
        println!("false alarm: {f}");
    }
    if list {
        // One recovery block, to read what the model would be told.
        if let Some(id) = order.iter().find(|id| {
            let (a, _) = run(&config, runs[*id]["events"].as_array().unwrap());
            a.contains(&Action::Block)
        }) {
            let mut g = AgentGuard::new(&config);
            for e in runs[id]["events"].as_array().unwrap() {
                let args = serde_json::to_string(&e["args"]).unwrap();
                let v = g.call(e["tool"].as_str().unwrap_or(""), args.as_bytes());
                if v.action == Action::Block {
                    let mut s = String::new();
                    g.describe(Verbosity::Full, &mut s).unwrap();
                    println!("\n{id}:\n{s}");
                    break;
                }
                let (r, er) = (e["result"].as_str(), e["error"].as_str());
                g.result(r.map(str::as_bytes), er.map(str::as_bytes));
            }
        }
    }
}
