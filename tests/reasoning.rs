//! Reasoning loops: a loop inside `<think>…</think>` ends the thinking, not the sequence.

use loopguard::{Action, StreamConfig, StreamGuard, StreamSettings};

mod common;

fn config(start: &str, end: &str) -> StreamConfig {
    let s = StreamSettings {
        reasoning_start: start.into(),
        reasoning_end: end.into(),
        ..StreamSettings::default()
    };
    StreamConfig::new(&s).unwrap()
}

const THOUGHT: [&str; 9] = [
    " Wait", ",", " let", " me", " check", " the", " sum", " again", ".",
];

/// Pushes the looping thought until the action is not `Continue`/`Warn`; returns the index
/// and the action.
fn loop_thinking(g: &mut StreamGuard) -> (usize, Action) {
    for i in 0..500 {
        let a = g.push_token(
            100 + (i % THOUGHT.len()) as u32,
            Some(THOUGHT[i % 9].as_bytes()),
        );
        if a.action > Action::Warn {
            return (i, a.action);
        }
    }
    panic!("the thought loop never stopped");
}

#[test]
fn a_loop_in_the_thinking_ends_the_thinking_then_the_answer_is_watched() {
    let mut plain = StreamGuard::new(&StreamConfig::default());
    let (halt_at, action) = loop_thinking(&mut plain);
    assert_eq!(action, Action::Halt);

    // The template opened the thinking: no start marker, the stream begins inside.
    let mut g = StreamGuard::new(&config("", "</think>"));
    assert!(g.in_reasoning());
    let (at, action) = loop_thinking(&mut g);
    assert_eq!(
        (at, action),
        (halt_at, Action::EndReasoning),
        "where the halt would be"
    );
    let v = g.verdict();
    assert_eq!(
        (v.kind, v.period),
        (plain.verdict().kind, plain.verdict().period)
    );
    assert_eq!(g.stats().halted_at, None, "not a halt");
    assert_eq!(g.reasoning_end(), b"</think>");
    let mut d = String::new();
    g.describe(loopguard::Verbosity::Summary, &mut d).unwrap();
    assert!(d.starts_with("Reasoning to end at symbol"), "{d}");
    // Until the marker comes every push answers the same, reading nothing.
    let symbols = g.stats().symbols;
    assert_eq!(
        g.push_token(101, Some(b" Wait")).action,
        Action::EndReasoning
    );
    assert_eq!(g.push_token(5, None).action, Action::EndReasoning);
    assert_eq!(g.stats().symbols, symbols);
    // The host forces the marker, split across tokens as a tokenizer would.
    assert_eq!(g.push_token(7, Some(b"</")).action, Action::EndReasoning);
    assert_eq!(g.push_token(8, Some(b"think")).action, Action::EndReasoning);
    assert_eq!(g.push_token(9, Some(b">")).action, Action::Continue);
    assert!(!g.in_reasoning());
    // The answer is read afresh: its words are new, so it goes on...
    let answer = " The sum of the three numbers is 42, because 10 plus 12 plus 20 makes 42.";
    for (i, w) in answer.split_inclusive(' ').enumerate() {
        assert_eq!(
            g.push_token(1000 + i as u32, Some(w.as_bytes())).action,
            Action::Continue
        );
    }
    // ...and a loop in the answer halts as usual: no section is open any more.
    let (_, action) = loop_thinking(&mut g);
    assert_eq!(action, Action::Halt);
    assert!(g.stats().halted_at.is_some());
}

#[test]
fn with_a_start_marker_only_the_section_is_reasoning() {
    let c = config("<think>", "</think>");
    // Before any <think>: a loop halts.
    let mut g = StreamGuard::new(&c);
    assert!(!g.in_reasoning());
    assert_eq!(loop_thinking(&mut g).1, Action::Halt);
    // Inside one: it ends the section.
    let mut g = StreamGuard::new(&c);
    g.push_token(1, Some(b"<thi"));
    g.push_token(2, Some(b"nk>\n"));
    assert!(g.in_reasoning());
    assert_eq!(loop_thinking(&mut g).1, Action::EndReasoning);
    // A reset starts outside again.
    g.reset();
    assert!(!g.in_reasoning());
    assert_eq!(g.verdict().action, Action::Continue);
}

