//! Table tests: what each preset does with the texts users care about, fed as tokens with
//! pieces and as text alone.

use loopguard::{Action, LoopKind, Preset, StreamConfig, StreamGuard, StreamSettings, Verdict};

mod common;

const PRESETS: [Preset; 3] = [Preset::Strict, Preset::Balanced, Preset::Lenient];

fn repeat(s: &str, n: usize) -> String {
    s.repeat(n)
}

/// Runs `text` both ways through a guard built from `settings`.
fn run(settings: &StreamSettings, text: &str) -> [Option<Verdict>; 2] {
    let config = StreamConfig::new(settings).unwrap();
    let mut g = StreamGuard::new(&config);
    let tokens = common::feed_tokenized(&mut g, text);
    g.reset();
    let plain = common::feed_text(&mut g, text.as_bytes(), 13);
    [tokens, plain]
}

fn poem() -> String {
    let verses = [
        "The tide comes in across the sand,\nit carries shells from distant land.",
        "A gull cries out above the foam,\nthe fishing boats are coming home.",
        "The lighthouse turns its patient eye,\non sailors passing slowly by.",
        "The evening settles, blue and deep,\nthe harbour falls at last asleep.",
    ];
    let refrain = "And the sea, the sea, keeps singing to me,\nthe sea, the sea, forever free.";
    verses
        .iter()
        .map(|v| format!("{v}\n{refrain}\n\n"))
        .collect()
}

fn table() -> String {
    let mut t =
        String::from("| year | revenue | cost | margin |\n|------|---------|------|--------|\n");
    for y in 0..24 {
        t += &format!(
            "| {} | {}.{} | {}.{} | {}% |\n",
            2000 + y,
            100 + 7 * y,
            y % 10,
            60 + 3 * y,
            (y * 3) % 10,
            12 + y % 5
        );
    }
    t
}

fn code() -> String {
    let mut c = String::from("```python\nimport math\n\nCONSTANTS = {\n");
    for i in 0..40 {
        c += &format!("    'KEY_F{i}': 'kf{i}',\n");
    }
    c += "}\n\ndef area(r):\n    return math.pi * r * r\n```\n";
    c
}

fn list() -> String {
    let items = [
        "Preheat the oven to 200 degrees.",
        "Slice the onions and peppers thinly.",
        "Brown the garlic in olive oil.",
        "Add the tomatoes and simmer for ten minutes.",
        "Season with salt, pepper and fresh basil.",
        "Layer the pasta sheets with the sauce.",
        "Spread ricotta over each layer.",
        "Top with grated mozzarella and parmesan.",
        "Bake for forty minutes until golden.",
        "Let it rest before slicing.",
        "Serve with a green salad.",
        "Store leftovers in the fridge.",
    ];
    items
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{}. {s}\n", i + 1))
        .collect()
}

fn rules() -> String {
    format!(
        "Title\n{}\n\nText under the rule.\n{}\n",
        "━".repeat(80),
        "-".repeat(120)
    )
}

/// `lines` distinct lines of prose-like words, drawn by a fixed generator: no 4-gram of words
/// recurs inside the block, so the block alone is not a near loop (a template line with a
/// counter would be one).
fn block_of_lines(lines: usize) -> String {
    const WORDS: [&str; 48] = [
        "river", "amber", "quiet", "station", "paper", "lantern", "orbit", "meadow", "copper",
        "winter", "signal", "harbor", "velvet", "engine", "garden", "pencil", "thunder", "island",
        "mirror", "basket", "canyon", "feather", "marble", "violet", "anchor", "blanket", "cider",
        "desert", "ember", "falcon", "glacier", "hollow", "ivory", "jasmine", "kettle", "ladder",
        "mosaic", "nectar", "oyster", "pepper", "quarry", "ribbon", "saddle", "timber", "umbrella",
        "walnut", "yonder", "zephyr",
    ];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || WORDS[(common::xorshift(&mut state) % WORDS.len() as u64) as usize];
    (0..lines)
        .map(|_| {
            let words: Vec<&str> = (0..9).map(|_| next()).collect();
            format!("{}.\n", words.join(" "))
        })
        .collect()
}

#[test]
fn normal_text_never_halts_in_any_preset() {
    let cases = [
        ("poem with refrain", poem()),
        ("table", table()),
        ("code", code()),
        ("numbered list", list()),
        ("rules", rules()),
    ];
    for preset in PRESETS {
        for (name, text) in &cases {
            for (way, v) in ["tokens", "text"]
                .iter()
                .zip(run(&StreamSettings::preset(preset), text))
            {
                assert!(v.is_none(), "{preset:?} halted {name} as {way}: {v:?}");
            }
        }
    }
}

