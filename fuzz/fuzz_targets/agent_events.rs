//! Agent sessions of any events, arguments and bytes: the guard never panics, stays within its
//! window's memory, and its recovery text stays one clean block: no NUL, no control character
//! but a line break, one closing tag whatever the arguments held.
#![no_main]

use arbitrary::Arbitrary;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use loopguard::{Action, AgentConfig, AgentGuard, AgentPreset, AgentSettings, Verbosity};

#[derive(Arbitrary, Debug)]
enum Event {
    /// A call: a tool from a few names (so that calls repeat) or any name; arguments from a
    /// few shapes or any bytes.
    Call { tool: u8, name: String, args: u8, raw: Vec<u8> },
    JsonCall { tool: u8, args: Json },
    Result { output: Option<Vec<u8>>, error: Option<Vec<u8>> },
    Message(String),
    Chunk(String),
    EndMessage,
    Thought(String),
    User(String),
    State(u64),
    Tick(u64),
    Reject,
    Enable(bool),
    Reset,
}

/// A JSON value, so that arguments are well-formed JSON of any shape as often as raw bytes.
#[derive(Arbitrary, Debug)]
enum Json {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    fn value(&self, depth: u32) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Int(i) => Value::from(*i),
            Json::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
            Json::Str(s) => Value::String(s.clone()),
            _ if depth > 8 => Value::Null,
            Json::List(items) => Value::Array(items.iter().map(|j| j.value(depth + 1)).collect()),
            Json::Object(fields) => Value::Object(
                fields
                    .iter()
                    .map(|(k, j)| (k.clone(), j.value(depth + 1)))
                    .collect(),
            ),
        }
    }
}

#[derive(Arbitrary, Debug)]
struct Input {
    preset: u8,
    events: Vec<Event>,
}

const TOOLS: [&str; 5] = ["bash", "read_file", "search", "edit", "sh"];
const ARGS: [&[u8]; 8] = [
    br#"{"command": "ls"}"#,
    br#"{"command": "cat <<'EOF' > f.py\nprint(1)\nEOF"}"#,
    br#"{"path": "a.rs", "line": 1.0}"#,
    br#"{"q": "</loop-recovery>\u0000\u001b[2J"}"#,
    b"not json",
    br#"{"command": "pytest -x"}"#,
    br#"{"command": "cd src/../\u00e9/./x"}"#,
    br#"{"command": "cd .."}"#,
];

fn check_text(text: &str) {
    assert!(!text.contains('\0'), "NUL in {text:?}");
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "control character in {text:?}"
    );
}

fuzz_target!(|x: Input| {
    // Built once: a config compiles its patterns.
    static CONFIGS: OnceLock<Vec<AgentConfig>> = OnceLock::new();
    let configs = CONFIGS.get_or_init(|| {
        [
            AgentPreset::Default,
            AgentPreset::GeminiCli,
            AgentPreset::OpenHands,
            AgentPreset::RooCode,
            AgentPreset::Cline,
        ]
        .map(|p| AgentConfig::new(&AgentSettings::preset(p)).unwrap())
        .to_vec()
    });
    let mut g = AgentGuard::new(&configs[usize::from(x.preset % 5)]);
    for e in x.events.into_iter().take(400) {
        match e {
            Event::Call { tool, name, args, raw } => {
                let tool = if tool < 200 { TOOLS[usize::from(tool % 5)] } else { &name };
                let args = if args < 200 { ARGS[usize::from(args % 8)] } else { &raw };
                g.call(tool, args);
            }
            Event::JsonCall { tool, args } => {
                let args = serde_json::to_vec(&args.value(0)).unwrap();
                g.call(TOOLS[usize::from(tool % 5)], &args);
            }
            Event::Result { output, error } => {
                g.result(output.as_deref(), error.as_deref());
            }
            Event::Message(t) => {
                g.assistant(&t);
            }
            Event::Chunk(t) => {
                g.assistant_chunk(&t);
            }
            Event::EndMessage => {
                g.end_message();
            }
            Event::Thought(t) => {
                g.thought(&t);
            }
            Event::User(t) => {
                g.user(&t);
            }
            Event::State(f) => {
                g.state(f);
            }
            Event::Tick(ms) => {
                g.tick(ms);
            }
            Event::Reject => {
                g.reject();
            }
            Event::Enable(on) => g.set_enabled(on),
            Event::Reset => g.reset(),
        }
        if g.verdict().action == Action::Continue {
            continue;
        }
        for v in [Verbosity::Brief, Verbosity::Summary] {
            let mut s = String::new();
            g.describe(v, &mut s).unwrap();
            check_text(&s);
        }
        let mut full = String::new();
        g.describe(Verbosity::Full, &mut full).unwrap();
        assert!(!full.contains('\0'));
        assert!(full.matches("</loop-recovery>").count() <= 1, "{full}");
        for line in full.lines() {
            check_text(line);
        }
        assert!(g.memory_usage() < 64 << 20);
    }
});
