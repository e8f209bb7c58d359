//! Speculative decoding: a guard fed drafts and rolled back answers exactly as a guard fed only
//! the accepted tokens, whatever the interleaving of drafts, commits and rollbacks.

use loopguard::{
    Action, RollbackError, StreamConfig, StreamGuard, Verbosity, Verdict, DRAFT_BYTES, MAX_DRAFTS,
};
use proptest::prelude::*;

mod common;

/// One push, as a host makes it.
#[derive(Clone, Debug)]
enum Push {
    Token(u32, Option<Vec<u8>>),
    Text(Vec<u8>),
    Finish,
}

fn push(g: &mut StreamGuard, p: &Push) -> Verdict {
    match p {
        Push::Token(id, piece) => g.push_token(*id, piece.as_deref()),
        Push::Text(t) => g.push_text(t),
        Push::Finish => g.finish_text(),
    }
}

/// Everything a caller can read of a guard.
fn seen(g: &StreamGuard) -> (Verdict, String, Vec<u8>, loopguard::StreamStats) {
    let mut d = String::new();
    g.describe(Verbosity::Full, &mut d).unwrap();
    (g.verdict(), d, g.repeated_text().to_vec(), g.stats())
}

/// A guard fed only `accepted`.
fn reference(config: &StreamConfig, accepted: &[Push]) -> StreamGuard {
    let mut g = StreamGuard::new(config);
    for p in accepted {
        push(&mut g, p);
    }
    g
}

/// What the host does between pushes.
#[derive(Clone, Debug)]
enum Op {
    Push(Push),
    Checkpoint,
    Rollback(usize),
    Commit,
    Reset,
}

/// Runs `ops` on a guard and on a model of what it should hold (the accepted pushes and the
/// checkpoint's place among them), comparing the guard with a guard fed the accepted pushes
/// after every rollback and at the end.
fn check(config: &StreamConfig, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut g = StreamGuard::new(config);
    let mut accepted: Vec<Push> = Vec::new();
    let mut mark: Option<usize> = None;
    for op in ops {
        match op {
            Op::Push(p) => {
                push(&mut g, p);
                accepted.push(p.clone());
            }
            Op::Checkpoint => {
                g.checkpoint();
                mark = Some(accepted.len());
            }
            Op::Commit => {
                g.commit();
                mark = None;
            }
            Op::Reset => {
                g.reset();
                accepted.clear();
                mark = None;
            }
            Op::Rollback(n) => {
                let r = g.rollback(*n);
                match mark {
                    None => prop_assert_eq!(r, Err(RollbackError::NoCheckpoint)),
                    Some(m) if m + n > accepted.len() => prop_assert_eq!(
                        r,
                        Err(RollbackError::TooMany {
                            asked: *n,
                            drafted: accepted.len() - m,
                        })
                    ),
                    Some(_) => {
                        let held = accepted.len() - mark.unwrap() <= MAX_DRAFTS
                            && drafted_bytes(&accepted[mark.unwrap()..]) <= DRAFT_BYTES;
                        if held {
                            let v = r.expect("a rollback within the log");
                            accepted.truncate(accepted.len() - n);
                            prop_assert_eq!(v, g.verdict());
                            prop_assert_eq!(seen(&g), seen(&reference(config, &accepted)));
                        }
                    }
                }
            }
        }
        prop_assert_eq!(g.drafted(), mark.map(|m| accepted.len() - m));
    }
    prop_assert_eq!(seen(&g), seen(&reference(config, &accepted)));
    Ok(())
}

fn drafted_bytes(pushes: &[Push]) -> usize {
    pushes
        .iter()
        .map(|p| match p {
            Push::Token(_, piece) => piece.as_ref().map_or(0, Vec::len),
            Push::Text(t) => t.len(),
            Push::Finish => 0,
        })
        .sum()
}

/// Pushes from a small alphabet, so that loops (exact, near, lines, characters) form.
fn token_push() -> impl Strategy<Value = Push> {
    let pieces = prop::sample::select(vec![
        &b" the"[..],
        b" cat",
        b"\n",
        b"    x = 1;\n",
        b"aaaa",
        b"- item",
        b"",
        b"\xff",
    ]);
    (0u32..12, prop::option::of(pieces)).prop_map(|(id, p)| Push::Token(id, p.map(<[u8]>::to_vec)))
}

fn reasoning_push() -> impl Strategy<Value = Push> {
    prop_oneof![
        6 => token_push(),
        1 => prop::sample::select(vec![&b"<think>"[..], b"</", b"think>", b"<th", b"ink>"])
            .prop_map(|p| Push::Token(3, Some(p.to_vec()))),
    ]
}

fn text_push() -> impl Strategy<Value = Push> {
    prop_oneof![
        8 => prop::sample::select(vec!["the cat sat ", "on the mat.\n", "    fn f() {}\n", "ha", "!!!!"])
            .prop_map(|t| Push::Text(t.as_bytes().to_vec())),
        1 => Just(Push::Finish),
    ]
}

