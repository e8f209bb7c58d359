//! Configuration files: presets, TOML or JSON overrides of every threshold, and the commented
//! defaults that `loopguard config --print-defaults` prints.
//!
//! A file has two tables, `[stream]` (token streams and texts) and `[agent]` (agent traces).
//! Each starts from its preset (`preset = "..."`, or `--preset` on the command line) and every
//! key given replaces the preset's value. Keys are the field names of `StreamSettings` and
//! `AgentSettings`; optional sub-tables (`agent.message_text`, `agent.chant`) are turned off
//! with `false`.

use std::fmt::Write as _;
use std::path::Path;

use loopguard::{
    AgentConfig, AgentPreset, AgentSettings, ChantSettings, Preset, StreamConfig, StreamSettings,
    Thresholds, ToolPolicy,
};
use serde_json::{Map, Value};

include!(concat!(env!("OUT_DIR"), "/field_docs.rs"));

const STREAM_PRESETS: &str = "strict, balanced, lenient";
const AGENT_PRESETS: &str = "default, gemini_cli, openhands, roo_code, cline";

/// Both validated configurations and the presets they started from.
pub struct Configs {
    pub stream: StreamConfig,
    pub agent: AgentConfig,
    pub stream_preset: Preset,
    pub agent_preset: AgentPreset,
}

/// The presets named on the command line: each name is a stream or an agent preset.
#[derive(Default)]
pub struct PresetChoice {
    stream: Option<Preset>,
    agent: Option<AgentPreset>,
}

impl PresetChoice {
    /// Sorts preset names into their family; an unknown name is an error listing them all.
    pub fn parse(names: &[String]) -> Result<PresetChoice, String> {
        let mut choice = PresetChoice::default();
        for name in names {
            if let Some(p) = Preset::from_name(name) {
                choice.stream = Some(p);
            } else if let Some(p) = AgentPreset::from_name(name) {
                choice.agent = Some(p);
            } else {
                return Err(format!(
                    "unknown preset {name:?}: stream presets are {STREAM_PRESETS}; \
                     agent presets are {AGENT_PRESETS}"
                ));
            }
        }
        Ok(choice)
    }
}

/// The syntax of a configuration text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    Toml,
    Json,
}

/// Builds both configurations: presets, then the file's keys, then validation.
pub fn load(choice: &PresetChoice, file: Option<&Path>) -> Result<Configs, String> {
    let Some(path) = file else {
        return build(choice, Map::new(), None);
    };
    let (text, syntax) = read(path)?;
    load_text(choice, &text, syntax, &path.display().to_string())
}

/// A configuration file's text and its syntax: by the extension; otherwise JSON when it
/// starts with `{`.
fn read(path: &Path) -> Result<(String, Syntax), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let syntax = match path.extension().and_then(|e| e.to_str()) {
        Some("json") => Syntax::Json,
        Some("toml") => Syntax::Toml,
        _ if text.trim_start().starts_with('{') => Syntax::Json,
        _ => Syntax::Toml,
    };
    Ok((text, syntax))
}

/// [`load`] from a configuration's text; `origin` (a path) begins every message.
pub fn load_text(
    choice: &PresetChoice,
    text: &str,
    syntax: Syntax,
    origin: &str,
) -> Result<Configs, String> {
    let doc = parse(text, syntax).map_err(|e| format!("{origin}: {e}"))?;
    build(choice, doc, Some(origin))
}

