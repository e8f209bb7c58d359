//! The agent guard on requests. A chat request's `messages` are an agent's history: its
//! assistant `tool_calls` are calls, its `role: "tool"` messages their results. Each
//! conversation (named by a header, or by its first messages) has a guard fed only the
//! messages it has not seen; the guards are kept in a bounded map, the least recently used
//! evicted. Nothing of the messages is kept but the guard's fingerprints and one hash of the
//! history fed, which tells a continued conversation from an edited one.

use std::collections::HashMap;

use loopguard::{Action, AgentConfig, AgentGuard, AgentVerdict, Verbosity};
use serde_json::Value;
use xxhash_rust::xxh3::xxh3_64_with_seed;

struct Session {
    guard: AgentGuard,
    /// Messages fed, and the hash of them in order.
    fed: usize,
    hash: u64,
    used: u64,
}

/// The worst verdict on a request's new messages, with the recovery text for the model.
pub struct Judgement {
    pub verdict: AgentVerdict,
    pub recovery: String,
}

/// Every conversation's guard.
pub struct Conversations {
    sessions: HashMap<u64, Session>,
    capacity: usize,
    clock: u64,
}

impl Conversations {
    pub fn new(capacity: usize) -> Conversations {
        Conversations {
            sessions: HashMap::new(),
            capacity: capacity.max(1),
            clock: 0,
        }
    }

    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    /// Feeds the request's new messages to its conversation's guard (`key` from a header, or
    /// `None` to key it by its first messages). `None` when the request has no messages or
    /// nothing to say.
    pub fn judge(
        &mut self,
        config: &AgentConfig,
        key: Option<&str>,
        messages: &[Value],
    ) -> Option<Judgement> {
        if messages.is_empty() {
            return None;
        }
        let id = match key {
            Some(k) => xxh3_64_with_seed(k.as_bytes(), 1),
            None => conversation_id(messages),
        };
        self.clock += 1;
        if !self.sessions.contains_key(&id) && self.sessions.len() >= self.capacity {
            let oldest = self
                .sessions
                .iter()
                .min_by_key(|(_, s)| s.used)
                .map(|(k, _)| *k)
                .expect("a session");
            self.sessions.remove(&oldest);
        }
        let s = self.sessions.entry(id).or_insert_with(|| Session {
            guard: AgentGuard::new(config),
            fed: 0,
            hash: 0,
            used: 0,
        });
        s.used = self.clock;
        // The history seen before must be this request's prefix; otherwise start afresh.
        let prefix = history_hash(&messages[..s.fed.min(messages.len())]);
        if s.fed > messages.len() || prefix != s.hash {
            s.guard.reset();
            s.fed = 0;
            s.hash = 0;
        }
        let mut worst: Option<AgentVerdict> = None;
        for m in &messages[s.fed..] {
            for v in feed(&mut s.guard, m) {
                if worst.as_ref().map_or(true, |w| v.action > w.action) {
                    worst = Some(v);
                }
            }
        }
        s.fed = messages.len();
        s.hash = history_hash(messages);
        let verdict = worst.filter(|v| v.action > Action::Continue)?;
        let mut recovery = String::new();
        s.guard.describe(Verbosity::Full, &mut recovery).ok()?;
        Some(Judgement { verdict, recovery })
    }
}

/// A conversation named by its first two messages (the system prompt and the task).
fn conversation_id(messages: &[Value]) -> u64 {
    history_hash(&messages[..messages.len().min(2)]) ^ 0x5eed
}

fn history_hash(messages: &[Value]) -> u64 {
    messages
        .iter()
        .fold(0, |h, m| xxh3_64_with_seed(m.to_string().as_bytes(), h))
}

/// The text of a message's `content`: a string, or the text parts of an array.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// One message to the guard; the verdicts it gave.
fn feed(g: &mut AgentGuard, m: &Value) -> Vec<AgentVerdict> {
    let mut out = Vec::new();
    match m["role"].as_str().unwrap_or("") {
        "assistant" => {
            let text = text_of(&m["content"]);
            let calls = m["tool_calls"].as_array().map(Vec::as_slice).unwrap_or(&[]);
            if calls.is_empty() && !text.trim().is_empty() {
                out.push(g.assistant(&text).clone());
            }
            for c in calls {
                let name = c["function"]["name"].as_str().unwrap_or("");
                let args = c["function"]["arguments"].as_str().unwrap_or("");
                let thought = (!text.trim().is_empty()).then_some(text.as_str());
                out.push(g.call_with_thought(name, args.as_bytes(), thought).clone());
            }
        }
        "tool" | "function" => {
            let text = text_of(&m["content"]);
            out.push(g.result(Some(text.as_bytes()), None).clone());
        }
        "user" => {
            out.push(g.user(&text_of(&m["content"])).clone());
        }
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use loopguard::AgentPreset;
    use serde_json::json;

    fn history(failures: usize) -> Vec<Value> {
        let mut m = vec![
            json!({"role": "system", "content": "You are a coding agent."}),
            json!({"role": "user", "content": "Fix the failing test."}),
        ];
        for i in 0..failures {
            m.push(
                json!({"role": "assistant", "content": null, "tool_calls": [{
                "id": format!("c{i}"), "type": "function",
                "function": {"name": "bash", "arguments": "{\"command\": \"javac Main.java\"}"}}]}),
            );
            m.push(json!({"role": "tool", "tool_call_id": format!("c{i}"),
                          "content": "bash: javac: command not found"}));
        }
        m
    }

    #[test]
    fn a_repeated_failing_call_gets_the_recovery_text_once_fed_as_it_grows() {
        let config = AgentConfig::preset(AgentPreset::Default);
        let mut c = Conversations::new(4);
        assert!(c.judge(&config, None, &history(1)).is_none());
        assert!(c.judge(&config, None, &history(2)).is_none());
        let j = c
            .judge(&config, None, &history(3))
            .expect("a warning at the third");
        assert!(j.verdict.action >= Action::Warn);
        assert!(j.recovery.contains("<loop-recovery>"), "{}", j.recovery);
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn sessions_are_bounded_and_an_edited_history_starts_afresh() {
        let config = AgentConfig::preset(AgentPreset::Default);
        let mut c = Conversations::new(2);
        for k in 0..5 {
            let key = format!("agent-{k}");
            c.judge(&config, Some(&key), &history(1));
        }
        assert_eq!(c.len(), 2);
        // The same key with a different history is judged from its start.
        assert!(c.judge(&config, Some("agent-4"), &history(3)).is_some());
        let mut other = history(2);
        other[1] = json!({"role": "user", "content": "Another task."});
        assert!(c.judge(&config, Some("agent-4"), &other).is_none());
    }
}