fn ops(pushes: BoxedStrategy<Push>) -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![
            20 => pushes.prop_map(Op::Push),
            3 => Just(Op::Checkpoint),
            3 => (0usize..8).prop_map(Op::Rollback),
            1 => Just(Op::Commit),
            1 => Just(Op::Reset),
        ],
        0..400,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Token streams, with and without pieces.
    #[test]
    fn rollbacks_answer_as_the_accepted_tokens(ops in ops(token_push().boxed())) {
        check(&StreamConfig::default(), &ops)?;
    }

    /// With reasoning markers, which pieces open and close, across drafts.
    #[test]
    fn rollbacks_answer_as_the_accepted_reasoning(ops in ops(reasoning_push().boxed())) {
        let settings = loopguard::StreamSettings {
            reasoning_start: "<think>".into(),
            reasoning_end: "</think>".into(),
            ..Default::default()
        };
        check(&StreamConfig::new(&settings).unwrap(), &ops)?;
    }

    /// Text streams in chunks, `finish_text` included.
    #[test]
    fn rollbacks_answer_as_the_accepted_text(ops in ops(text_push().boxed())) {
        check(&StreamConfig::default(), &ops)?;
    }
}

/// Speculative decoding as a server runs it, on real SmolLM2 generations (loops among them):
/// each step drafts four tokens, the first `accepted` of them the true continuation and the
/// rest wrong; the verifier takes the rejected ones back and the true token follows. After
/// every step the guard reads exactly as a guard fed the accepted text, and so halts with it.
#[test]
fn drafted_generations_halt_where_the_accepted_text_does() {
    let config = StreamConfig::default();
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut halts = 0;
    for rec in common::load("smollm2-sample.jsonl") {
        let truth: Vec<Push> = rec
            .ids
            .iter()
            .zip(&rec.pieces)
            .map(|(&id, p)| Push::Token(id, Some(p.clone())))
            .collect();
        let mut g = StreamGuard::new(&config);
        let mut plain = StreamGuard::new(&config);
        let mut at = 0;
        while at < truth.len() && g.verdict().action != Action::Halt {
            const K: usize = 4;
            let kept =
                ((common::xorshift(&mut rng) % (K as u64 + 1)) as usize).min(truth.len() - at);
            g.checkpoint();
            for j in 0..K {
                let wrong = Push::Token(7, Some(b" wrong".to_vec()));
                push(&mut g, if j < kept { &truth[at + j] } else { &wrong });
            }
            g.rollback(K - kept).unwrap();
            g.commit();
            for p in &truth[at..at + kept] {
                push(&mut plain, p);
            }
            at += kept;
            if at < truth.len() {
                push(&mut g, &truth[at]);
                push(&mut plain, &truth[at]);
                at += 1;
            }
            assert_eq!(seen(&g), seen(&plain), "{} at {at}", rec.id);
        }
        halts += usize::from(g.verdict().action == Action::Halt);
    }
    assert!(halts >= 10, "the sample holds loops: {halts} halted");
}

#[test]
fn rollback_errors_name_the_argument_and_leave_the_guard() {
    let mut g = StreamGuard::new(&StreamConfig::default());
    assert_eq!(g.rollback(0), Err(RollbackError::NoCheckpoint));
    g.push_token(1, Some(b" a"));
    g.checkpoint();
    g.push_token(2, Some(b" b"));
    let before = seen(&g);
    let e = g.rollback(2).unwrap_err();
    assert_eq!(
        e,
        RollbackError::TooMany {
            asked: 2,
            drafted: 1
        }
    );
    assert_eq!(
        e.to_string(),
        "n: 2 pushes asked back, 1 made since the checkpoint"
    );
    assert_eq!(seen(&g), before);
    // Past the log, the pushes that would stay are not all held.
    let big = vec![b'x'; DRAFT_BYTES];
    g.push_token(3, Some(&big));
    g.push_token(4, Some(b" c"));
    assert_eq!(
        g.rollback(1),
        Err(RollbackError::NotHeld { keep: 2, held: 1 })
    );
    // Taking back all that is not held still works.
    assert!(g.rollback(2).is_ok());
    assert_eq!(g.drafted(), Some(1));
    g.commit();
    assert_eq!(g.drafted(), None);
    assert_eq!(g.rollback(1), Err(RollbackError::NoCheckpoint));
}

#[test]
fn more_drafts_than_the_log_holds() {
    let config = StreamConfig::default();
    let mut g = StreamGuard::new(&config);
    g.checkpoint();
    for i in 0..(MAX_DRAFTS as u32 + 10) {
        g.push_token(i, None);
    }
    assert_eq!(
        g.rollback(5),
        Err(RollbackError::NotHeld {
            keep: MAX_DRAFTS + 5,
            held: MAX_DRAFTS
        })
    );
    g.rollback(10).unwrap();
    let accepted: Vec<Push> = (0..MAX_DRAFTS as u32)
        .map(|i| Push::Token(i, None))
        .collect();
    assert_eq!(seen(&g), seen(&reference(&config, &accepted)));
}
