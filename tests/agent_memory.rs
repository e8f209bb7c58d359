//! Loop memory across sessions: a restarted agent warns one repeat earlier on a loop it
//! already fell into, and nothing changes for calls it never looped on.

use loopguard::{Action, AgentConfig, AgentGuard, AgentLoopKind, Verbosity};

/// Repeats `call` (with the same empty result) until the guard warns; returns the repeat.
fn repeats_to_warn(g: &mut AgentGuard, tool: &str, args: &str) -> u32 {
    for n in 1..=20 {
        let v = g.call(tool, args.as_bytes());
        if v.action >= Action::Warn {
            assert_eq!(v.kind, AgentLoopKind::IdenticalCall);
            return n;
        }
        g.result(Some(b"No such file or directory"), None);
    }
    panic!("no warning in 20 repeats");
}

#[test]
fn a_restarted_agent_warns_one_repeat_earlier_on_a_loop_it_fell_into() {
    let config = AgentConfig::default();
    let mut first = AgentGuard::new(&config);
    first.call("read_file", br#"{"path": "src/main.rs"}"#);
    first.result(Some(b"fn main() {}"), None);
    let n = repeats_to_warn(&mut first, "search", r#"{"query": "config loader"}"#);
    assert!(!first.verdict().remembered);
    assert_eq!(
        first.memory_len(),
        1,
        "one loop, recorded once however long it lasts"
    );
    let memory = first.export_memory();
    assert!(memory.len() <= loopguard::MAX_MEMORY_BYTES);
    // Fingerprints only: no byte of the tool or its arguments.
    for text in [&b"search"[..], b"config", b"loader"] {
        assert!(!memory.windows(text.len()).any(|w| w == text));
    }

    let mut second = AgentGuard::new(&config);
    assert_eq!(second.import_memory(&memory), Ok(1));
    // The same loop: one repeat earlier, and the description says why.
    assert_eq!(
        repeats_to_warn(&mut second, "search", r#"{"query": "config loader"}"#),
        n - 1
    );
    assert!(second.verdict().remembered);
    let mut d = String::new();
    second.describe(Verbosity::Summary, &mut d).unwrap();
    assert!(d.contains("remembered from an earlier session"), "{d}");
    // Key order and white space do not matter: the canonical arguments are remembered.
    let mut third = AgentGuard::new(&config);
    third.import_memory(&memory).unwrap();
    assert_eq!(
        repeats_to_warn(&mut third, "search", r#"{ "query":"config loader" }"#),
        n - 1
    );
    // Another call is judged as before.
    let mut fourth = AgentGuard::new(&config);
    fourth.import_memory(&memory).unwrap();
    assert_eq!(
        repeats_to_warn(&mut fourth, "search", r#"{"query": "other"}"#),
        n
    );
    // A reset is a new session: its own loop is forgotten with it (within a session,
    // thresholds are as configured), the memory given stays.
    assert_eq!(fourth.memory_len(), 2);
    fourth.reset();
    assert_eq!(fourth.memory_len(), 1);
    assert_eq!(
        repeats_to_warn(&mut fourth, "search", r#"{"query": "other"}"#),
        n
    );
    assert_eq!(
        repeats_to_warn(&mut fourth, "search", r#"{"query": "config loader"}"#),
        n - 1
    );
}

#[test]
fn a_bad_memory_is_refused_whole_with_its_defect_named() {
    let mut g = AgentGuard::new(&AgentConfig::default());
    let e = g.import_memory(b"not a memory at all").unwrap_err();
    assert_eq!(
        e.to_string(),
        "memory: not a loopguard loop memory (no LGAM magic)"
    );
    assert_eq!(g.memory_len(), 0);
    let mut good = AgentGuard::new(&AgentConfig::default());
    repeats_to_warn(&mut good, "ls", "-la");
    let mut bytes = good.export_memory();
    *bytes.last_mut().unwrap() ^= 0xff;
    let e = g.import_memory(&bytes).unwrap_err();
    assert!(e.to_string().contains("checksum mismatch"), "{e}");
    assert_eq!(g.memory_len(), 0);
    // An empty memory is a memory.
    let empty = AgentGuard::new(&AgentConfig::default()).export_memory();
    assert_eq!(g.import_memory(&empty), Ok(0));
}
