//! The stream guard on a completion's choices, event by event: each choice's content,
//! reasoning and tool-call arguments are pushed into guards of their own (text path) as the
//! deltas arrive; a halt ends that choice with `finish_reason` and the verdict.

use loopguard::{Action, StreamConfig, StreamGuard, Unit, Verdict};
use serde_json::{json, Map, Value};

/// Which endpoint the stream answers: the shape of its chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    Chat,
    Completions,
}

/// The parts of a choice that are guarded apart: a loop in the reasoning is not one in the
/// answer.
const CHANNELS: [&str; 3] = ["content", "reasoning", "tool_arguments"];

/// A halt, with what the client is told.
#[derive(Clone, Debug)]
pub struct Halt {
    pub choice: u64,
    pub channel: &'static str,
    pub verdict: Verdict,
    /// Chunks of this choice received before the halt (about one token each).
    pub chunks: u64,
    /// Of the request's `max_tokens`, what was left when the choice was cut.
    pub tokens_left: Option<u64>,
}

impl Halt {
    /// The `loopguard` object added to the final chunk or body.
    pub fn to_json(&self) -> Value {
        let v = &self.verdict;
        let mut o = json!({
            "action": v.action.as_str(),
            "kind": v.kind.as_str(),
            "channel": self.channel,
            "unit": match v.unit {
                Unit::Symbol => "word",
                Unit::Byte => "byte",
                Unit::Line => "line",
            },
            "period": v.period,
            "repeats": (f64::from(v.repeats) * 100.0).round() / 100.0,
            "span": v.span,
            "onset": v.onset,
            "at": v.at,
            "confidence": (f64::from(v.confidence) * 100.0).round() / 100.0,
            "chunks": self.chunks,
        });
        if let Some(b) = v.onset_byte {
            o["onset_byte"] = json!(b);
        }
        if let Some(t) = self.tokens_left {
            o["tokens_saved"] = json!(t);
        }
        o
    }
}

/// What to do with one upstream event.
#[derive(Debug)]
pub enum Outcome {
    /// Send it on unchanged.
    Forward,
    /// Send this instead (the event without the choices already halted), or nothing.
    Replace(Option<String>),
    /// Choices halted on this event: send it on, then one closing chunk per halt; `done` when
    /// no choice is left running (the proxy then sends `[DONE]` and drops the upstream).
    Halted { halts: Vec<Halt>, done: bool },
}

struct Choice {
    guards: [Option<StreamGuard>; 3],
    halted: bool,
    chunks: u64,
    finished: bool,
}

/// The guards of one response.
pub struct ResponseGuard {
    endpoint: Endpoint,
    config: StreamConfig,
    choices: Vec<Choice>,
    /// Choices the request asked for (`n`).
    expected: u64,
    max_tokens: Option<u64>,
    /// The response's `id`, `created`, `model` and `system_fingerprint`, from its chunks.
    head: Map<String, Value>,
    finish_reason: String,
}

/// Choices held at most (`n` beyond it is not guarded past this index).
const MAX_CHOICES: u64 = 128;

impl ResponseGuard {
    pub fn new(
        endpoint: Endpoint,
        config: StreamConfig,
        request: &Value,
        finish_reason: &str,
    ) -> ResponseGuard {
        let expected = request["n"].as_u64().unwrap_or(1).clamp(1, MAX_CHOICES);
        let max_tokens = request["max_completion_tokens"]
            .as_u64()
            .or_else(|| request["max_tokens"].as_u64());
        ResponseGuard {
            endpoint,
            config,
            choices: Vec::new(),
            expected,
            max_tokens,
            head: Map::new(),
            finish_reason: finish_reason.to_string(),
        }
    }

