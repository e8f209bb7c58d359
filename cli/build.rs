//! Collects the doc comment of every settings field from the library's sources, so that
//! `loopguard config --print-defaults` comments each key with the same words as the API docs.

use std::fmt::Write as _;
use std::path::Path;

const SOURCES: &[&str] = &[
    "../src/config.rs",
    "../src/agent/settings.rs",
    "../src/agent/chant.rs",
];
const STRUCTS: &[&str] = &[
    "StreamSettings",
    "AgentSettings",
    "ChantSettings",
    "Thresholds",
    "ToolPolicy",
];

fn main() {
    let mut table = String::from("pub const FIELD_DOCS: &[(&str, &str, &str)] = &[\n");
    for source in SOURCES {
        println!("cargo:rerun-if-changed={source}");
        let text = std::fs::read_to_string(source).unwrap_or_else(|e| panic!("{source}: {e}"));
        let mut current: Option<&str> = None;
        let mut doc: Vec<&str> = Vec::new();
        for line in text.lines() {
            let line = line.trim();
            if let Some(name) = line
                .strip_prefix("pub struct ")
                .and_then(|s| s.strip_suffix(" {"))
            {
                current = STRUCTS.iter().copied().find(|s| *s == name);
                doc.clear();
            } else if line == "}" {
                current = None;
            } else if let Some(d) = line.strip_prefix("///") {
                doc.push(d.trim());
            } else if let (Some(s), Some(field)) = (current, line.strip_prefix("pub ")) {
                if let Some((name, _)) = field.split_once(':') {
                    writeln!(table, "    ({s:?}, {name:?}, {:?}),", doc.join(" ")).unwrap();
                }
                doc.clear();
            } else if !line.starts_with("#[") {
                doc.clear();
            }
        }
    }
    table.push_str("];\n");
    let out = Path::new(&std::env::var("OUT_DIR").unwrap()).join("field_docs.rs");
    std::fs::write(out, table).unwrap();
}
