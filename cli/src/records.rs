//! One JSON Lines record fed to a guard exactly as it would be live, and what the guard said.
//!
//! A record is recognised by its fields: `token_ids` (with `pieces` or `pieces_hex`), `text`,
//! `events` (an agent trace) or `messages` (an OpenAI-style chat transcript).

use loopguard::{Action, AgentGuard, AgentVerdict, StreamGuard, Verbosity, Verdict};
use serde_json::Value;

use crate::settings::Configs;

/// What a record holds, which decides its guard and the unit of its indexes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `token_ids`: indexes are token positions.
    Tokens,
    /// `text`: indexes are byte offsets; words are the unit saved.
    Text,
    /// `events`: indexes are positions in `events`.
    Events,
    /// `messages`: indexes are positions in `messages`.
    Messages,
}

impl Shape {
    pub fn as_str(self) -> &'static str {
        match self {
            Shape::Tokens => "tokens",
            Shape::Text => "text",
            Shape::Events => "events",
            Shape::Messages => "messages",
        }
    }

    /// What a record of this shape is, in the plural.
    pub fn noun(self) -> &'static str {
        match self {
            Shape::Tokens => "token streams",
            Shape::Text => "texts",
            Shape::Events => "agent traces",
            Shape::Messages => "chat transcripts",
        }
    }

    /// What `saved` counts.
    pub fn unit(self) -> &'static str {
        match self {
            Shape::Tokens => "tokens",
            Shape::Text => "words",
            Shape::Events | Shape::Messages => "events",
        }
    }
}

/// The guard's answer over one record.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub id: String,
    pub shape: Shape,
    /// Tokens, bytes of text, events or messages.
    pub length: u64,
    /// The length in the unit of `saved` (words for text).
    pub total: u64,
    /// The strongest action reached.
    pub verdict: Action,
    pub first_warn_at: Option<u64>,
    /// Agent records: the first blocked call.
    pub block_at: Option<u64>,
    pub halt_at: Option<u64>,
    /// The evidence of the strongest action, where it was first reached.
    pub kind: Option<&'static str>,
    pub period: Option<u32>,
    pub repeats: Option<f64>,
    pub onset: Option<u64>,
    /// Tokens, words or events after the halt that would not have been generated.
    pub saved: u64,
    /// The repeated text (streams) or the looping call or message (agents).
    pub evidence: Option<String>,
    /// The guard's own one-line description of that verdict.
    pub summary: Option<String>,
}

impl Outcome {
    fn new(id: String, shape: Shape, length: u64) -> Outcome {
        Outcome {
            id,
            shape,
            length,
            total: length,
            verdict: Action::Continue,
            first_warn_at: None,
            block_at: None,
            halt_at: None,
            kind: None,
            period: None,
            repeats: None,
            onset: None,
            saved: 0,
            evidence: None,
            summary: None,
        }
    }

    /// Records that the guard answered `action` at index `at`; `true` when it is the strongest
    /// answer so far, whose evidence the caller then fills in.
    fn note(&mut self, action: Action, at: u64) -> bool {
        if action >= Action::Warn && self.first_warn_at.is_none() {
            self.first_warn_at = Some(at);
        }
        if action == Action::Block && self.block_at.is_none() {
            self.block_at = Some(at);
        }
        if action == Action::Halt && self.halt_at.is_none() {
            self.halt_at = Some(at);
        }
        if action > self.verdict {
            self.verdict = action;
            return true;
        }
        false
    }

    fn stream_evidence(&mut self, v: &Verdict, onset: Option<u64>, guard: &StreamGuard) {
        self.kind = Some(v.kind.as_str());
        self.period = Some(v.period);
        self.repeats = Some(f64::from(v.repeats));
        self.onset = onset;
        let text = guard.repeated_text();
        self.evidence = (!text.is_empty()).then(|| String::from_utf8_lossy(text).into_owned());
        let mut s = String::new();
        guard.describe(Verbosity::Summary, &mut s).ok();
        self.summary = Some(s);
    }
}

/// The guards one scan reuses from record to record.
pub struct Scanner<'c> {
    configs: &'c Configs,
    stream: StreamGuard,
}