#[test]
fn loops_halt_in_every_preset() {
    let cases: [(&str, String, &[LoopKind]); 5] = [
        (
            "word stutter",
            repeat("the ", 120),
            &[LoopKind::WordStutter, LoopKind::CharRun],
        ),
        (
            "exclamation run",
            repeat("!", 400),
            &[
                LoopKind::CharRun,
                LoopKind::ExactLoop,
                LoopKind::WordStutter,
            ],
        ),
        (
            "sentence loop",
            repeat("The cat sat on the mat and looked at the door. ", 12),
            &[LoopKind::ExactLoop, LoopKind::NearLoop],
        ),
        (
            "line loop",
            repeat("- Remove the tire from the frame carefully.\n", 16),
            &[
                LoopKind::ExactLoop,
                LoopKind::RepeatedLines,
                LoopKind::NearLoop,
            ],
        ),
        (
            "multi-line block",
            repeat(&block_of_lines(9), 6),
            &[
                LoopKind::ExactLoop,
                LoopKind::RepeatedLines,
                LoopKind::NearLoop,
            ],
        ),
    ];
    for preset in PRESETS {
        for (name, text, kinds) in &cases {
            for (way, v) in ["tokens", "text"]
                .iter()
                .zip(run(&StreamSettings::preset(preset), text))
            {
                let v = v.unwrap_or_else(|| panic!("{preset:?} did not halt {name} as {way}"));
                assert!(kinds.contains(&v.kind), "{preset:?} {name} as {way}: {v:?}");
                assert!(v.confidence > 0.5, "{v:?}");
            }
        }
    }
}

/// The issue users cite: a 92-line block repeated 32 times. It halts within three copies.
#[test]
fn a_long_block_repeated_halts_within_three_copies() {
    let block = block_of_lines(92);
    let text = repeat(&block, 32);
    let tokens = common::tokenize(&text);
    let per_copy = common::tokenize(&block).len();
    let config = StreamConfig::default();
    let mut g = StreamGuard::new(&config);
    let halt = common::feed_tokenized(&mut g, &text).expect("halts");
    assert!(
        halt.at < 3 * per_copy as u64,
        "halted at {} of copies of {per_copy}",
        halt.at
    );
    assert!(
        matches!(
            halt.kind,
            LoopKind::LongRepeat | LoopKind::ExactLoop | LoopKind::RepeatedLines
        ),
        "{halt:?}"
    );
    let saved = tokens.len() as f64 - halt.at as f64;
    assert!(
        saved / tokens.len() as f64 > 0.9,
        "saves {saved} of {}",
        tokens.len()
    );
}

/// A block quoted once again from far back is how people write: it never halts, and it warns
/// only with the strict preset, whose warnings come as early as they can.
#[test]
fn a_block_that_recurs_once_far_back_does_not_halt_and_warns_only_when_strict() {
    let block = block_of_lines(40);
    let text = format!("{block}{}{block}", list());
    for (preset, warns) in [
        (Preset::Balanced, false),
        (Preset::Lenient, false),
        (Preset::Strict, true),
    ] {
        let config = StreamConfig::new(&StreamSettings::preset(preset)).unwrap();
        let mut g = StreamGuard::new(&config);
        let mut warned = false;
        for (id, piece) in common::tokenize(&text) {
            let v = g.push_token(id, Some(&piece));
            assert_ne!(v.action, Action::Halt, "{preset:?}: {v:?}");
            warned |= v.action == Action::Warn && v.kind == LoopKind::LongRepeat;
        }
        assert_eq!(warned, warns, "{preset:?}");
    }
}

#[test]
fn asked_for_repetition_is_exempt() {
    let text = repeat("I will not talk in class. ", 30);
    let mut settings = StreamSettings::default();
    assert!(run(&settings, &text).iter().all(Option::is_some));
    settings.exempt.push("I will not talk in class".into());
    for (way, v) in ["tokens", "text"].iter().zip(run(&settings, &text)) {
        assert!(v.is_none(), "{way}: {v:?}");
    }
}

#[test]
fn a_breaker_resets_detection() {
    // Every copy holds the breaker, so with it configured detection starts afresh each time
    // and the loop is never seen: breakers trade recall for silence, the choice is the user's.
    let text = repeat("Check the result of the last step again. <|step|> ", 12);
    let mut settings = StreamSettings::default();
    assert!(run(&settings, &text).iter().all(Option::is_some));
    settings.breakers.push("<|step|>".into());
    for (way, v) in ["tokens", "text"].iter().zip(run(&settings, &text)) {
        assert!(v.is_none(), "{way}: {v:?}");
    }
}

