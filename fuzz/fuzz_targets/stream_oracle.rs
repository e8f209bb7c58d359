//! Token streams against brute force: the vLLM-exact preset halts on exactly the token where
//! vLLM's tail scan first finds its copies; every halt of the balanced preset is a real loop
//! (the span it reports is periodic with the period it reports); a clone continues as the
//! original and a reset guard answers as a new one; a guard fed the tokens as speculative
//! drafts, with wrong drafts rolled back, answers every step as a guard fed only the tokens.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use loopguard::{Action, StreamConfig, StreamGuard, StreamSettings};

#[derive(Arbitrary, Debug)]
struct Input {
    min: u8,
    extra: u8,
    count: u8,
    alphabet: u8,
    split: u16,
    tokens: Vec<u8>,
}

/// vLLM's check on the output so far: is the tail `count` copies of a block of length `p`
/// for some `p` in `min..=max`?
fn vllm_check(t: &[u32], min: usize, max: usize, count: usize) -> bool {
    (min.max(1)..=max).any(|p| {
        p * count <= t.len()
            && (1..count).all(|m| t[t.len() - p * (m + 1)..t.len() - p * m] == t[t.len() - p..])
    })
}

fn first_halt(guard: &mut StreamGuard, t: &[u32]) -> Option<usize> {
    t.iter()
        .position(|&id| guard.push_token(id, None).action == Action::Halt)
}

fuzz_target!(|x: Input| {
    let alphabet = 1 + u32::from(x.alphabet % 6);
    let t: Vec<u32> = x
        .tokens
        .iter()
        .take(1500)
        .map(|&b| u32::from(b) % alphabet)
        .collect();

    // vLLM-exact.
    let (min, count) = (u32::from(x.min % 8), 2 + u32::from(x.count % 5));
    let max = min.max(1) + u32::from(x.extra % 40);
    let config = StreamConfig::new(&StreamSettings::vllm_compatible(min, max, count)).unwrap();
    let mut guard = StreamGuard::new(&config);
    let got = first_halt(&mut guard, &t);
    let want = (0..t.len()).find(|&i| {
        vllm_check(&t[..=i], min as usize, max as usize, count as usize)
    });
    assert_eq!(got, want, "vllm_compatible({min}, {max}, {count})");

    // Balanced: a halt reports a periodic span that ends at the halting token.
    let config = StreamConfig::default();
    let mut guard = StreamGuard::new(&config);
    let mut clone = None;
    let split = usize::from(x.split) % (t.len() + 1);
    for (i, &id) in t.iter().enumerate() {
        if i == split {
            clone = Some(guard.clone());
        }
        let v = guard.push_token(id, None);
        assert_eq!(v.at as usize, i);
        if v.action == Action::Halt {
            let (p, onset) = (v.period as usize, v.onset as usize);
            assert!(p >= 1 && onset + p <= i + 1, "{v:?}");
            if v.kind == loopguard::LoopKind::ExactLoop {
                assert!((onset + p..=i).all(|j| t[j] == t[j - p]), "not periodic: {v:?}");
            }
            break;
        }
    }
    // The clone, fed the rest, ends where the original did.
    if let Some(mut c) = clone {
        for &id in &t[split..] {
            if c.push_token(id, None).action == Action::Halt {
                break;
            }
        }
        assert_eq!(c.verdict(), guard.verdict());
        assert_eq!(c.stats(), guard.stats());
    }
    // Drafted: steps of up to 20 drafts (past the 16 noted ones now and then), the first
    // `good` of them the stream's tokens (with a piece when the byte says so) and the rest
    // wrong, rolled back; the guard answers each step as one fed only the stream.
    let piece = |i: usize, raw: u8| {
        (raw & 0x40 != 0).then_some(if i % 3 == 0 { &b" a"[..] } else { b"b\n" })
    };
    let mut drafted = StreamGuard::new(&config);
    let mut plain = StreamGuard::new(&config);
    let (mut at, mut step) = (0, 0usize);
    let raw = |i: usize| x.tokens.get(i).copied().unwrap_or(0);
    while at < t.len().min(600) {
        step += 1;
        let r = raw(at) as usize ^ step;
        let drafts = 1 + r % 20;
        let good = (r / 20 % (drafts + 1)).min(t.len() - at);
        drafted.checkpoint();
        for j in 0..drafts {
            if j < good {
                drafted.push_token(t[at + j], piece(at + j, raw(at + j)));
            } else {
                drafted.push_token(7 + j as u32, Some(b" x"));
            }
        }
        let v = drafted.rollback(drafts - good).expect("drafts held");
        drafted.commit();
        for j in 0..good {
            plain.push_token(t[at + j], piece(at + j, raw(at + j)));
        }
        at += good.max(1);
        if good == 0 {
            let v = drafted.push_token(t[at - 1], piece(at - 1, raw(at - 1)));
            assert_eq!(v, plain.push_token(t[at - 1], piece(at - 1, raw(at - 1))));
        } else {
            assert_eq!(v, plain.verdict());
        }
        assert_eq!(drafted.stats(), plain.stats());
        assert_eq!(drafted.repeated_text(), plain.repeated_text());
    }

    // A reset guard answers as a new one, after a stream with pieces and on one where only
    // some tokens carry a piece.
    for (i, &id) in t.iter().enumerate().take(400) {
        guard.push_token(id + 100 * i as u32, Some(b" said"));
    }
    guard.reset();
    let mut fresh = StreamGuard::new(&config);
    for (i, (&id, &raw)) in t.iter().zip(&x.tokens).enumerate().take(300) {
        let piece = (raw & 0x40 != 0).then_some(if i % 2 == 0 { &b" a"[..] } else { b"b\n" });
        assert_eq!(guard.push_token(id, piece), fresh.push_token(id, piece));
    }
});