fn build(
    choice: &PresetChoice,
    mut doc: Map<String, Value>,
    origin: Option<&str>,
) -> Result<Configs, String> {
    let where_ = |key: &str| match origin {
        Some(origin) => format!("{origin}: {key}"),
        None => key.to_string(),
    };
    for key in doc.keys() {
        if key != "stream" && key != "agent" {
            return Err(format!(
                "{}: unknown table (the tables are [stream] and [agent])",
                where_(key)
            ));
        }
    }
    let mut stream_over = take_table(&mut doc, "stream").map_err(|e| where_(&e))?;
    let mut agent_over = take_table(&mut doc, "agent").map_err(|e| where_(&e))?;

    let stream_preset = match (
        choice.stream,
        take_preset(&mut stream_over, "stream").map_err(|e| where_(&e))?,
    ) {
        (Some(p), _) => p,
        (None, Some(name)) => Preset::from_name(&name).ok_or_else(|| {
            where_(&format!(
                "stream.preset: {name:?} is not one of {STREAM_PRESETS}"
            ))
        })?,
        (None, None) => Preset::Balanced,
    };
    let agent_preset = match (
        choice.agent,
        take_preset(&mut agent_over, "agent").map_err(|e| where_(&e))?,
    ) {
        (Some(p), _) => p,
        (None, Some(name)) => AgentPreset::from_name(&name).ok_or_else(|| {
            where_(&format!(
                "agent.preset: {name:?} is not one of {AGENT_PRESETS}"
            ))
        })?,
        (None, None) => AgentPreset::Default,
    };

    let stream: StreamSettings = apply(
        to_value(&StreamSettings::preset(stream_preset)),
        &stream_over,
        "stream",
    )
    .map_err(|e| where_(&e))?;
    let agent: AgentSettings = apply(
        to_value(&AgentSettings::preset(agent_preset)),
        &agent_over,
        "agent",
    )
    .map_err(|e| where_(&e))?;
    let range = |section: &str, e: loopguard::ConfigError| {
        where_(&format!(
            "{section}.{} = {}: allowed {}",
            e.field, e.value, e.allowed
        ))
    };
    let stream = StreamConfig::new(&stream).map_err(|e| range("stream", e))?;
    let agent = AgentConfig::new(&agent).map_err(|e| range("agent", e))?;
    Ok(Configs {
        stream,
        agent,
        stream_preset,
        agent_preset,
    })
}

/// The base configurations and one per model: a file may hold a `[models."NAME"]` table
/// for each model name a request can give, with `stream` and `agent` tables whose keys
/// replace the base file's (`[models."gemma3-270m".stream]`, `halt_copies = 4`). Only the
/// proxy reads it; `load` refuses the table.
pub fn load_with_models(
    choice: &PresetChoice,
    file: Option<&Path>,
) -> Result<(Configs, Vec<(String, Configs)>), String> {
    let Some(path) = file else {
        return Ok((build(choice, Map::new(), None)?, Vec::new()));
    };
    let (text, syntax) = read(path)?;
    models_from_text(choice, &text, syntax, &path.display().to_string())
}

/// [`load_with_models`] from a configuration's text.
pub fn models_from_text(
    choice: &PresetChoice,
    text: &str,
    syntax: Syntax,
    origin: &str,
) -> Result<(Configs, Vec<(String, Configs)>), String> {
    let mut doc = parse(text, syntax).map_err(|e| format!("{origin}: {e}"))?;
    let models = take_table(&mut doc, "models").map_err(|e| format!("{origin}: {e}"))?;
    let base = build(choice, doc.clone(), Some(origin))?;
    let mut out = Vec::new();
    for (name, table) in models {
        let model_origin = format!("{origin}: models.{name:?}");
        let Value::Object(mut table) = table else {
            return Err(format!("{model_origin}: expected a table"));
        };
        let mut merged = doc.clone();
        for section in ["stream", "agent"] {
            let over =
                take_table(&mut table, section).map_err(|e| format!("{model_origin}.{e}"))?;
            let base_section = merged
                .entry(section)
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(b) = base_section {
                b.extend(over);
            }
        }
        if let Some(key) = table.keys().next() {
            return Err(format!(
                "{model_origin}.{key}: unknown table (a model has [stream] and [agent])"
            ));
        }
        out.push((name, build(choice, merged, Some(&model_origin))?));
    }
    Ok((base, out))
}

/// A configuration's text as a JSON table.
fn parse(text: &str, syntax: Syntax) -> Result<Map<String, Value>, String> {
    let value = match syntax {
        Syntax::Json => {
            serde_json::from_str::<Value>(text).map_err(|e| format!("not valid JSON: {e}"))?
        }
        Syntax::Toml => {
            let table: toml::Table =
                toml::from_str(text).map_err(|e| format!("not valid TOML: {e}"))?;
            toml_to_json(toml::Value::Table(table), "")?
        }
    };
    match value {
        Value::Object(map) => Ok(map),
        _ => Err("the configuration must be a table".into()),
    }
}