impl<'c> Scanner<'c> {
    pub fn new(configs: &'c Configs) -> Scanner<'c> {
        Scanner {
            configs,
            stream: StreamGuard::new(&configs.stream),
        }
    }

    /// Feeds one record; `fallback_id` names it when it has no `id`.
    pub fn scan(&mut self, record: &Value, fallback_id: String) -> Result<Outcome, String> {
        let Value::Object(fields) = record else {
            return Err("a record must be a JSON object".into());
        };
        let id = match fields.get("id") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => fallback_id,
        };
        if let Some(ids) = fields.get("token_ids") {
            self.tokens(id, ids, record)
        } else if let Some(text) = fields.get("text") {
            let text = text.as_str().ok_or("`text` must be a string")?;
            Ok(self.text(id, text))
        } else if let Some(events) = fields.get("events") {
            let events = events.as_array().ok_or("`events` must be a list")?;
            self.events(id, events)
        } else if let Some(messages) = fields.get("messages") {
            let messages = messages.as_array().ok_or("`messages` must be a list")?;
            self.messages(id, messages)
        } else {
            Err("no `token_ids`, `text`, `events` or `messages` field".into())
        }
    }

    fn tokens(&mut self, id: String, ids: &Value, record: &Value) -> Result<Outcome, String> {
        let ids = ids.as_array().ok_or("`token_ids` must be a list")?;
        let pieces = pieces(record)?;
        let guard = &mut self.stream;
        guard.reset();
        let mut out = Outcome::new(id, Shape::Tokens, ids.len() as u64);
        for (i, id) in ids.iter().enumerate() {
            let id = id
                .as_u64()
                .and_then(|v| u32::try_from(v).ok())
                .ok_or_else(|| {
                    format!("token_ids[{i}]: {id} is not a token id (0..=4294967295)")
                })?;
            let piece = pieces.as_ref().and_then(|p| p.get(i)).map(Vec::as_slice);
            let v = guard.push_token(id, piece);
            if out.note(v.action, i as u64) {
                out.stream_evidence(&v, Some(v.onset), guard);
            }
            if v.action == Action::Halt {
                out.saved = ids.len() as u64 - 1 - i as u64;
                break;
            }
        }
        Ok(out)
    }

    /// Text arrives as a server-sent stream would carry it: a word and the space after it at a
    /// time (at most 64 bytes). Indexes are the offset of the last byte read when the guard
    /// answered.
    fn text(&mut self, id: String, text: &str) -> Outcome {
        let bytes = text.as_bytes();
        let guard = &mut self.stream;
        guard.reset();
        let mut out = Outcome::new(id, Shape::Text, bytes.len() as u64);
        out.total = words(bytes);
        let mut start = 0;
        while start < bytes.len() {
            let end = chunk_end(bytes, start);
            let v = guard.push_text(&bytes[start..end]);
            let read = guard.stats().bytes;
            start = end;
            if out.note(v.action, read.saturating_sub(1)) {
                out.stream_evidence(&v, v.onset_byte, guard);
            }
            if v.action == Action::Halt {
                let rest = &bytes[(read as usize).min(bytes.len())..];
                out.saved = words(rest);
                return out;
            }
        }
        let v = guard.finish_text();
        if out.note(v.action, bytes.len().saturating_sub(1) as u64) {
            out.stream_evidence(&v, v.onset_byte, guard);
        }
        out
    }

    /// An `events` item for a reply the agent's harness rejected: `{"format_error": ...}`, or
    /// a call with no command whose error is `format_error` (the shape of recorded
    /// mini-swe-agent runs: `{"tool": "bash", "args": {"command": null}, "error":
    /// "format_error"}`).
    fn events(&mut self, id: String, events: &[Value]) -> Result<Outcome, String> {
        let mut trace = Trace::new(self.configs, id, Shape::Events, events.len());
        for (i, e) in events.iter().enumerate() {
            let Value::Object(f) = e else {
                return Err(format!("events[{i}]: an event must be a JSON object"));
            };
            if is_rejection(f) {
                trace.reject(i);
            } else if let Some(tool) = f.get("tool") {
                let tool = tool
                    .as_str()
                    .ok_or_else(|| format!("events[{i}].tool must be a string"))?;
                let args = args_bytes(f.get("args"));
                let thought = f.get("thought").and_then(Value::as_str);
                trace.call(i, tool, &args, thought);
                let result = text_of(f.get("result"));
                let error = text_of(f.get("error"));
                if result.is_some() || error.is_some() {
                    trace.result(i, result.as_deref(), error.as_deref());
                }
            } else if let Some(role) = f.get("role") {
                let role = role
                    .as_str()
                    .ok_or_else(|| format!("events[{i}].role must be a string"))?;
                let text = text_of(f.get("text").or_else(|| f.get("content"))).unwrap_or_default();
                trace
                    .message(i, role, &text)
                    .map_err(|e| format!("events[{i}]: {e}"))?;
            } else {
                return Err(format!("events[{i}]: neither `tool` nor `role`"));
            }
            if trace.out.halt_at.is_some() {
                break;
            }
        }
        Ok(trace.finish())
    }