    /// Reads one event's data (JSON, `[DONE]`, or anything else, which is forwarded).
    pub fn on_event(&mut self, data: &str) -> Outcome {
        let data = data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Outcome::Forward;
        }
        let Ok(mut chunk) = serde_json::from_str::<Value>(data) else {
            return Outcome::Forward;
        };
        for key in ["id", "created", "model", "system_fingerprint"] {
            if let Some(v) = chunk.get(key) {
                self.head.insert(key.to_string(), v.clone());
            }
        }
        let Some(list) = chunk.get("choices").and_then(Value::as_array) else {
            return Outcome::Forward;
        };
        let mut halts = Vec::new();
        let mut drop_idx = Vec::new();
        for (pos, c) in list.iter().enumerate() {
            let index = c["index"].as_u64().unwrap_or(0);
            if index >= MAX_CHOICES {
                continue;
            }
            let choice = self.choice(index);
            if choice.halted {
                drop_idx.push(pos);
                continue;
            }
            choice.chunks += 1;
            if c["finish_reason"].is_string() {
                choice.finished = true;
            }
            for (ch, text) in texts(self.endpoint, c) {
                let choice = &mut self.choices[index as usize];
                let guard = choice.guards[ch].get_or_insert_with(|| StreamGuard::new(&self.config));
                let v = guard.push_text(text.as_bytes());
                // The proxy cannot force a reasoning end marker into the upstream's generation:
                // a guard configured with one that asks for it ends the choice as a halt does.
                if v.action >= Action::EndReasoning {
                    choice.halted = true;
                    halts.push(Halt {
                        choice: index,
                        channel: CHANNELS[ch],
                        verdict: v,
                        chunks: choice.chunks,
                        tokens_left: self.max_tokens.map(|m| m.saturating_sub(choice.chunks)),
                    });
                    break;
                }
            }
        }
        if !halts.is_empty() {
            return Outcome::Halted {
                halts,
                done: self.all_done(),
            };
        }
        if drop_idx.is_empty() {
            return Outcome::Forward;
        }
        if drop_idx.len() == list.len() {
            return Outcome::Replace(None);
        }
        let list = chunk["choices"].as_array_mut().expect("choices");
        for pos in drop_idx.into_iter().rev() {
            list.remove(pos);
        }
        Outcome::Replace(Some(chunk.to_string()))
    }

    /// Every choice asked for has halted or finished.
    fn all_done(&self) -> bool {
        (0..self.expected).all(|i| {
            self.choices
                .get(i as usize)
                .is_some_and(|c| c.halted || c.finished)
        })
    }

    fn choice(&mut self, index: u64) -> &mut Choice {
        while self.choices.len() <= index as usize {
            self.choices.push(Choice {
                guards: [None, None, None],
                halted: false,
                chunks: 0,
                finished: false,
            });
        }
        &mut self.choices[index as usize]
    }

    /// The chunk that ends choice `h.choice` with the halt.
    pub fn closing_chunk(&self, h: &Halt) -> Value {
        let mut o = self.head.clone();
        let choice = match self.endpoint {
            Endpoint::Chat => {
                o.insert("object".into(), json!("chat.completion.chunk"));
                json!({"index": h.choice, "delta": {}, "finish_reason": self.finish_reason})
            }
            Endpoint::Completions => {
                o.insert("object".into(), json!("text_completion"));
                json!({"index": h.choice, "text": "", "finish_reason": self.finish_reason})
            }
        };
        o.insert("choices".into(), json!([choice]));
        o.insert("loopguard".into(), h.to_json());
        Value::Object(o)
    }
}

/// The guarded texts of one choice of a chunk: (channel, text).
fn texts(endpoint: Endpoint, c: &Value) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    match endpoint {
        Endpoint::Completions => {
            if let Some(t) = c["text"].as_str() {
                out.push((0, t));
            }
        }
        Endpoint::Chat => {
            let d = &c["delta"];
            if let Some(t) = d["content"].as_str() {
                out.push((0, t));
            }
            for key in ["reasoning_content", "reasoning"] {
                if let Some(t) = d[key].as_str() {
                    out.push((1, t));
                }
            }
            if let Some(calls) = d["tool_calls"].as_array() {
                for call in calls {
                    if let Some(t) = call["function"]["arguments"].as_str() {
                        out.push((2, t));
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use loopguard::Preset;

    fn chunk(i: u64, text: &str) -> String {
        json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [{"index": i, "delta": {"content": text}, "finish_reason": null}]})
        .to_string()
    }

    #[test]
    fn a_looping_choice_halts_with_its_verdict_and_a_normal_one_passes() {
        let config = StreamConfig::preset(Preset::Balanced);
        let req = json!({"max_tokens": 500});
        let mut g = ResponseGuard::new(Endpoint::Chat, config.clone(), &req, "repetition");
        let mut halt = None;
        for k in 0..200 {
            if let Outcome::Halted { halts, done } =
                g.on_event(&chunk(0, " the cat sat on the mat."))
            {
                assert!(done);
                halt = Some((k, halts[0].clone()));
                break;
            }
        }
        let (k, h) = halt.expect("the loop halts");
        assert!(k < 20, "halted after {k} chunks");
        let closing = g.closing_chunk(&h);
        assert_eq!(closing["choices"][0]["finish_reason"], "repetition");
        assert_eq!(closing["id"], "c1");
        assert_eq!(closing["loopguard"]["action"], "halt");
        assert_eq!(closing["loopguard"]["tokens_saved"], json!(500 - h.chunks));

        let mut g = ResponseGuard::new(Endpoint::Chat, config, &req, "repetition");
        let text = "Rust is a systems language. It gives memory safety without a collector, \
                    through ownership and borrowing, and it compiles to fast native code.";
        for w in text.split_inclusive(' ') {
            assert!(matches!(g.on_event(&chunk(0, w)), Outcome::Forward));
        }
        assert!(matches!(g.on_event("[DONE]"), Outcome::Forward));
    }

    #[test]
    fn with_two_choices_the_halted_one_is_dropped_and_the_other_goes_on() {
        let config = StreamConfig::preset(Preset::Balanced);
        let mut g = ResponseGuard::new(Endpoint::Completions, config, &json!({"n": 2}), "length");
        let both = |a: &str, b: &str| {
            json!({"id": "x", "choices": [{"index": 0, "text": a}, {"index": 1, "text": b}]})
                .to_string()
        };
        let mut halted_at = None;
        for k in 0..200 {
            match g.on_event(&both(" loop loop again,", &format!(" word{k}"))) {
                Outcome::Halted { halts, done } => {
                    assert!(!done);
                    assert_eq!(halts[0].choice, 0);
                    halted_at = Some(k);
                    break;
                }
                Outcome::Forward => {}
                o => panic!("{o:?}"),
            }
        }
        assert!(halted_at.is_some());
        match g.on_event(&both(" loop loop again,", " fresh")) {
            Outcome::Replace(Some(s)) => {
                let v: Value = serde_json::from_str(&s).unwrap();
                assert_eq!(v["choices"].as_array().unwrap().len(), 1);
                assert_eq!(v["choices"][0]["index"], 1);
            }
            o => panic!("{o:?}"),
        }
    }
}