/// A TOML value as JSON. TOML has floats JSON cannot hold (`nan`, `inf`): they are refused
/// here, with their key, rather than turned into nothing.
fn toml_to_json(v: toml::Value, path: &str) -> Result<Value, String> {
    let key = |k: &str| {
        if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}.{k}")
        }
    };
    Ok(match v {
        toml::Value::Float(f) if !f.is_finite() => {
            return Err(format!("{path} = {f}: expected a finite number"))
        }
        toml::Value::Table(t) => Value::Object(
            t.into_iter()
                .map(|(k, v)| Ok((k.clone(), toml_to_json(v, &key(&k))?)))
                .collect::<Result<_, String>>()?,
        ),
        toml::Value::Array(items) => Value::Array(
            items
                .into_iter()
                .enumerate()
                .map(|(i, v)| toml_to_json(v, &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?,
        ),
        other => serde_json::to_value(other).map_err(|e| format!("{path}: {e}"))?,
    })
}

fn take_table(doc: &mut Map<String, Value>, name: &str) -> Result<Map<String, Value>, String> {
    match doc.remove(name) {
        None => Ok(Map::new()),
        Some(Value::Object(map)) => Ok(map),
        Some(other) => Err(format!(
            "{name}: expected a table, found {}",
            type_name(&other)
        )),
    }
}

fn take_preset(table: &mut Map<String, Value>, section: &str) -> Result<Option<String>, String> {
    match table.remove("preset") {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(format!(
            "{section}.preset: expected a string, found {}",
            type_name(&other)
        )),
    }
}

fn to_value<T: serde::Serialize>(settings: &T) -> Value {
    serde_json::to_value(settings).expect("settings are plain data")
}

/// Lays `over` onto the preset `base`, checking names and types key by key so that an error
/// names the key, then reads the settings back.
fn apply<T: serde::de::DeserializeOwned>(
    mut base: Value,
    over: &Map<String, Value>,
    section: &str,
) -> Result<T, String> {
    merge(&mut base, over, section)?;
    // The path of the value serde refused names the key: `stream.halt_copies: invalid value:
    // integer `-5`, expected u32`.
    serde_path_to_error::deserialize(base).map_err(|e| {
        let at = e.path().to_string();
        if at == "." {
            format!("{section}: {}", e.inner())
        } else {
            format!("{section}.{at}: {}", e.inner())
        }
    })
}

/// The value an optional table or a new map entry starts from, by its key path.
fn fresh(path: &str) -> Option<Value> {
    if path == "agent.message_text" {
        Some(to_value(&StreamSettings::default()))
    } else if path == "agent.chant" {
        Some(to_value(&ChantSettings::default()))
    } else if path.starts_with("agent.tools.") && path.ends_with(".repeats") {
        Some(to_value(&Thresholds::default()))
    } else if path.starts_with("agent.tools.") && path.matches('.').count() == 2 {
        Some(to_value(&ToolPolicy::default()))
    } else {
        None
    }
}

fn merge(base: &mut Value, over: &Map<String, Value>, path: &str) -> Result<(), String> {
    let Value::Object(map) = base else {
        unreachable!("merge is called on tables")
    };
    for (key, new) in over {
        let here = format!("{path}.{key}");
        let old = match map.get_mut(key) {
            Some(old) => old,
            // A map keyed by the user's names (tool policies): a new entry.
            None if path == "agent.tools" => map.entry(key.clone()).or_insert(Value::Null),
            None => return Err(format!("{here}: unknown key{}", suggestion(key, map))),
        };
        if let Some(start) = fresh(&here) {
            // An optional table: `false` turns it off, `true` on, a table sets its keys.
            match new {
                Value::Bool(false) => *old = Value::Null,
                Value::Bool(true) if old.is_null() => *old = start,
                Value::Bool(true) => {}
                Value::Object(sub) => {
                    if old.is_null() {
                        *old = start;
                    }
                    merge(old, sub, &here)?;
                }
                _ => {
                    return Err(format!(
                        "{here}: expected a table or false, found {}",
                        type_name(new)
                    ))
                }
            }
            continue;
        }
        match (&mut *old, new) {
            (Value::Object(_), Value::Object(sub)) => merge(old, sub, &here)?,
            (Value::Number(_), Value::Number(_))
            | (Value::Bool(_), Value::Bool(_))
            | (Value::String(_), Value::String(_)) => *old = new.clone(),
            (Value::Array(_), Value::Array(items)) => {
                if let Some(bad) = items.iter().find(|v| !v.is_string()) {
                    return Err(format!(
                        "{here}: expected a list of strings, found {}",
                        type_name(bad)
                    ));
                }
                *old = new.clone();
            }
            (old, new) => {
                return Err(format!(
                    "{here}: expected {}, found {}",
                    type_name(old),
                    type_name(new)
                ))
            }
        }
    }
    Ok(())
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a table",
    }
}