    fn messages(&mut self, id: String, messages: &[Value]) -> Result<Outcome, String> {
        let mut trace = Trace::new(self.configs, id, Shape::Messages, messages.len());
        for (i, m) in messages.iter().enumerate() {
            let role = m["role"]
                .as_str()
                .ok_or_else(|| format!("messages[{i}]: no `role`"))?;
            let content = text_of(m.get("content")).unwrap_or_default();
            match (role, m.get("tool_calls").and_then(Value::as_array)) {
                ("assistant", Some(calls)) if !calls.is_empty() => {
                    // The text beside the calls is their rationale, compared like a thought.
                    let mut thought = Some(content.as_str()).filter(|t| !t.trim().is_empty());
                    for (j, c) in calls.iter().enumerate() {
                        let f = &c["function"];
                        let name = f["name"].as_str().ok_or_else(|| {
                            format!("messages[{i}].tool_calls[{j}]: no function name")
                        })?;
                        trace.call(i, name, &args_bytes(f.get("arguments")), thought.take());
                    }
                }
                ("tool", _) => {
                    let failed = m["is_error"].as_bool() == Some(true);
                    let (r, e) = if failed {
                        (None, Some(content.as_str()))
                    } else {
                        (Some(content.as_str()), None)
                    };
                    trace.result(i, r, e);
                }
                _ => trace
                    .message(i, role, &content)
                    .map_err(|e| format!("messages[{i}]: {e}"))?,
            }
            if trace.out.halt_at.is_some() {
                break;
            }
        }
        Ok(trace.finish())
    }
}

/// An agent trace in progress: the guard and the map from its steps to record positions.
struct Trace {
    guard: AgentGuard,
    out: Outcome,
    /// Record position of each guard step (calls, assistant messages and user turns).
    steps: Vec<u64>,
    best: Option<AgentVerdict>,
}

impl Trace {
    fn new(configs: &Configs, id: String, shape: Shape, len: usize) -> Trace {
        Trace {
            // A fresh guard per trace: its step numbers start at zero.
            guard: AgentGuard::new(&configs.agent),
            out: Outcome::new(id, shape, len as u64),
            steps: Vec::new(),
            best: None,
        }
    }

    fn call(&mut self, at: usize, tool: &str, args: &[u8], thought: Option<&str>) {
        self.steps.push(at as u64);
        let v = self.guard.call_with_thought(tool, args, thought);
        if self.out.note(v.action, at as u64) {
            self.best = Some(v.clone());
        }
    }

    /// A reply the harness rejected: a step of its own.
    fn reject(&mut self, at: usize) {
        self.steps.push(at as u64);
        let v = self.guard.reject();
        if self.out.note(v.action, at as u64) {
            self.best = Some(v.clone());
        }
    }

    fn result(&mut self, at: usize, result: Option<&str>, error: Option<&str>) {
        let v = self
            .guard
            .result(result.map(str::as_bytes), error.map(str::as_bytes));
        if self.out.note(v.action, at as u64) {
            self.best = Some(v.clone());
        }
    }

    fn message(&mut self, at: usize, role: &str, text: &str) -> Result<(), String> {
        let v = match role {
            "assistant" => {
                self.steps.push(at as u64);
                self.guard.assistant(text)
            }
            "user" => {
                self.steps.push(at as u64);
                self.guard.user(text)
            }
            "thought" | "reasoning" => self.guard.thought(text),
            "tool" => self.guard.result(Some(text.as_bytes()), None),
            "system" | "developer" => return Ok(()),
            other => {
                return Err(format!(
                    "unknown role {other:?} (user, assistant, tool, thought, system)"
                ))
            }
        };
        if self.out.note(v.action, at as u64) {
            self.best = Some(v.clone());
        }
        Ok(())
    }

