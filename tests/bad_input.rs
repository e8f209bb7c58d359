//! Bad input gets a clear error or a correct verdict, never a panic or lost state.

use loopguard::{
    Action, ConfigError, LoopKind, StreamConfig, StreamGuard, StreamSettings, SETTINGS_FIELDS,
};

fn err(f: impl FnOnce(&mut StreamSettings)) -> ConfigError {
    let mut s = StreamSettings::default();
    f(&mut s);
    StreamConfig::new(&s).expect_err("invalid settings are refused")
}

#[test]
fn invalid_settings_name_the_field_and_the_range() {
    let cases: Vec<(ConfigError, &str, &str)> = vec![
        (err(|s| s.max_period = 5000), "max_period", "1..=4096"),
        (err(|s| s.max_period = 0), "max_period", "1..=4096"),
        (err(|s| s.min_period = 300), "min_period", "1..=256"),
        (err(|s| s.halt_copies = 1), "halt_copies", "2..=1000"),
        (err(|s| s.window = 1000), "window", "power of two"),
        (
            err(|s| s.window = 128),
            "window",
            "greater than max_period + ngram",
        ),
        (err(|s| s.ngram = 0), "ngram", "1..=16"),
        (err(|s| s.near_warn = f32::NAN), "near_warn", "above 0"),
        (err(|s| s.near_halt = 1.5), "near_halt", "0 (off)"),
        (
            err(|s| s.warn_copies = 1),
            "warn_copies",
            "0 (off) or 2..=1000",
        ),
        (
            err(|s| s.structure_slack = 0.5),
            "structure_slack",
            "1..=16",
        ),
        (
            err(|s| s.breakers = vec![String::new()]),
            "breakers",
            "1..=256 bytes",
        ),
        (
            err(|s| s.exempt = vec!["x".into(); 65]),
            "exempt",
            "at most 64",
        ),
        (err(|s| s.escalate_after = 3), "escalate_after", "16.."),
        (
            err(|s| s.char_run_halt = 16385),
            "char_run_halt",
            "0 (off) or 24..=16384",
        ),
    ];
    for (e, field, allowed) in cases {
        assert_eq!(e.field, field, "{e}");
        assert!(
            e.to_string().contains(field) && e.to_string().contains(allowed),
            "{e}"
        );
    }
    // vLLM's parameters that vLLM itself would silently ignore are errors here.
    let e = StreamConfig::new(&StreamSettings::vllm_compatible(1, 0, 3)).unwrap_err();
    assert_eq!(e.field, "max_period");
    let e = StreamConfig::new(&StreamSettings::vllm_compatible(1, 64, 1)).unwrap_err();
    assert_eq!(e.field, "halt_copies");
}

#[test]
fn every_field_can_be_set_by_name_and_unknown_names_are_refused() {
    let mut s = StreamSettings::default();
    let d = StreamSettings::default();
    for &field in SETTINGS_FIELDS {
        let value = match field {
            "breakers" | "exempt" => "pattern",
            "near_warn" | "near_halt" => "0.5",
            "structure_slack" => "2",
            _ => "32",
        };
        s.set(field, value)
            .unwrap_or_else(|e| panic!("{field}: {e}"));
    }
    assert_ne!(s, d);
    let e = s.set("max_periods", "3").unwrap_err();
    assert!(e.to_string().contains("max_period"), "{e}");
    let e = s.set("max_period", "lots").unwrap_err();
    assert_eq!(e.field, "max_period");
}

#[test]
fn any_token_id_works() {
    let config = StreamConfig::default();
    let mut g = StreamGuard::new(&config);
    for &id in &[u32::MAX, 0, u32::MAX - 1] {
        g.push_token(id, None);
    }
    g.reset();
    let halt = (0..100)
        .map(|_| g.push_token(u32::MAX, None))
        .find(|v| v.action == Action::Halt);
    assert_eq!(halt.map(|v| (v.period, v.onset)), Some((1, 0)));
}

#[test]
fn invalid_utf8_and_empty_pieces() {
    let config = StreamConfig::default();
    let mut g = StreamGuard::new(&config);
    let junk: [&[u8]; 5] = [b"\xff\xfe", b"", b"\xe2\x94", b"\x81 ok", b"\xc0\x80"];
    for (i, p) in junk.iter().cycle().take(300).enumerate() {
        let v = g.push_token(i as u32 % 50, Some(p));
        // Ids cycle with period 50: it halts as an exact loop, with the raw bytes as evidence.
        if v.action == Action::Halt {
            assert_eq!(v.period, 50);
            assert!(!g.repeated_text().is_empty());
            return;
        }
    }
    panic!("no halt");
}

