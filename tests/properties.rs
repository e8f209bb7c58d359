//! Property tests against brute-force references: the naive tail scan is the oracle for the
//! fast detectors.

use loopguard::{Action, LoopKind, StreamConfig, StreamGuard, StreamSettings, Unit};
use proptest::prelude::*;

/// vLLM's check on the whole output so far: is the tail `count` copies of a block of length
/// `p` for some `p` in `min..=max`?
fn vllm_check(t: &[u32], min: usize, max: usize, count: usize) -> bool {
    (min.max(1)..=max).any(|p| {
        p * count <= t.len()
            && (1..count).all(|m| t[t.len() - p * (m + 1)..t.len() - p * m] == t[t.len() - p..])
    })
}

/// The first index at which `vllm_check` holds.
fn vllm_first(t: &[u32], min: usize, max: usize, count: usize) -> Option<usize> {
    (0..t.len()).find(|&i| vllm_check(&t[..=i], min, max, count))
}

/// The balanced preset's exact-loop rule, by brute force: the first index where the tail is
/// back-to-back copies of a block of length `p <= max_period`, at least `copies` of them and
/// at least `span` symbols long.
fn exact_first(t: &[u32], s: &StreamSettings) -> Option<usize> {
    (0..t.len()).find(|&i| {
        (s.min_period as usize..=s.max_period as usize).any(|p| {
            let mut run = 0;
            while run + p <= i && t[i - run] == t[i - run - p] {
                run += 1;
            }
            let span = run + p;
            run >= (s.halt_copies as usize - 1) * p && span >= s.halt_span as usize
        })
    })
}

/// The longest character run ending at each byte, by brute force: for byte periods 1..=4, how
/// many bytes in a row equal the byte `p` before them (at least `p`: two whole copies), plus
/// `p`. Returns the longest span and the shortest period that reaches it.
fn char_runs(t: &[u8]) -> Vec<(usize, usize)> {
    (0..t.len())
        .map(|e| {
            (1..=4)
                .map(|p| {
                    let mut run = 0;
                    while run + p <= e && t[e - run] == t[e - run - p] {
                        run += 1;
                    }
                    // A run holds at least two whole copies of its unit.
                    if run >= p {
                        (run + p, p)
                    } else {
                        (0, 0)
                    }
                })
                .fold(
                    (0, 0),
                    |best, (span, p)| if span > best.0 { (span, p) } else { best },
                )
        })
        .collect()
}