/// ` (did you mean "x"?)` for a key one edit or a prefix away from a known one.
fn suggestion(key: &str, map: &Map<String, Value>) -> String {
    let close = map
        .keys()
        .find(|k| k.starts_with(key) || key.starts_with(k.as_str()) || edit_distance(k, key) <= 2);
    match close {
        Some(k) => format!(" (did you mean {k:?}?)"),
        None => String::new(),
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// The complete default configuration as commented TOML; reading it back gives the defaults.
pub fn defaults_toml() -> String {
    let mut out = String::new();
    out.push_str(
        "# loopguard configuration: `loopguard scan --config FILE` (TOML, or the same keys in JSON).\n\
         # Every key is optional. Each table starts from its preset and the keys given replace\n\
         # the preset's values; ranges are checked when the file is read.\n\n",
    );
    out.push_str("# Token streams and texts.\n[stream]\n");
    writeln!(
        out,
        "# The preset the keys below start from: {STREAM_PRESETS}."
    )
    .unwrap();
    out.push_str("preset = \"balanced\"\n");
    let stream = to_value(&StreamSettings::default());
    table(&mut out, "StreamSettings", &stream, "");

    out.push_str("\n# Agent traces: tool calls, results and messages.\n[agent]\n");
    writeln!(
        out,
        "# The preset the keys below start from: {AGENT_PRESETS}."
    )
    .unwrap();
    out.push_str("preset = \"default\"\n");
    let agent = to_value(&AgentSettings::default());
    table(&mut out, "AgentSettings", &agent, "");

    for (key, settings) in [
        ("message_text", "StreamSettings"),
        ("chant", "ChantSettings"),
    ] {
        out.push('\n');
        comment(&mut out, doc("AgentSettings", key), "");
        out.push_str("# `");
        out.push_str(key);
        out.push_str(" = false` under [agent] turns it off.\n");
        writeln!(out, "[agent.{key}]").unwrap();
        table(&mut out, settings, &agent[key], "");
    }

    out.push('\n');
    comment(&mut out, doc("AgentSettings", "tools"), "");
    out.push_str("# One table per tool name, for example:\n#\n# [agent.tools.read_file]\n");
    let policy = to_value(&ToolPolicy {
        repeats: Some(Thresholds::new(5, 0, 0)),
        ..ToolPolicy::default()
    });
    table(&mut out, "ToolPolicy", &policy, "# ");
    out
}

/// Writes the keys of `value` in the order `ty` declares them, each under its doc comment.
/// Optional tables and per-tool maps are written by the caller.
fn table(out: &mut String, ty: &str, value: &Value, prefix: &str) {
    for &(_, key, text) in FIELD_DOCS.iter().filter(|(t, _, _)| *t == ty) {
        if matches!(key, "message_text" | "chant" | "tools") && ty == "AgentSettings" {
            continue;
        }
        if ty == "AgentSettings" && key == "identical" {
            out.push_str(
                "# Thresholds are { warn, block, halt }: the counts that warn, block the call and\n\
                 # halt the session; 0 is never.\n",
            );
        }
        comment(out, text, prefix);
        let value = &value[key];
        if matches!(value.as_str(), Some("continue" | "warn" | "block" | "halt")) {
            writeln!(out, "{prefix}# One of continue, warn, block, halt.").unwrap();
        }
        writeln!(out, "{prefix}{key} = {}", toml_value(value)).unwrap();
    }
}

fn doc(ty: &str, key: &str) -> &'static str {
    FIELD_DOCS
        .iter()
        .find(|(t, k, _)| *t == ty && *k == key)
        .map_or("", |d| d.2)
}

/// Writes `text` as `#` comment lines of at most 96 columns.
fn comment(out: &mut String, text: &str, prefix: &str) {
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && prefix.len() + line.len() + word.len() + 3 > 96 {
            writeln!(out, "{prefix}# {line}").unwrap();
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        writeln!(out, "{prefix}# {line}").unwrap();
    }
}

/// One value in TOML syntax: numbers as written by Rust (floats keep a decimal point, f32
/// shortest form), strings quoted, tables inline.
fn toml_value(v: &Value) -> String {
    match v {
        Value::Number(n) if n.is_f64() => {
            let s = (n.as_f64().unwrap() as f32).to_string();
            if s.contains(['.', 'e']) {
                s
            } else {
                format!("{s}.0")
            }
        }
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::String(s) => Value::String(s.clone()).to_string(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(toml_value).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) => {
            // Thresholds read in rising order; other tables have no such order.
            let mut keys: Vec<&String> = map.keys().collect();
            let rank = |k: &str| ["warn", "block", "halt"].iter().position(|r| *r == k);
            keys.sort_by_key(|k| rank(k));
            let items: Vec<String> = keys
                .into_iter()
                .filter(|k| !map[*k].is_null())
                .map(|k| format!("{k} = {}", toml_value(&map[k])))
                .collect();
            format!("{{ {} }}", items.join(", "))
        }
        Value::Null => "false".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_keys(ty: &str, value: &Value) -> Vec<String> {
        let mut keys: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        let mut documented: Vec<String> = FIELD_DOCS
            .iter()
            .filter(|(t, _, _)| *t == ty)
            .map(|(_, k, _)| k.to_string())
            .collect();
        documented.sort();
        assert_eq!(
            keys, documented,
            "{ty}: every field has exactly one doc entry"
        );
        keys
    }

    #[test]
    fn models_override_the_base_file_and_bad_keys_are_named() {
        let text = "[stream]\npreset = \"lenient\"\nhalt_copies = 5\n\n\
                    [models.\"gemma3\".stream]\nhalt_span = 80\n";
        let (base, models) =
            models_from_text(&PresetChoice::default(), text, Syntax::Toml, "p.toml").unwrap();
        assert_eq!(base.stream.settings().halt_copies, 5);
        assert_eq!(models.len(), 1);
        let (name, m) = &models[0];
        assert_eq!(name, "gemma3");
        assert_eq!(m.stream.settings().halt_copies, 5, "the base's keys hold");
        assert_eq!(m.stream.settings().halt_span, 80);
        assert_eq!(m.stream_preset, Preset::Lenient);
        let bad = "[models.\"m\".stream]\nhalt_copies = 0\n";
        let e = models_from_text(&PresetChoice::default(), bad, Syntax::Toml, "p.toml")
            .err()
            .unwrap();
        assert!(
            e.contains("models.\"m\"") && e.contains("halt_copies"),
            "{e}"
        );
        let bad = "[models.\"m\".sampler]\nx = 1\n";
        let e = models_from_text(&PresetChoice::default(), bad, Syntax::Toml, "p.toml")
            .err()
            .unwrap();
        assert!(e.contains("sampler"), "{e}");
    }

    #[test]
    fn every_field_is_documented() {
        all_keys("StreamSettings", &to_value(&StreamSettings::default()));
        all_keys("AgentSettings", &to_value(&AgentSettings::default()));
        all_keys("ChantSettings", &to_value(&ChantSettings::default()));
        all_keys("Thresholds", &to_value(&Thresholds::default()));
        all_keys("ToolPolicy", &to_value(&ToolPolicy::default()));
        assert!(FIELD_DOCS.iter().all(|(_, _, d)| !d.is_empty()));
    }

    #[test]
    fn printed_defaults_read_back_as_the_defaults() {
        let dir = std::env::temp_dir().join(format!("lg-defaults-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("defaults.toml");
        let text = defaults_toml();
        std::fs::write(&path, &text).unwrap();
        let c = load(&PresetChoice::default(), Some(&path)).unwrap();
        assert_eq!(c.stream.settings(), &StreamSettings::default());
        assert_eq!(c.agent.settings(), &AgentSettings::default());
        // Every key of every table is written (and commented).
        for key in all_keys("StreamSettings", &to_value(&StreamSettings::default())) {
            assert!(text.contains(&format!("\n{key} = ")), "{key}");
        }
        for key in all_keys("AgentSettings", &to_value(&AgentSettings::default())) {
            let line = format!("\n{key} = ");
            let table = format!("[agent.{key}");
            assert!(text.contains(&line) || text.contains(&table), "{key}");
        }
        std::fs::remove_dir_all(dir).unwrap();
    }

    fn load_str(ext: &str, text: &str) -> Result<Configs, String> {
        let syntax = if ext == "json" {
            Syntax::Json
        } else {
            Syntax::Toml
        };
        load_text(&PresetChoice::default(), text, syntax, "c")
    }

    #[test]
    fn keys_replace_the_presets_values() {
        let c = load_str(
            "toml",
            "[stream]\npreset = \"strict\"\nhalt_copies = 7\nbreakers = [\"</think>\"]\n\
             [agent]\npreset = \"cline\"\nidentical = { warn = 2 }\nchant = false\n\
             [agent.tools.poll]\npoller = true\nrepeats = { warn = 9 }\n",
        )
        .unwrap();
        let s = c.stream.settings();
        let strict = StreamSettings::preset(Preset::Strict);
        assert_eq!(s.halt_copies, 7);
        assert_eq!(s.breakers, ["</think>"]);
        assert_eq!(s.max_period, strict.max_period);
        let a = c.agent.settings();
        let cline = AgentSettings::preset(AgentPreset::Cline);
        assert_eq!(a.identical.warn, 2);
        assert_eq!(a.identical.halt, cline.identical.halt);
        assert_eq!(a.chant, None);
        assert!(a.tools["poll"].poller);
        assert_eq!(a.tools["poll"].repeats, Some(Thresholds::new(9, 0, 0)));
        assert_eq!(c.agent_preset, AgentPreset::Cline);

        let j = load_str("json", r#"{"agent": {"message_text": {"halt_copies": 9}}}"#).unwrap();
        assert_eq!(
            j.agent
                .settings()
                .message_text
                .as_ref()
                .unwrap()
                .halt_copies,
            9
        );
    }

    #[test]
    fn errors_name_the_key() {
        let cases = [
            (
                "[stream]\nhalt_copie = 3\n",
                "stream.halt_copie: unknown key (did you mean \"halt_copies\"?)",
            ),
            (
                "[stream]\nhalt_copies = \"3\"\n",
                "stream.halt_copies: expected a number, found a string",
            ),
            ("[stream]\nhalt_copies = 1\n", "stream.halt_copies"),
            (
                "[stream]\nmin_period = -1\n",
                "stream.min_period: invalid value: integer `-1`, expected u32",
            ),
            (
                "[stream]\nhalt_copies = 5000000000\n",
                "stream.halt_copies: invalid value",
            ),
            (
                "[stream]\nnear_warn = nan\n",
                "stream.near_warn = NaN: expected a finite number",
            ),
            (
                "[stream]\nnear_warn = 2.0\n",
                "stream.near_warn = 2: allowed a number above 0 and at most 1",
            ),
            (
                "[agent.message_text]\nhalt_span = 70000\n",
                "agent.message_text.halt_span = 70000: allowed 0..=65536",
            ),
            (
                "[stream]\npreset = \"fast\"\n",
                "stream.preset: \"fast\" is not one of",
            ),
            (
                "[agent]\nidentical = 3\n",
                "agent.identical: expected a table, found a number",
            ),
            (
                "[agent]\nidentical = { warm = 3 }\n",
                "agent.identical.warm: unknown key",
            ),
            (
                "[agent]\nrunaway_action = \"explode\"\n",
                "agent.runaway_action: unknown variant `explode`",
            ),
            (
                "[agent]\nchant = 3\n",
                "agent.chant: expected a table or false",
            ),
            ("[agent]\nwindow = 4\n", "agent.window"),
            (
                "[agent.tools.x]\nexempt = 1\n",
                "agent.tools.x.exempt: expected a boolean",
            ),
            ("[agnt]\n", "agnt: unknown table"),
            ("stream = 3\n", "stream: expected a table"),
            ("[stream\n", "not valid TOML"),
        ];
        for (text, want) in cases {
            let err = load_str("toml", text).err().unwrap_or_default();
            assert!(err.contains(want), "{text:?}: {err:?} lacks {want:?}");
        }
        let err = load_str("json", "{\"stream\": ").err().unwrap();
        assert!(err.contains("not valid JSON"), "{err}");
    }

    #[test]
    fn presets_are_sorted_into_families() {
        let names = ["gemini-cli".to_string(), "strict".to_string()];
        let c = load(&PresetChoice::parse(&names).unwrap(), None).unwrap();
        assert_eq!(c.stream_preset, Preset::Strict);
        assert_eq!(c.agent_preset, AgentPreset::GeminiCli);
        let err = PresetChoice::parse(&["fast".to_string()]).err().unwrap();
        assert!(
            err.contains("balanced") && err.contains("roo_code"),
            "{err}"
        );
    }
}