#[test]
fn warnings_come_before_halts() {
    let text = repeat("The same sentence comes back again and again here. ", 10);
    let config = StreamConfig::default();
    let mut g = StreamGuard::new(&config);
    let mut first_warn = None;
    let mut halt = None;
    for (i, (id, piece)) in common::tokenize(&text).into_iter().enumerate() {
        let v = g.push_token(id, Some(&piece));
        if v.action == Action::Warn && first_warn.is_none() {
            first_warn = Some(i);
        }
        if v.action == Action::Halt {
            halt = Some(v);
            break;
        }
    }
    let (warn, halt) = (first_warn.expect("warns"), halt.expect("halts"));
    assert!(warn < halt.at as usize);
    assert_eq!(g.stats().first_warn_at, Some(warn as u64));
    assert_eq!(g.stats().halted_at, Some(halt.at));
    // The evidence: the repeated sentence, its period in tokens, and where it began. The first
    // copy starts with "The" and the others with " The", so the loop begins at token 1.
    assert_eq!(halt.period, 9);
    assert_eq!(halt.onset, 1);
    assert_eq!(halt.onset_byte, Some(3));
    let evidence = String::from_utf8_lossy(g.repeated_text()).into_owned();
    assert_eq!(
        evidence.len(),
        "The same sentence comes back again and again here. ".len()
    );
    assert!(
        evidence.contains("sentence comes back again"),
        "{evidence:?}"
    );
    // A halt is sticky until reset.
    assert_eq!(g.push_token(1, Some(b"new")).action, Action::Halt);
    g.reset();
    assert_eq!(g.push_token(1, Some(b"new")).action, Action::Continue);
}

#[test]
fn escalation_turns_persistent_warnings_into_a_halt() {
    // Sentences drawn from a tiny vocabulary in a pseudo-random order: most 4-grams recur (a
    // near loop that warns) but the tail is never back-to-back copies (no exact halt).
    let mut x = 12345u32;
    let text: String = (0..300)
        .map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let a = ["red", "blue", "green"][(x >> 16) as usize % 3];
            let b = ["big", "small"][(x >> 20) as usize % 2];
            format!("The {a} box is {b}. ")
        })
        .collect();
    let mut settings = StreamSettings {
        near_warn: 0.3,
        near_halt: 0.0,
        ..StreamSettings::default()
    };
    assert!(
        run(&settings, &text)[0].is_none(),
        "no halt without escalation"
    );
    settings.escalate_after = 64;
    let v = run(&settings, &text)[0].expect("halts once warnings persist");
    assert_eq!(v.kind, LoopKind::NearLoop);
}

/// A warning needs the copies a halt needs: at `balanced` a loop of one long sentence (its
/// three copies past the span a halt needs) halts at its third copy with no warning at its
/// second; `strict` still warns at the second. Asking for halts at two copies is
/// accepted with the default `warn_copies` (a warning needs at most the copies a halt needs).
#[test]
fn warnings_come_with_the_third_copy_and_follow_halt_copies_down() {
    let sentence = "The committee will review every single proposal again, carefully and in \
                    full, before the next meeting of the board of directors. ";
    let first_alarm = |settings: &StreamSettings| -> (Action, f32) {
        let config = StreamConfig::new(settings).unwrap();
        let mut g = StreamGuard::new(&config);
        for (id, piece) in common::tokenize(&repeat(sentence, 6)) {
            let v = g.push_token(id, Some(&piece));
            if v.action > Action::Continue {
                return (v.action, v.repeats);
            }
        }
        (Action::Continue, 0.0)
    };
    let (action, repeats) = first_alarm(&StreamSettings::default());
    assert_eq!(action, Action::Halt, "the first alarm is the halt");
    assert!((3.0..4.0).contains(&repeats), "{repeats}");
    let (action, repeats) = first_alarm(&StreamSettings::preset(Preset::Strict));
    assert_eq!(action, Action::Warn, "strict warns first");
    assert!(repeats < 3.0, "{repeats}");
    let two = StreamSettings {
        halt_copies: 2,
        ..StreamSettings::default()
    };
    let (action, repeats) = first_alarm(&two);
    assert_eq!(action, Action::Halt);
    assert!((2.0..3.0).contains(&repeats), "{repeats}");
}
