use loopguard::*;
fn main() {
    let s = StreamSettings {
        halt_span: 100,
        ..StreamSettings::default()
    };
    let c = StreamConfig::new(&s).unwrap();
    for l in std::fs::read_to_string("tests/data/peer-dev.jsonl")
        .unwrap()
        .lines()
    {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        if v["kind"] != "text_stream" {
            continue;
        }
        let mut g = StreamGuard::new(&c);
        for (i, e) in v["events"].as_array().unwrap().iter().enumerate() {
            let r = g.push_text(e["text"].as_str().unwrap().as_bytes());
            if r.action == Action::Halt {
                println!(
                    "{} halt at {i}: {:?} period {} x{} unit {:?} text {:?}",
                    v["id"],
                    r.kind,
                    r.period,
                    r.repeats,
                    r.unit,
                    String::from_utf8_lossy(g.repeated_text())
                );
                break;
            }
        }
    }
}
