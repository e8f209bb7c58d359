//! Text of any bytes, cut anywhere: the verdict does not depend on the chunking; token pieces
//! of any bytes never break the guard, and every verdict is consistent (its index, its onset,
//! the repeated text's bound, a description that renders).
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use loopguard::{Action, StreamConfig, StreamGuard, Verbosity, EVIDENCE_BYTES};

#[derive(Arbitrary, Debug)]
struct Input {
    /// Words drawn from a small vocabulary (so that loops happen) or raw bytes.
    words: Vec<u8>,
    raw: Vec<u8>,
    cuts: Vec<u8>,
}

const VOCAB: [&[u8]; 16] = [
    b"the", b"cat", b"sat", b"\n", b"and", b"- item", b"\xe3\x81\x82", b"!!", b"    ", b"{",
    b"}", b"x = 1;", b"\xff", b"\t", b"##", b"2",
];

fn check(guard: &StreamGuard) {
    let v = guard.verdict();
    if v.action != Action::Continue {
        assert!(v.onset <= v.at, "{v:?}");
        // A period, but for a near loop without two copies of one in its span (period 0: the
        // window and its coverage are the evidence).
        assert!(v.period >= 1 || v.kind == loopguard::LoopKind::NearLoop, "{v:?}");
    }
    assert!(guard.repeated_text().len() <= EVIDENCE_BYTES);
    let mut s = String::new();
    guard.describe(Verbosity::Full, &mut s).unwrap();
}

fuzz_target!(|x: Input| {
    let mut text = Vec::new();
    for &w in x.words.iter().take(3000) {
        text.extend_from_slice(VOCAB[usize::from(w % 16)]);
        if w >= 128 {
            text.push(b' ');
        }
    }
    text.extend_from_slice(&x.raw);
    let config = StreamConfig::default();

    let mut whole = StreamGuard::new(&config);
    whole.push_text(&text);
    let a = whole.finish_text();
    check(&whole);

    let mut cut = StreamGuard::new(&config);
    let (mut at, mut k) = (0, 0);
    while at < text.len() && cut.verdict().action != Action::Halt {
        let n = (usize::from(*x.cuts.get(k % x.cuts.len().max(1)).unwrap_or(&7)) % 64 + 1)
            .min(text.len() - at);
        cut.push_text(&text[at..at + n]);
        check(&cut);
        at += n;
        k += 1;
    }
    let b = cut.finish_text();
    assert_eq!(
        (a.action, a.kind, a.period, a.onset, a.onset_byte),
        (b.action, b.kind, b.period, b.onset, b.onset_byte),
        "chunking changed the verdict"
    );

    // The same bytes as token pieces, cut the same way, with ids from the bytes.
    let mut pieces = StreamGuard::new(&config);
    let (mut at, mut k) = (0, 0);
    while at < text.len() {
        let n = (usize::from(*x.cuts.get(k % x.cuts.len().max(1)).unwrap_or(&7)) % 16 + 1)
            .min(text.len() - at);
        let piece = &text[at..at + n];
        let id = piece.iter().fold(0u32, |h, &b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
        let v = pieces.push_token(id, Some(piece));
        assert_eq!(v.at as usize, k);
        check(&pieces);
        if v.action == Action::Halt {
            break;
        }
        at += n;
        k += 1;
    }
});