fn first_halt(guard: &mut StreamGuard, t: &[u32]) -> Option<(usize, loopguard::Verdict)> {
    guard.reset();
    t.iter().enumerate().find_map(|(i, &id)| {
        Some((i, guard.push_token(id, None))).filter(|(_, v)| v.action == Action::Halt)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Streams drawn from a large alphabet hold no loop: the default guard never halts on them.
    #[test]
    fn random_streams_never_halt(t in prop::collection::vec(0u32..1_000_000, 0..3000)) {
        let mut guard = StreamGuard::new(&StreamConfig::default());
        prop_assert!(first_halt(&mut guard, &t).is_none());
    }

    /// Whatever the stream (small alphabets make many accidental repeats), every halt the
    /// default guard makes on ids is a real loop: the symbols from the onset to the halt are
    /// back-to-back copies of the reported period, as many as the settings ask for.
    #[test]
    fn every_halt_is_a_real_loop(
        alphabet in 1u32..6,
        t in prop::collection::vec(0u32..6, 0..1500),
    ) {
        let t: Vec<u32> = t.into_iter().map(|x| x % alphabet).collect();
        let settings = StreamSettings::default();
        let mut guard = StreamGuard::new(&StreamConfig::new(&settings).unwrap());
        if let Some((i, v)) = first_halt(&mut guard, &t) {
            prop_assert!(matches!(v.kind, LoopKind::ExactLoop | LoopKind::LongRepeat), "{v:?}");
            prop_assert_eq!(v.unit, Unit::Symbol);
            let (p, onset) = (v.period as usize, v.onset as usize);
            prop_assert_eq!(v.at as usize, i);
            prop_assert!((onset + p..=i).all(|j| t[j] == t[j - p]), "not periodic: {:?}", v);
            let span = i + 1 - onset;
            prop_assert_eq!(span, v.span as usize);
            prop_assert!(span >= settings.halt_copies as usize * p && span >= settings.halt_span as usize);
            // Never earlier than the brute-force rule allows. (It may be later, or never, for
            // a block with no n-gram of its own, which only the dense pass finds.)
            prop_assert!(exact_first(&t, &settings).is_some_and(|first| first <= i));
        }
    }

    /// A loop of any period up to 256 injected after a random prefix halts on exactly the token
    /// where the brute-force tail scan first sees enough copies and span. Blocks use their own
    /// symbols (every n-gram in them occurs once per copy), the case periods beyond the dense
    /// range are guaranteed for.
    #[test]
    fn injected_loops_halt_on_time(
        prefix in prop::collection::vec(0u32..1_000_000, 0..400),
        period in 1usize..=256,
        salt in any::<u32>(),
    ) {
        let block: Vec<u32> = (0..period as u32).map(|k| 2_000_000 + (k ^ salt) % 1_000_000_000).collect();
        let mut t = prefix.clone();
        let copies = (3usize).max(40usize.div_ceil(period)) + 2;
        for _ in 0..copies {
            t.extend_from_slice(&block);
        }
        let settings = StreamSettings::default();
        let mut guard = StreamGuard::new(&StreamConfig::new(&settings).unwrap());
        let expected = exact_first(&t, &settings);
        prop_assert!(expected.is_some());
        let got = first_halt(&mut guard, &t);
        prop_assert_eq!(got.map(|(i, _)| i), expected);
        let v = got.unwrap().1;
        prop_assert_eq!(v.onset as usize, prefix.len());
        prop_assert_eq!(v.period as usize, period);
    }

    /// The vLLM-compatible preset halts on exactly the token where vLLM's repetition check
    /// first returns true, for any parameters, on streams full of accidental repeats.
    #[test]
    fn vllm_compatible_matches_the_tail_scan(
        min in 0u32..8,
        extra in 0u32..40,
        count in 2u32..6,
        alphabet in 1u32..4,
        t in prop::collection::vec(0u32..4, 0..400),
    ) {
        let max = min.max(1) + extra;
        let t: Vec<u32> = t.into_iter().map(|x| x % alphabet).collect();
        let config = StreamConfig::new(&StreamSettings::vllm_compatible(min, max, count)).unwrap();
        let mut guard = StreamGuard::new(&config);
        let got = first_halt(&mut guard, &t).map(|(i, _)| i);
        prop_assert_eq!(got, vllm_first(&t, min as usize, max as usize, count as usize));
    }

    /// Text may be cut anywhere: the verdict does not depend on the chunking.
    #[test]
    fn text_chunking_does_not_matter(
        words in prop::collection::vec(0usize..16, 0..400),
        cuts in prop::collection::vec(1usize..40, 1..50),
    ) {
        // Indentation and code come and go, so that a chunk may run from prose into an
        // indented block: thresholds follow the word, not the chunk.
        const VOCAB: [&str; 16] = ["the", "cat", "sat", "on", "mat", "\n", "and", "then", "ran", "!!", "- item", "ありがとう", "\n    ", "x = 1;", "{", "}"];
        let text: String = words.iter().map(|&w| VOCAB[w]).collect::<Vec<_>>().join(" ");
        let config = StreamConfig::default();
        let mut whole = StreamGuard::new(&config);
        whole.push_text(text.as_bytes());
        let a = whole.finish_text();
        let mut cut = StreamGuard::new(&config);
        let bytes = text.as_bytes();
        let mut at = 0;
        let mut k = 0;
        while at < bytes.len() && cut.verdict().action != Action::Halt {
            let n = cuts[k % cuts.len()].min(bytes.len() - at);
            cut.push_text(&bytes[at..at + n]);
            at += n;
            k += 1;
        }
        let b = cut.finish_text();
        prop_assert_eq!((a.action, a.kind, a.period, a.onset, a.onset_byte), (b.action, b.kind, b.period, b.onset, b.onset_byte));
        prop_assert_eq!(whole.stats().halted_at, cut.stats().halted_at);
    }

    /// Token pieces may cut the text anywhere: the text detectors (character runs, repeated
    /// lines) halt in the piece that holds the byte where one-byte pieces halt. The ids are
    /// all distinct, so only the text can halt.
    #[test]
    fn piece_cuts_do_not_matter(
        words in prop::collection::vec(0usize..10, 0..300),
        cuts in prop::collection::vec(1usize..12, 1..40),
        warn in 4u32..30,
    ) {
        const VOCAB: [&str; 10] = ["the", "cat", "\n", "!!!!!!!!", "sat on the mat\n", "aaaa", "ありがとう", "ha", "- item\n", "  "];
        let text: String = words.iter().map(|&w| VOCAB[w]).collect::<Vec<_>>().join(" ");
        let bytes = text.as_bytes();
        let mut s = StreamSettings::default();
        (s.char_run_warn, s.char_run_halt) = (warn, 2 * warn);
        let config = StreamConfig::new(&s).unwrap();
        let mut one = StreamGuard::new(&config);
        let halt_byte = bytes.iter().enumerate().position(|(i, b)| {
            one.push_token(i as u32, Some(std::slice::from_ref(b))).action == Action::Halt
        });
        let mut cut = StreamGuard::new(&config);
        let (mut at, mut k, mut halt_piece) = (0, 0, None);
        while at < bytes.len() {
            let n = cuts[k % cuts.len()].min(bytes.len() - at);
            if cut.push_token(k as u32, Some(&bytes[at..at + n])).action == Action::Halt {
                halt_piece = Some(at..at + n);
                break;
            }
            at += n;
            k += 1;
        }
        match (halt_byte, halt_piece) {
            (Some(b), Some(piece)) => prop_assert!(piece.contains(&b), "byte {} outside {:?}", b, piece),
            (a, b) => prop_assert!(a.is_none() && b.is_none(), "one-byte pieces {:?}, cut pieces {:?}", a, b),
        }
        if halt_byte.is_none() {
            prop_assert_eq!(one.stats().bytes, cut.stats().bytes);
        }
    }

    /// Character runs, counted on a lane per byte period, warn and halt on the byte where
    /// the brute-force run first reaches the threshold, with its span and period.
    #[test]
    fn character_runs_match_the_brute_force(
        parts in prop::collection::vec((prop::collection::vec(0u8..3, 1..=4), 1usize..40), 0..120),
        warn in 4u32..60,
        extra in 0u32..200,
    ) {
        // Letters only: no separator runs, no words of their own (ids are all distinct, so
        // the symbol detectors never fire).
        let text: Vec<u8> = parts
            .iter()
            .flat_map(|(unit, n)| unit.iter().map(|&c| b'a' + c).cycle().take(unit.len() * n))
            .collect();
        let halt = warn + extra;
        let mut s = StreamSettings::default();
        (s.char_run_warn, s.char_run_halt) = (warn, halt);
        let mut guard = StreamGuard::new(&StreamConfig::new(&s).unwrap());
        let runs = char_runs(&text);
        let want_warn = runs.iter().position(|&(n, _)| n >= warn as usize);
        let want_halt = runs.iter().position(|&(n, _)| n >= halt as usize);
        let mut got_warn = None;
        for (i, b) in text.iter().enumerate() {
            let v = guard.push_token(i as u32, Some(std::slice::from_ref(b)));
            if v.action > Action::Continue {
                prop_assert_eq!(v.kind, LoopKind::CharRun);
                prop_assert_eq!((v.span as usize, v.period as usize), runs[i]);
                got_warn.get_or_insert(i);
            }
            if v.action == Action::Halt {
                prop_assert_eq!(Some(i), want_halt);
                break;
            }
        }
        prop_assert_eq!(got_warn, want_warn);
        if want_halt.is_none() {
            prop_assert!(guard.verdict().action != Action::Halt);
        }
    }

    /// A guard reset after any stream answers exactly as a new one, with and without pieces,
    /// even when the new stream is made of pieces of the old one, and when only some of its
    /// tokens carry a piece (`every`: 0 none, 1 all, k one in k, the first without).
    #[test]
    fn a_reset_guard_answers_as_a_new_one(
        before in prop::collection::vec(0u32..1000, 300..800),
        cuts in prop::collection::vec((0usize..300, 8usize..40), 10..40),
        every in 0usize..5,
    ) {
        let after: Vec<u32> = cuts
            .iter()
            .flat_map(|&(at, len)| before[at..(at + len).min(before.len())].iter().copied())
            .collect();
        let config = StreamConfig::default();
        let word = |id: u32| if id % 2 == 0 { &b" w"[..] } else { &b" x"[..] };
        let text = |i: usize, id: u32| (every > 0 && (i + 1) % every == 0).then(|| word(id));
        let mut used = StreamGuard::new(&config);
        for &id in &before {
            used.push_token(id, Some(word(id)));
        }
        used.reset();
        let mut fresh = StreamGuard::new(&config);
        for (i, &id) in after.iter().enumerate() {
            prop_assert_eq!(used.push_token(id, text(i, id)), fresh.push_token(id, text(i, id)));
        }
        prop_assert_eq!(used.stats(), fresh.stats());
    }

    /// A clone carries on exactly as the original would.
    #[test]
    fn a_clone_continues_identically(
        prefix in prop::collection::vec(0u32..20, 0..300),
        suffix in prop::collection::vec(0u32..20, 0..300),
    ) {
        let mut a = StreamGuard::new(&StreamConfig::default());
        for &id in &prefix {
            a.push_token(id, Some(b" w"));
        }
        let mut b = a.clone();
        for &id in &suffix {
            prop_assert_eq!(a.push_token(id, Some(b" w")), b.push_token(id, Some(b" w")));
        }
        prop_assert_eq!(a.stats(), b.stats());
    }
}

/// Found by the `text_chunks` fuzz target: a whole text and the same text one byte at a time
/// once halted on different words, because the structure slack was taken where the chunk
/// began, not where each word was read (a chunk ran from prose into indented lines).
#[test]
fn thresholds_follow_the_word_not_the_chunk() {
    const VOCAB: [&[u8]; 16] = [
        b"the",
        b"cat",
        b"sat",
        b"\n",
        b"and",
        b"- item",
        b"\xe3\x81\x82",
        b"!!",
        b"    ",
        b"{",
        b"}",
        b"x = 1;",
        b"\xff",
        b"\t",
        b"##",
        b"2",
    ];
    let words: Vec<u8> = [
        &[
            219u8, 219, 219, 7, 251, 219, 251, 219, 155, 219, 219, 219, 219, 7, 251, 255, 93,
        ][..],
        &[255; 31],
        &[187; 49],
        &[
            255, 155, 219, 219, 219, 177, 3, 219, 125, 193, 193, 235, 235, 235, 255, 255,
        ],
        &[
            235, 235, 235, 235, 235, 255, 235, 235, 235, 235, 235, 235, 235, 255, 1, 83, 93,
        ],
        &[
            255, 235, 235, 235, 235, 93, 235, 235, 235, 235, 235, 193, 179, 223, 219,
        ],
    ]
    .concat();
    let mut text = Vec::new();
    for &w in &words {
        text.extend_from_slice(VOCAB[usize::from(w % 16)]);
        if w >= 128 {
            text.push(b' ');
        }
    }
    let config = StreamConfig::default();
    let mut whole = StreamGuard::new(&config);
    whole.push_text(&text);
    let a = whole.finish_text();
    let mut bytes = StreamGuard::new(&config);
    for b in text.chunks(1) {
        if bytes.push_text(b).action == Action::Halt {
            break;
        }
    }
    let b = bytes.finish_text();
    assert_eq!(a, b);
}
