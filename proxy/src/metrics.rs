//! Counters served at `/metrics` in the Prometheus text format.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

#[derive(Default)]
pub struct Metrics {
    pub requests: AtomicU64,
    pub guarded: AtomicU64,
    pub passed_through: AtomicU64,
    pub upstream_errors: AtomicU64,
    pub rejected: AtomicU64,
    pub tokens_saved: AtomicU64,
    pub guard_nanos: AtomicU64,
    pub chunks: AtomicU64,
    halts: Mutex<BTreeMap<String, u64>>,
    agent: Mutex<BTreeMap<String, u64>>,
}

impl Metrics {
    pub fn halt(&self, kind: &str) {
        *self
            .halts
            .lock()
            .expect("metrics")
            .entry(kind.to_string())
            .or_default() += 1;
    }

    pub fn agent(&self, action: &str) {
        *self
            .agent
            .lock()
            .expect("metrics")
            .entry(action.to_string())
            .or_default() += 1;
    }

    /// The text a Prometheus scrape reads.
    pub fn render(&self, conversations: usize) -> String {
        let mut s = String::new();
        let mut counter = |name: &str, help: &str, v: u64| {
            let _ = writeln!(s, "# HELP {name} {help}\n# TYPE {name} counter\n{name} {v}");
        };
        counter(
            "loopguard_requests_total",
            "Requests received.",
            self.requests.load(Relaxed),
        );
        counter(
            "loopguard_guarded_requests_total",
            "Completion requests whose responses were guarded.",
            self.guarded.load(Relaxed),
        );
        counter(
            "loopguard_passed_through_total",
            "Requests forwarded unguarded (other endpoints, opted out, not JSON).",
            self.passed_through.load(Relaxed),
        );
        counter(
            "loopguard_upstream_errors_total",
            "Requests the upstream could not answer.",
            self.upstream_errors.load(Relaxed),
        );
        counter(
            "loopguard_rejected_total",
            "Requests refused by the proxy's limits (body size, connections).",
            self.rejected.load(Relaxed),
        );
        counter(
            "loopguard_tokens_saved_total",
            "Of the max_tokens of halted choices, what was left when they were cut.",
            self.tokens_saved.load(Relaxed),
        );
        counter(
            "loopguard_chunks_total",
            "Streamed choice chunks read through the stream guards.",
            self.chunks.load(Relaxed),
        );
        let _ = writeln!(
            s,
            "# HELP loopguard_guard_seconds_total Time spent in the guards.\n\
             # TYPE loopguard_guard_seconds_total counter\n\
             loopguard_guard_seconds_total {:.6}",
            self.guard_nanos.load(Relaxed) as f64 / 1e9
        );
        let _ = writeln!(
            s,
            "# HELP loopguard_halts_total Choices halted, by loop kind.\n\
             # TYPE loopguard_halts_total counter"
        );
        for (k, v) in self.halts.lock().expect("metrics").iter() {
            let _ = writeln!(s, "loopguard_halts_total{{kind=\"{k}\"}} {v}");
        }
        let _ = writeln!(
            s,
            "# HELP loopguard_agent_verdicts_total Agent requests answered, by action.\n\
             # TYPE loopguard_agent_verdicts_total counter"
        );
        for (k, v) in self.agent.lock().expect("metrics").iter() {
            let _ = writeln!(s, "loopguard_agent_verdicts_total{{action=\"{k}\"}} {v}");
        }
        let _ = writeln!(
            s,
            "# HELP loopguard_conversations Agent conversations held.\n\
             # TYPE loopguard_conversations gauge\nloopguard_conversations {conversations}"
        );
        s
    }
}