#[test]
fn text_streams_end_the_reasoning_too() {
    let mut g = StreamGuard::new(&config("<think>", "</think>"));
    let thought = "<think>\nLet me think about this. ".to_string()
        + &"I need to check the sum again and again. ".repeat(30);
    let mut got = Action::Continue;
    for chunk in thought.as_bytes().chunks(5) {
        got = g.push_text(chunk).action;
        if got > Action::Warn {
            break;
        }
    }
    assert_eq!(got, Action::EndReasoning);
    assert_eq!(g.finish_text().action, Action::EndReasoning);
    assert_eq!(
        g.push_text(b"more of the same ").action,
        Action::EndReasoning
    );
    assert_eq!(
        g.push_text(b"</think>\n\nThe answer").action,
        Action::Continue
    );
    assert_eq!(
        g.push_text(b" is 42, as the sums show.\n").action,
        Action::Continue
    );
}

#[test]
fn ids_alone_cannot_see_a_marker_so_a_halt_stays_a_halt() {
    let mut g = StreamGuard::new(&config("", "</think>"));
    let mut got = Action::Continue;
    for i in 0..200u32 {
        got = g.push_token(i % 9, None).action;
        if got > Action::Warn {
            break;
        }
    }
    assert_eq!(got, Action::Halt);
}

#[test]
fn markers_are_validated() {
    let mut s = StreamSettings {
        reasoning_start: "<think>".into(),
        ..StreamSettings::default()
    };
    let e = StreamConfig::new(&s).unwrap_err();
    assert_eq!(e.field, "reasoning_end");
    s.reasoning_end = "x".repeat(65);
    let e = StreamConfig::new(&s).unwrap_err();
    assert_eq!(e.field, "reasoning_end");
    assert!(e.to_string().contains("1..=64 bytes"), "{e}");
    s.set("reasoning_end", "</think>").unwrap();
    assert!(StreamConfig::new(&s).is_ok());
}

/// The real generations of the bundled sample, read as if they were a model's thinking: every
/// one that halts without markers ends its reasoning at the same token with markers, and none
/// that runs clean changes.
#[test]
fn on_real_generations_every_halt_becomes_an_end_of_reasoning() {
    let with = config("", "</think>");
    let without = StreamConfig::default();
    let mut ends = 0;
    for rec in common::load("smollm2-sample.jsonl") {
        let mut a = StreamGuard::new(&without);
        let mut b = StreamGuard::new(&with);
        for (&id, piece) in rec.ids.iter().zip(&rec.pieces) {
            let (x, y) = (a.push_token(id, Some(piece)), b.push_token(id, Some(piece)));
            if x.action == Action::Halt {
                assert_eq!(y.action, Action::EndReasoning, "{}", rec.id);
                assert_eq!((x.at, x.period, x.kind), (y.at, y.period, y.kind));
                ends += 1;
                break;
            }
            assert_eq!(x, y, "{}", rec.id);
        }
    }
    assert_eq!(ends, 22);
}

/// Found in review: the markers of a whole chunk were read before its text, so a loop and the
/// `</think>` after it in one chunk halted, while the same text in small chunks ended the
/// reasoning. Now each stretch is read as it stands: the cut does not matter.
#[test]
fn where_the_chunks_are_cut_does_not_matter() {
    let c = config("<think>", "</think>");
    let text = "<think>\nLet me see. ".to_string()
        + &"I will check the sum again. ".repeat(12)
        + "</think>\n\nThe answer is 42, since the sums agree.\n"
        + &"<think> and again and again and again ".repeat(6)
        + "</think> Done.";
    let run = |cut: usize| {
        let mut g = StreamGuard::new(&c);
        let mut ended = false;
        for chunk in text.as_bytes().chunks(cut) {
            ended |= g.push_text(chunk).action == Action::EndReasoning;
        }
        g.finish_text();
        let mut d = String::new();
        g.describe(loopguard::Verbosity::Full, &mut d).unwrap();
        (g.verdict().action, g.stats(), d, ended || cut == text.len())
    };
    let whole = run(text.len());
    assert_ne!(whole.0, Action::Halt, "the loop was in the reasoning");
    for cut in [1, 2, 3, 5, 7, 16, 64] {
        let part = run(cut);
        assert_eq!(
            (part.0, part.1, &part.2),
            (whole.0, whole.1, &whole.2),
            "cut {cut}"
        );
        assert!(
            part.3,
            "cut {cut}: the guard asked to end the reasoning on the way"
        );
    }
}
