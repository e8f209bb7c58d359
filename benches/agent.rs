//! Speed of the agent guard.
//!
//! ```text
//! cargo bench --bench agent [-- --rounds N]
//! ```
//!
//! * A call event with 1 KB of JSON arguments (a realistic `write_file`: path, mode and 1 KB of
//!   content, keys in varied order), one in four a repeat. Target: ≤ 2 µs per call event.
//! * The same calls each followed by its result, in a session that mixes new calls, repeats,
//!   errors and messages so every detector runs.
//! * The same call through the C ABI (`lg_agent_call` and `lg_agent_result`).
//! * The real trajectories bundled in `tests/data/agent-sample.jsonl`, per event.
//!
//! Each figure is the median of several rounds. The benchmark checks its own results: the
//! session it times must warn, block and halt where expected.

use loopguard::ffi::{
    lg_action, lg_agent, lg_agent_call, lg_agent_config, lg_agent_config_init, lg_agent_free,
    lg_agent_new, lg_agent_result, lg_status,
};
use loopguard::{Action, AgentConfig, AgentGuard};
use serde_json::Value;

mod common;
use common::time;

/// `n` call events: 1 KB arguments, one in four a repeat of an earlier call, one in eight
/// failing, one in sixteen preceded by a message.
/// A call to replay: tool, arguments, result, error, and a message said before it.
type Event = (String, String, String, Option<String>, Option<String>);
/// A recorded call: tool, arguments, result, error.
type Recorded = (String, String, Option<String>, Option<String>);

fn session(n: usize) -> Vec<Event> {
    let body: String = (0..1000)
        .map(|i| (b'a' + (i * 7 % 26) as u8) as char)
        .collect();
    (0..n)
        .map(|i| {
            let id = if i % 4 == 3 { i - 3 } else { i };
            let args = if i % 2 == 0 {
                format!(r#"{{"path":"src/mod{id}.rs","mode":"overwrite","content":"{body}"}}"#)
            } else {
                format!(r#"{{"content":"{body}","mode":"overwrite","path":"src/mod{id}.rs"}}"#)
            };
            let error =
                (i % 8 == 5).then(|| format!("EACCES: permission denied, open 'src/mod{id}.rs'"));
            let msg = (i % 16 == 0).then(|| format!("Now writing module {i} with the new API."));
            (
                "write_file".to_string(),
                args,
                format!("wrote {} bytes", 1000 + i),
                error,
                msg,
            )
        })
        .collect()
}

fn main() {
    let mut rounds = 15;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--rounds" {
            rounds = args.next().and_then(|r| r.parse().ok()).unwrap_or(rounds);
        }
    }
    let config = AgentConfig::default();
    let events = session(2000);
    let arg_bytes = events.iter().map(|e| e.1.len()).sum::<usize>() / events.len();

    // Self-check: the same call and result five times warns, blocks, then halts the session.
    let mut g = AgentGuard::new(&config);
    let actions: Vec<Action> = (0..7)
        .map(|_| {
            let a = g.call("write_file", events[0].1.as_bytes()).action;
            g.result(Some(b"wrote"), None);
            a
        })
        .collect();
    assert_eq!(actions[2], Action::Warn);
    assert_eq!(actions[3], Action::Block);
    assert_eq!(actions[6], Action::Halt);

    // The call event alone: what an agent pays before running a tool.
    let call_only = time(rounds, || {
        let mut g = AgentGuard::new(&config);
        let mut n = 0u64;
        for (tool, a, _, _, _) in &events {
            n += g.call(tool, a.as_bytes()).count as u64;
        }
        n
    }) / events.len() as f64;

    let mut detections = 0u64;
    let rust = time(rounds, || {
        let mut g = AgentGuard::new(&config);
        for (tool, a, out, err, msg) in &events {
            if let Some(m) = msg {
                g.assistant(m);
            }
            g.call(tool, a.as_bytes());
            g.result(Some(out.as_bytes()), err.as_deref().map(str::as_bytes));
        }
        detections = g.stats().detections;
        detections
    }) / events.len() as f64;
    assert!(detections > 0, "the timed session must trip some rules");

    let c = time(rounds, || unsafe {
        let mut cfg: lg_agent_config = std::mem::zeroed();
        lg_agent_config_init(&mut cfg);
        let mut h: *mut lg_agent = std::ptr::null_mut();
        assert_eq!(lg_agent_new(&cfg, &mut h), lg_status::LG_OK);
        let mut n = 0u64;
        for (tool, a, out, err, _) in &events {
            let mut act = lg_action::LG_ACTION_CONTINUE;
            lg_agent_call(h, tool.as_ptr(), tool.len(), a.as_ptr(), a.len(), &mut act);
            n += act as u64;
            let (ep, el) = err
                .as_deref()
                .map_or((std::ptr::null(), 0), |e| (e.as_ptr(), e.len()));
            lg_agent_result(h, out.as_ptr(), out.len(), ep, el, &mut act);
        }
        lg_agent_free(h);
        n
    }) / events.len() as f64;

    // Real trajectories, per event (call + result).
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/agent-sample.jsonl");
    let runs: Vec<Vec<Recorded>> = std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["events"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| {
                    (
                        e["tool"].as_str().unwrap_or("").to_string(),
                        serde_json::to_string(&e["args"]).unwrap(),
                        e["result"].as_str().map(String::from),
                        e["error"].as_str().map(String::from),
                    )
                })
                .collect()
        })
        .collect();
    let n_events: usize = runs.iter().map(Vec::len).sum();
    let real = time(rounds, || {
        let mut n = 0;
        for run in &runs {
            let mut g = AgentGuard::new(&config);
            for (t, a, r, e) in run {
                g.call(t, a.as_bytes());
                g.result(
                    r.as_deref().map(str::as_bytes),
                    e.as_deref().map(str::as_bytes),
                );
            }
            n += g.stats().detections;
        }
        n
    }) / n_events as f64;

    println!("agent guard ({rounds} rounds, median):");
    println!(
        "  call event, {arg_bytes}-byte arguments: {:.0} ns (target ≤ 2000) {}",
        call_only * 1e9,
        if call_only <= 2e-6 { "met" } else { "NOT MET" }
    );
    println!(
        "  call + result (+ a message every 16 calls): {:.0} ns per call",
        rust * 1e9
    );
    println!(
        "  call + result through the C ABI: {:.0} ns per call ({:.2}x)",
        c * 1e9,
        c / rust
    );
    println!(
        "  real ReAct trajectories ({n_events} events): {:.0} ns per event",
        real * 1e9
    );
}
