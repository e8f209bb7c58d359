//! A streamed completion assembled into the one JSON body a non-streaming request expects:
//! the proxy asks the server to stream so that it can cut a loop, and answers as the server
//! would have.

use serde_json::{json, Map, Value};

use crate::choices::Endpoint;

#[derive(Default)]
struct Part {
    role: Option<String>,
    content: String,
    has_content: bool,
    reasoning: String,
    /// Tool calls by their index: id, type, name, arguments.
    calls: Vec<(Value, Value, String, String)>,
    finish_reason: Value,
    loopguard: Option<Value>,
}

/// The chunks of one response, gathered.
pub struct Assembler {
    endpoint: Endpoint,
    head: Map<String, Value>,
    parts: Vec<Part>,
    usage: Value,
}

impl Assembler {
    pub fn new(endpoint: Endpoint) -> Assembler {
        Assembler {
            endpoint,
            head: Map::new(),
            parts: Vec::new(),
            usage: Value::Null,
        }
    }

    fn part(&mut self, index: u64) -> &mut Part {
        let i = index.min(127) as usize;
        while self.parts.len() <= i {
            self.parts.push(Part::default());
        }
        &mut self.parts[i]
    }

    /// Adds one chunk (the JSON of an event, or a closing chunk the proxy made).
    pub fn add(&mut self, chunk: &Value) {
        for key in ["id", "created", "model", "system_fingerprint"] {
            if let Some(v) = chunk.get(key) {
                self.head.insert(key.to_string(), v.clone());
            }
        }
        if !chunk["usage"].is_null() {
            self.usage = chunk["usage"].clone();
        }
        let lg = chunk.get("loopguard").cloned();
        let Some(list) = chunk["choices"].as_array() else {
            return;
        };
        let endpoint = self.endpoint;
        for c in list {
            let p = self.part(c["index"].as_u64().unwrap_or(0));
            if !c["finish_reason"].is_null() {
                p.finish_reason = c["finish_reason"].clone();
            }
            if lg.is_some() {
                p.loopguard = lg.clone();
            }
            if endpoint == Endpoint::Completions {
                if let Some(t) = c["text"].as_str() {
                    p.content.push_str(t);
                }
                continue;
            }
            let d = &c["delta"];
            if let Some(r) = d["role"].as_str() {
                p.role = Some(r.to_string());
            }
            if let Some(t) = d["content"].as_str() {
                p.content.push_str(t);
                p.has_content = true;
            }
            for key in ["reasoning_content", "reasoning"] {
                if let Some(t) = d[key].as_str() {
                    p.reasoning.push_str(t);
                }
            }
            for call in d["tool_calls"].as_array().into_iter().flatten() {
                let i = call["index"].as_u64().unwrap_or(0).min(127) as usize;
                while p.calls.len() <= i {
                    p.calls
                        .push((Value::Null, json!("function"), String::new(), String::new()));
                }
                let slot = &mut p.calls[i];
                if !call["id"].is_null() {
                    slot.0 = call["id"].clone();
                }
                if !call["type"].is_null() {
                    slot.1 = call["type"].clone();
                }
                if let Some(n) = call["function"]["name"].as_str() {
                    slot.2.push_str(n);
                }
                if let Some(a) = call["function"]["arguments"].as_str() {
                    slot.3.push_str(a);
                }
            }
        }
    }

    /// The response body.
    pub fn finish(self) -> Value {
        let mut o = self.head;
        let chat = self.endpoint == Endpoint::Chat;
        o.insert(
            "object".into(),
            json!(if chat {
                "chat.completion"
            } else {
                "text_completion"
            }),
        );
        let mut halts = Vec::new();
        let choices: Vec<Value> = self
            .parts
            .into_iter()
            .enumerate()
            .map(|(i, p)| {
                if let Some(lg) = &p.loopguard {
                    let mut lg = lg.clone();
                    lg["choice"] = json!(i);
                    halts.push(lg);
                }
                if !chat {
                    return json!({"index": i, "text": p.content, "logprobs": null,
                                  "finish_reason": p.finish_reason});
                }
                let mut m = json!({"role": p.role.as_deref().unwrap_or("assistant"),
                                   "content": if p.has_content || p.calls.is_empty() {
                                       json!(p.content) } else { Value::Null }});
                if !p.reasoning.is_empty() {
                    m["reasoning_content"] = json!(p.reasoning);
                }
                if !p.calls.is_empty() {
                    m["tool_calls"] = p
                        .calls
                        .into_iter()
                        .map(|(id, ty, name, args)| {
                            json!({"id": id, "type": ty,
                                   "function": {"name": name, "arguments": args}})
                        })
                        .collect();
                }
                json!({"index": i, "message": m, "logprobs": null,
                       "finish_reason": p.finish_reason})
            })
            .collect();
        o.insert("choices".into(), Value::Array(choices));
        o.insert("usage".into(), self.usage);
        match halts.len() {
            0 => {}
            1 => {
                o.insert("loopguard".into(), halts.pop().expect("one"));
            }
            _ => {
                o.insert("loopguard".into(), Value::Array(halts));
            }
        }
        Value::Object(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_chunks_become_one_message() {
        let mut a = Assembler::new(Endpoint::Chat);
        a.add(&json!({"id": "r", "created": 5, "model": "m",
                      "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hel"}}]}));
        a.add(
            &json!({"id": "r", "choices": [{"index": 0, "delta": {"content": "lo"},
                                              "finish_reason": "stop"}]}),
        );
        a.add(&json!({"id": "r", "choices": [], "usage": {"completion_tokens": 2}}));
        let body = a.finish();
        assert_eq!(body["object"], "chat.completion");
        assert_eq!(body["choices"][0]["message"]["content"], "Hello");
        assert_eq!(body["choices"][0]["finish_reason"], "stop");
        assert_eq!(body["usage"]["completion_tokens"], 2);
        assert!(body.get("loopguard").is_none());
    }

    #[test]
    fn tool_call_deltas_are_joined() {
        let mut a = Assembler::new(Endpoint::Chat);
        a.add(&json!({"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "id": "call_1", "type": "function",
             "function": {"name": "bash", "arguments": "{\"com"}}]}}]}));
        a.add(&json!({"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": "mand\": \"ls\"}"}}]}, "finish_reason": "tool_calls"}]}));
        let body = a.finish();
        let m = &body["choices"][0]["message"];
        assert!(m["content"].is_null());
        assert_eq!(
            m["tool_calls"][0]["function"]["arguments"],
            "{\"command\": \"ls\"}"
        );
        assert_eq!(m["tool_calls"][0]["id"], "call_1");
    }
}