    fn finish(mut self) -> Outcome {
        if let Some(v) = self.best.take() {
            let out = &mut self.out;
            out.kind = Some(v.kind.as_str());
            out.period = Some(v.period);
            out.repeats = Some(f64::from(v.count));
            out.onset = v
                .evidence
                .first()
                .and_then(|&s| self.steps.get(s as usize).copied());
            out.evidence = Some(v.subject.clone()).filter(|s| !s.is_empty());
            out.summary = Some(format!("{}: {}", v.kind.as_str(), v.reason.as_str()));
        }
        if let Some(at) = self.out.halt_at {
            self.out.saved = self.out.length - 1 - at;
        }
        self.out
    }
}

fn words(text: &[u8]) -> u64 {
    text.split(u8::is_ascii_whitespace)
        .filter(|w| !w.is_empty())
        .count() as u64
}

/// Where the next server-sent chunk of `text` ends: after a word and the white space that
/// follows it, at most 64 bytes on.
fn chunk_end(text: &[u8], start: usize) -> usize {
    let limit = (start + 64).min(text.len());
    let mut i = start;
    while i < limit && !text[i].is_ascii_whitespace() {
        i += 1;
    }
    while i < limit && text[i].is_ascii_whitespace() {
        i += 1;
    }
    i.max(start + 1)
}

/// The text pieces of a token record: `pieces` (strings) or `pieces_hex` (raw bytes).
fn pieces(record: &Value) -> Result<Option<Vec<Vec<u8>>>, String> {
    let (field, list) = match (record.get("pieces_hex"), record.get("pieces")) {
        (Some(Value::Null) | None, Some(Value::Null) | None) => return Ok(None),
        (Some(Value::Null) | None, Some(p)) => ("pieces", p),
        (Some(p), _) => ("pieces_hex", p),
    };
    let list = list
        .as_array()
        .ok_or_else(|| format!("`{field}` must be a list of strings, found {}", kind(list)))?;
    let ids = record["token_ids"].as_array().map_or(0, Vec::len);
    if list.len() != ids {
        return Err(format!(
            "`{field}` is {} long and `token_ids` {ids}: one piece per token",
            list.len()
        ));
    }
    list.iter()
        .enumerate()
        .map(|(i, p)| {
            let s = p
                .as_str()
                .ok_or_else(|| format!("{field}[{i}]: expected a string, found {}", kind(p)))?;
            if field == "pieces" {
                return Ok(s.as_bytes().to_vec());
            }
            hex(s).ok_or_else(|| format!("{field}[{i}]: {s:?} is not hexadecimal"))
        })
        .collect::<Result<_, _>>()
        .map(Some)
}

/// What a JSON value is, for messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn hex(h: &str) -> Option<Vec<u8>> {
    if h.len() % 2 != 0 {
        return None;
    }
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(h.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Tool arguments as the guard takes them: a string as it is (OpenAI sends JSON text), any
/// other value as its JSON.
fn args_bytes(args: Option<&Value>) -> Vec<u8> {
    match args {
        None | Some(Value::Null) => b"{}".to_vec(),
        Some(Value::String(s)) => s.as_bytes().to_vec(),
        Some(v) => serde_json::to_vec(v).unwrap_or_default(),
    }
}

/// The event records a reply the harness rejected (see `Scanner::events`).
fn is_rejection(f: &serde_json::Map<String, Value>) -> bool {
    if f.contains_key("format_error") {
        return true;
    }
    let no_command = match f.get("args") {
        None | Some(Value::Null) => true,
        Some(Value::Object(a)) => a.get("command").is_some_and(Value::is_null),
        _ => false,
    };
    f.get("error").and_then(Value::as_str) == Some("format_error") && no_command
}

/// Message content as text: a string, the text parts of a list, or any other value's JSON;
/// `None` for null or absent.
fn text_of(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) if parts.iter().all(|p| p.get("text").is_some()) => Some(
            parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        other => Some(other.to_string()),
    }
}