#[test]
fn a_hundred_megabytes_in_one_push() {
    let config = StreamConfig::default();
    let mut g = StreamGuard::new(&config);
    // 100 MB of one character: halts at once, having read only what it needed.
    let big = vec![b'a'; 100 << 20];
    let v = g.push_text(&big);
    assert_eq!((v.action, v.kind), (Action::Halt, LoopKind::CharRun));
    assert!(g.stats().bytes < 1024, "read {} bytes", g.stats().bytes);
    // 100 MB of text that never repeats back to back: read whole, no halt.
    g.reset();
    let mut x = 88172645463325252u64;
    let mut text = Vec::with_capacity(100 << 20);
    while text.len() < 100 << 20 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        text.extend_from_slice(format!("w{:x} ", x % 1_000_003).as_bytes());
    }
    let v = g.push_text(&text);
    assert_ne!(v.action, Action::Halt, "{v:?}");
    assert_eq!(g.stats().bytes, text.len() as u64);
    // The same as one huge token piece.
    g.reset();
    let v = g.push_token(7, Some(&text));
    assert_ne!(v.action, Action::Halt, "{v:?}");
}

#[test]
fn the_longest_character_run_threshold_is_exact() {
    let mut s = StreamSettings::default();
    (s.char_run_warn, s.char_run_halt) = (16000, loopguard::MAX_RUN);
    let mut g = StreamGuard::new(&StreamConfig::new(&s).unwrap());
    // One token whose piece is the run (as text alone its 24-byte words would loop first).
    // It halts at byte 16384; the rest of the piece is short enough to be read, and the
    // span covers it all.
    let v = g.push_token(7, Some(&vec![b'z'; 20000]));
    assert_eq!(
        (v.action, v.kind, v.span),
        (Action::Halt, LoopKind::CharRun, 20000)
    );
    assert_eq!(v.onset_byte, Some(0));
    g.reset();
    let v = g.push_token(7, Some(&vec![b'z'; 16383]));
    assert_eq!(v.action, Action::Warn);
}

#[test]
fn mixing_push_kinds_is_defined() {
    let config = StreamConfig::default();
    // A token stream given text: the text feeds the text detectors, not the symbols.
    let mut g = StreamGuard::new(&config);
    g.push_token(1, Some(b"a"));
    g.push_text(b" more text\n");
    assert_eq!(g.stats().symbols, 1);
    // Ids alone, then text, then ids alone again: the later ids belong to a stream with text
    // (push_token's debug assertion checks that its fast path knows).
    let mut g = StreamGuard::new(&config);
    g.push_token(1, None);
    g.push_text(b"a line of text\n");
    assert_eq!(g.push_token(2, None).at, 1);
    assert_eq!(g.stats().symbols, 2);
    // A text stream given a token: its piece is text, its id is ignored.
    let mut g = StreamGuard::new(&config);
    g.push_text(b"some words ");
    g.push_token(99, Some(b"more "));
    assert_eq!(g.stats().symbols, 3);
    // finish_text on a token stream changes nothing.
    let before = g.verdict();
    let mut t = StreamGuard::new(&config);
    t.push_token(5, None);
    assert_eq!(t.finish_text().action, Action::Continue);
    assert_eq!(g.verdict(), before);
}

/// A reset guard remembers no byte offset of the stream before: when the new stream's first
/// tokens come without pieces and a later one with, the loop's onset is found among the new
/// stream's symbols (this once read an old offset and overflowed).
#[test]
fn a_reset_forgets_the_old_streams_offsets() {
    let config = StreamConfig::default();
    let mut used = StreamGuard::new(&config);
    for i in 0..5000u32 {
        used.push_token(100_000 + i, Some(b" word"));
    }
    used.reset();
    let mut fresh = StreamGuard::new(&config);
    for i in 0..200u32 {
        let piece = (i == 8).then_some(&b" the"[..]);
        let (a, b) = (
            used.push_token(i % 5, piece),
            fresh.push_token(i % 5, piece),
        );
        assert_eq!(a, b, "token {i}");
        if a.action == Action::Halt {
            return;
        }
    }
    panic!("the loop never halted");
}
