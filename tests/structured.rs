//! Structured text, as people write it and as models loop in it: random "human-like" regular
//! structure (declaration lists with fresh names, numbered lists with fresh content, tables of
//! fresh values) never halts; counter ladders and growing repeats halt within their bounds.
//! Each text is fed both as text and as token ids with pieces (a stand-in tokenizer cuts it
//! into word and digit pieces).

use loopguard::{
    Action, LoopKind, Preset, StreamConfig, StreamGuard, StreamSettings, Unit, Verdict,
};
use proptest::prelude::*;

/// Cuts text the way subword tokenizers roughly do: letters in pieces of at most five bytes
/// with the space before them, digits one by one, anything else a byte at a time. The id of a
/// piece is a 32-bit hash of its bytes: as in a real vocabulary, two pieces of a text never
/// share an id (folded into 49,152 ids, two names of a keyword list did now and then, and
/// their lines read as one line written twice).
fn tokenize(text: &str) -> Vec<(u32, Vec<u8>)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        if b[i] == b' ' && i + 1 < b.len() && b[i + 1].is_ascii_alphabetic() {
            i += 1;
        }
        if i < b.len() && (b[i].is_ascii_alphabetic() || b[i] == b'_') {
            while i < b.len() && (b[i].is_ascii_alphabetic() || b[i] == b'_') && i - start < 5 {
                i += 1;
            }
        } else {
            i += 1;
        }
        let piece = b[start..i].to_vec();
        let id = piece.iter().fold(0x811c_9dc5u32, |h, &c| {
            (h ^ c as u32).wrapping_mul(0x0100_0193)
        });
        out.push((id, piece));
    }
    out
}

/// The first halt, fed as tokens with pieces and as 16-byte chunks of text (then the text's
/// end): for each way, the lines of `text` pushed when it came (the line the halt came in),
/// the bytes pushed, and the verdict.
fn first_halts(settings: &StreamSettings, text: &str) -> [Option<(usize, usize, Verdict)>; 2] {
    let config = StreamConfig::new(settings).unwrap();
    let mut g = StreamGuard::new(&config);
    let (mut line, mut pushed) = (0, 0);
    let tokens = tokenize(text).into_iter().find_map(|(id, piece)| {
        line += piece.iter().filter(|&&c| c == b'\n').count();
        pushed += piece.len();
        let v = g.push_token(id, Some(&piece));
        (v.action == Action::Halt).then_some((line, pushed, v))
    });
    let mut g = StreamGuard::new(&config);
    let (mut line, mut pushed) = (0, 0);
    let chunks = text
        .as_bytes()
        .chunks(16)
        .find_map(|chunk| {
            line += chunk.iter().filter(|&&c| c == b'\n').count();
            pushed += chunk.len();
            let v = g.push_text(chunk);
            (v.action == Action::Halt).then_some((line, pushed, v))
        })
        .or_else(|| {
            let v = g.finish_text();
            (v.action == Action::Halt).then_some((line, pushed, v))
        });
    [tokens, chunks]
}

/// The first halt, fed as tokens with pieces and as 16-byte chunks of text: (index, verdict)
/// for each way, the index counting lines of `text` (the line the halt came in).
fn halts(settings: &StreamSettings, text: &str) -> [Option<(usize, Verdict)>; 2] {
    first_halts(settings, text).map(|h| h.map(|(line, _, v)| (line, v)))
}

fn presets() -> [StreamSettings; 2] {
    [
        StreamSettings::preset(Preset::Balanced),
        StreamSettings::preset(Preset::Lenient),
    ]
}

/// A fresh identifier: syllables, optionally joined by `_`.
fn name() -> impl Strategy<Value = String> {
    proptest::collection::vec("(ba|ke|lo|mi|nu|ri|so|ta|ve|zo|qu|xa|dr|pl|st)", 2..6)
        .prop_map(|s| s.concat())
}

fn words(n: std::ops::Range<usize>) -> impl Strategy<Value = String> {
    proptest::collection::vec(name(), n).prop_map(|w| w.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Parallel declarations: one skeleton, a fresh name and fresh types on every line.
    #[test]
    fn declaration_lists_never_halt(
        names in proptest::collection::vec((name(), name(), name()), 20..60),
        style in 0usize..3,
    ) {
        let text: String = names
            .iter()
            .map(|(f, a, b)| match style {
                0 => format!("ALTER FUNCTION {f}({a}, {b}) PARALLEL SAFE;\n"),
                1 => format!("extern API(int) {f} ({a} *{b});\n"),
                _ => format!("pub const {}: ::c_int = {};\n", f.to_uppercase(), a.len() * 7919 + b.len()),
            })
            .collect();
        for s in presets() {
            prop_assert_eq!(halts(&s, &text).map(|h| h.is_none()), [true, true], "{}", text);
        }
    }

    /// Numbered lists whose items say new things, and tables of fresh values.
    #[test]
    fn lists_and_tables_with_fresh_content_never_halt(
        items in proptest::collection::vec((words(4..9), name(), 0u32..100_000), 12..40),
    ) {
        let list: String = items
            .iter()
            .enumerate()
            .map(|(i, (w, _, _))| format!("{}. {w}.\n", i + 1))
            .collect();
        let table: String = std::iter::once("| name | value | note |\n|---|---|---|\n".to_string())
            .chain(items.iter().map(|(w, n, v)| format!("| {n} | {v} | {w} |\n")))
            .collect();
        for s in presets() {
            for text in [&list, &table] {
                prop_assert_eq!(halts(&s, text).map(|h| h.is_none()), [true, true], "{}", text);
            }
        }
    }

    /// A counter that steps on every copy of a block of lines halts within its bound: 24
    /// lines for a block of several lines (12 copies of two), or a one-line ladder on a bare
    /// number once the text says nothing new.
    #[test]
    fn counter_ladders_halt_within_their_bound(
        start in 0u32..500,
        step in 1u32..5,
        var in name(),
        two_lines in any::<bool>(),
    ) {
        let text: String = (0..60)
            .map(|k| {
                let i = start + k * step;
                if two_lines {
                    format!("    if len({var}) == {i}:\n        return True\n")
                } else {
                    format!("        {var}.append(items[{i}])\n")
                }
            })
            .collect();
        let lines_per_copy = if two_lines { 2 } else { 1 };
        for (way, h) in ["tokens", "text"].iter().zip(halts(&StreamSettings::default(), &text)) {
            let (line, v) = h.unwrap_or_else(|| panic!("{way}: no halt on {text}"));
            prop_assert!(
                matches!(v.kind, LoopKind::CounterLadder | LoopKind::NearLoop | LoopKind::RepeatedLines),
                "{}: {:?}", way, v
            );
            // 24 lines, and as many words again to see that nothing new comes.
            prop_assert!(line <= 24 + 24 / lines_per_copy + 4, "{}: halted at line {} {:?}", way, line, v);
        }
    }

    /// Release notes whose entries say the same words around their own pull request: the
    /// numbers rise by uneven steps (as a project's pull requests are merged), the versions and
    /// authors come from a few. A pull request's number is news, so the near loop sees a new
    /// word in every entry; and the entries are records, each with its own number, which halt
    /// only past 24 (at balanced) however alike their words: up to 23 never halt.
    #[test]
    fn release_notes_with_their_own_pull_requests_never_halt(
        entries in proptest::collection::vec((1u32..40, 0u32..4, 0u32..12, 0usize..3), 12..24),
        start in 100u32..90_000,
    ) {
        let authors = ["@ana-dev", "@bkowalski", "@chen"];
        let mut pr = start;
        let notes: String = entries
            .iter()
            .map(|&(step, minor, patch, author)| {
                pr += step;
                format!(
                    "* Add Runtime 3.{minor}.{patch} by {} in https://github.com/example/tool/pull/{pr}\n",
                    authors[author]
                )
            })
            .collect();
        for s in presets() {
            prop_assert_eq!(halts(&s, &notes).map(|h| h.is_none()), [true, true], "{}", notes);
        }
    }

    /// A count whose values between the numbers cycle through a few names (two to seven, in
    /// a fixed order) is a ladder of copies of the cycle: it halts once the count has 24 rungs
    /// (a few more while the line engine finds the cycle). The same count with a fresh name on
    /// every rung is a table, and never halts.
    #[test]
    fn counts_whose_values_cycle_halt_and_fresh_tables_do_not(
        cycle in proptest::collection::vec(name(), 2..8),
        fresh in proptest::collection::vec(name(), 40),
        var in name(),
        start in 0u32..50,
    ) {
        let rung = |k: usize, value: &str| {
            format!("    elif {var} == {}:\n        return \"{value}\"\n", start as usize + k)
        };
        let cycling: String = (0..40).map(|k| rung(k, &cycle[k % cycle.len()])).collect();
        for (way, h) in ["tokens", "text"].iter().zip(halts(&StreamSettings::default(), &cycling)) {
            let (line, v) = h.unwrap_or_else(|| panic!("{way}: no halt on {cycling}"));
            prop_assert!(
                matches!(v.kind, LoopKind::CounterLadder | LoopKind::ExactLoop | LoopKind::NearLoop),
                "{}: {:?}", way, v
            );
            // Two lines a rung: by the 28th rung.
            prop_assert!(line <= 2 * 28, "{}: halted at line {} {:?}", way, line, v);
        }
        let table: String = (0..40).map(|k| rung(k, &fresh[k])).collect();
        for s in presets() {
            prop_assert_eq!(halts(&s, &table).map(|h| h.is_none()), [true, true], "{}", table);
        }
    }

    /// Code commented as people comment it: each function with a comment of fresh words,
    /// which an example's output may show up to three times in a row, never halts; one
    /// comment (or a sentence printed) written on halts by its sixth copy, where a statement
    /// waits for its eighth (`PROSE_LINE_COPIES` is four; the copies must also cover the halt
    /// span, and as text a copy may end a symbol late).
    #[test]
    fn comments_people_write_never_halt_and_written_on_they_do(
        funcs in proptest::collection::vec(
            (
                name(),
                proptest::collection::btree_set(name(), 5..10)
                    .prop_map(|w| w.into_iter().collect::<Vec<_>>().join(" ")),
                1usize..4,
            ),
            8..20,
        ),
        leader in prop::sample::select(vec!["#", "//", "--"]),
        printed in any::<bool>(),
    ) {
        let line = |w: &str| if printed {
            format!("    print(\"{w}\")\n")
        } else {
            format!("    {leader} {w}\n")
        };
        let human: String = funcs
            .iter()
            .map(|(f, w, shown)| format!("def {f}(x):\n{}    return x\n\n", line(w).repeat(*shown)))
            .collect();
        for s in presets() {
            prop_assert_eq!(halts(&s, &human).map(|h| h.is_none()), [true, true], "{}", human);
        }
        let (f, w, _) = &funcs[0];
        let looped = format!("def {f}(x):\n{}", line(w).repeat(12));
        for (way, h) in ["tokens", "text"].iter().zip(halts(&StreamSettings::default(), &looped)) {
            let (at, v) = h.unwrap_or_else(|| panic!("{way}: no halt on {looped}"));
            prop_assert!(at <= 1 + 6, "{}: halted at line {} {:?}", way, at, v);
        }
    }

    /// Names that grow by a suffix on every copy halt by the fifth name.
    #[test]
    fn growing_repeats_halt_within_their_bound(base in name(), suffix in name()) {
        let mut text = String::new();
        let mut f = format!("{base}_to_value");
        for _ in 0..12 {
            text += &format!("def {f}(x):\n    return {f}(x)\n\n");
            f = format!("{f}_{suffix}");
        }
        for (way, h) in ["tokens", "text"].iter().zip(halts(&StreamSettings::default(), &text)) {
            let (line, v) = h.unwrap_or_else(|| panic!("{way}: no halt on {text}"));
            // Each definition is three lines; the fifth name comes on line 13.
            prop_assert!(line <= 15, "{}: halted at line {} {:?}", way, line, v);
            prop_assert!(v.kind == LoopKind::GrowingRepeat || v.kind == LoopKind::ExactLoop, "{}: {:?}", way, v);
        }
    }
}

/// A near loop whose copies vary too much for a period reports the window instead: never a
/// period longer than half its span (a period with fewer than two copies says nothing).
#[test]
fn near_loop_evidence_has_two_copies_or_the_window() {
    let sentences = [
        "The ocean is vast and the ocean is deep and the ocean is blue.",
        "The ocean is deep and vast and blue and the ocean is wide.",
        "The ocean is wide and the ocean is deep and vast and blue.",
        "The ocean is blue and the ocean is wide and deep and vast.",
    ];
    let mut state = 7u64;
    let mut text = String::new();
    for _ in 0..80 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        text += sentences[(state % 4) as usize];
        text += " ";
    }
    for h in halts(&StreamSettings::default(), &text)
        .into_iter()
        .flatten()
    {
        let v = h.1;
        if v.kind == LoopKind::NearLoop {
            assert!(v.period == 0 || 2 * v.period <= v.span, "{v:?}");
        }
    }
}

/// A counter going from one digit to two (9 → 10) or two to three is still the same ladder:
/// lines are compared with every number read as one `0`, however long. The halt reports the
/// ladder's first line as its onset, even when the stream opens with indentation; when the
/// ladder began before the 256 symbols whose places are kept (tokens of one byte here), the
/// oldest of those.
#[test]
fn a_counter_crossing_a_power_of_ten_stays_one_ladder() {
    for start in [1u32, 91] {
        let text: String = (start..start + 60)
            .map(|i| format!("    server.Listen(ServerList[{i}], \"5000\", {{\n    }}\n"))
            .collect();
        for (way, h) in ["tokens", "text"]
            .iter()
            .zip(halts(&StreamSettings::default(), &text))
        {
            let (line, v) = h.unwrap_or_else(|| panic!("{way}: no halt from {start}"));
            assert_eq!(v.kind, LoopKind::CounterLadder, "{way} from {start}: {v:?}");
            // 24 copies of two lines, and a few more for the lines before it is recognised.
            assert!(
                line <= 2 * 24 + 6,
                "{way} from {start}: halted at line {line}"
            );
            assert!(
                v.onset < 8 || v.onset + 256 == v.at + 1,
                "{way} from {start}: onset {} {v:?}",
                v.onset
            );
            assert_eq!(v.onset_byte, Some(0), "{way} from {start}");
        }
    }
}

/// A counter that steps every other line, the lines alike (`m[5][5] += 1` twice, then
/// `m[6][6] += 1` twice), is a ladder of two-line copies: it halts within its bound.
#[test]
fn a_counter_stepping_every_other_copy_is_a_ladder() {
    let text: String = (0..60)
        .flat_map(|k| [k, k])
        .map(|k| format!("        self.matrix[{k}][{k}] += 1\n"))
        .collect();
    for (way, h) in ["tokens", "text"]
        .iter()
        .zip(halts(&StreamSettings::default(), &text))
    {
        let (line, v) = h.unwrap_or_else(|| panic!("{way}: no halt"));
        assert_eq!(v.kind, LoopKind::CounterLadder, "{way}: {v:?}");
        assert!(line <= 24 + 24 + 4, "{way}: halted at line {line}");
    }
}

/// A model that counts (`age = 19`, `age = 20`, … or `1, 2, 3, …` in one line, or a block with
/// two counters) halts as a counter ladder once the count has 24 copies, or covers 24 lines,
/// and the text says nothing new, with byte evidence: the onset is the count's first byte. People's counts are
/// short (a copyright line's years) or name something new each time (a machine's registers):
/// they never halt.
#[test]
fn counts_halt_and_human_counts_do_not() {
    let intro = "The function is called with the following values:\n";
    let looping = [
        (19..120)
            .map(|n| format!("age = {n}\n"))
            .collect::<String>(),
        (1..200).map(|n| format!("{n}, ")).collect::<String>(),
        (2..90)
            .map(|n| format!("    if n == {n}:\n        return n // {}\n", n - 1))
            .collect::<String>(),
    ];
    for body in &looping {
        let text = format!("{intro}{body}");
        for settings in presets() {
            for (way, h) in ["tokens", "text"].iter().zip(halts(&settings, &text)) {
                let (_, v) = h.unwrap_or_else(|| panic!("{way}: no halt on {:?}", &body[..40]));
                assert_eq!(v.kind, LoopKind::CounterLadder, "{way}: {v:?}");
                let onset = v.onset_byte.expect("byte evidence") as usize;
                assert!(
                    onset >= intro.len() && onset < intro.len() + 40,
                    "{way}: onset byte {onset} for {:?}",
                    &body[..40]
                );
                let lines = v.unit == Unit::Line && v.span >= 24;
                assert!((v.repeats >= 24.0 || lines) && v.period > 0, "{way}: {v:?}");
            }
        }
    }
    let human =
        [
            // A copyright line, then prose.
            format!(
            "Copyright: {} The Authors.\nPermission is granted to copy, distribute and modify.\n",
            (1993..2011).map(|y| y.to_string()).collect::<Vec<_>>().join(", ")
        ),
            // A machine's registers: a counter in every name.
            (0..32).map(|n| format!("\tREG_R{n}\n")).collect::<String>()
                + &(0..32).map(|n| format!("\tREG_F{n}\n")).collect::<String>(),
            // A seed written out.
            "let seed = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16];\n".to_string(),
        ];
    for text in &human {
        for settings in presets() {
            for (way, h) in ["tokens", "text"].iter().zip(halts(&settings, text)) {
                assert!(h.is_none(), "{way}: {h:?} on {:?}", &text[..40]);
            }
        }
    }
    // Counts are line evidence: with line halts off (the vLLM-exact preset), they never halt.
    let vllm = StreamSettings::vllm_compatible(1, 64, 1000);
    let text = format!("{intro}{}", looping[1]);
    for (way, h) in ["tokens", "text"].iter().zip(halts(&vllm, &text)) {
        assert!(h.is_none(), "{way}: {h:?}");
    }
}

/// A count whose counter sits in a name names something new each copy, as a table does, but
/// no table is written out by hand past 64 entries: `user1=user2=…` run on in one line halts
/// past its 64th name, while the 64 bits of a word, one line each, do not.
#[test]
fn a_count_in_names_past_any_table_halts() {
    let chain: String = (1..200).map(|n| format!("user{n}=")).collect();
    let text = format!("#!/bin/sh\n{chain}\n");
    let s = StreamSettings::preset(Preset::Balanced);
    for (way, h) in ["tokens", "text"].iter().zip(halts(&s, &text)) {
        let (_, v) = h.unwrap_or_else(|| panic!("{way}: no halt"));
        assert_eq!(v.kind, LoopKind::CounterLadder, "{way}: {v:?}");
        let at = v.onset_byte.expect("byte evidence") as usize;
        assert!(at < 20, "{way}: onset byte {at}");
    }
    let bits: String = (0..64)
        .map(|n| format!("#define BIT{n} (1ULL << {n})\n"))
        .collect();
    for s in presets() {
        for (way, h) in ["tokens", "text"].iter().zip(halts(&s, &bits)) {
            assert!(h.is_none(), "{way}: {h:?}");
        }
    }
}

/// A ladder of names that all take the same value (`char *newstr12 = str;`, `int num12 = 0;`)
/// names nothing new: the counter is all that changes, and it halts as a ladder does. A table
/// whose values step with its names, or come from a call that gives a new one each time
/// (`F12 = auto()`), is a table.
#[test]
fn names_given_one_value_are_a_ladder() {
    let body = |line: &dyn Fn(u32) -> String| {
        let lines: String = (1..48).map(line).collect();
        format!("int upper(char *str) {{\n{lines}    return 0;\n}}\n")
    };
    let s = StreamSettings::preset(Preset::Balanced);
    for text in [
        body(&|n| format!("    char *newstr{n} = str;\n")),
        body(&|n| format!("    int num{n} = 0;\n")),
    ] {
        for (way, h) in halts(&s, &text).iter().enumerate() {
            let (line, v) = h
                .as_ref()
                .unwrap_or_else(|| panic!("way {way}: no halt on\n{text}"));
            assert_eq!(v.kind, LoopKind::CounterLadder, "way {way}: {v:?}");
            assert!(*line <= 32, "way {way}: halted at line {line}");
        }
    }
    for text in [
        body(&|n| format!("    F{n} = auto()\n")),
        body(&|n| format!("    KEY_F{n} = 0x{:02x},\n", 0x3a + n)),
    ] {
        for s in presets() {
            let [a, b] = halts(&s, &text);
            assert!(a.is_none() && b.is_none(), "{a:?} {b:?} on\n{text}");
        }
    }
}

/// A count whose text between the numbers cycles (`elif day == 9: return "Tuesday"`, the
/// weekday names back every seventh rung) is one count through copies of a seven-rung block:
/// it halts at the 24 rungs a one-line ladder halts at, also when the text held keeps only
/// two copies of the block. The same table written out twice, or an answer key whose answers
/// come back at random, is no loop.
#[test]
fn a_count_whose_words_cycle_is_a_ladder() {
    let days = [
        "Sunday",
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
    ];
    let ladder = |test: &str, value: &str| -> String {
        let rungs: String = (1..=40)
            .map(|n| {
                let day = days[(n - 1) % 7];
                format!("    elif {test} == {n}:\n        return \"{day}{value}\"\n")
            })
            .collect();
        format!("def day_name(date):\n    if {test} == 0:\n        return None\n{rungs}")
    };
    let s = StreamSettings::preset(Preset::Balanced);
    // Short rungs (three copies of the block held) and long ones (two).
    for text in [
        ladder("day", ""),
        ladder("date.day_of_month", " of the week"),
    ] {
        for (way, h) in halts(&s, &text).iter().enumerate() {
            let (line, v) = h
                .as_ref()
                .unwrap_or_else(|| panic!("way {way}: no halt on\n{text}"));
            assert_eq!(v.kind, LoopKind::CounterLadder, "way {way}: {v:?}");
            // Three lines before the rungs, two lines a rung: by the 27th rung.
            assert!(*line <= 3 + 2 * 27, "way {way}: halted at line {line}");
        }
    }
    // The same table twice: the second copy names nothing new, but within it no name comes
    // back.
    let names = [
        "INDEX_SIZE",
        "DOMSTRING_SIZE",
        "HIERARCHY_REQUEST",
        "WRONG_DOCUMENT",
        "INVALID_CHARACTER",
        "NO_DATA_ALLOWED",
        "NO_MODIFICATION_ALLOWED",
        "NOT_FOUND",
        "NOT_SUPPORTED",
        "INUSE_ATTRIBUTE",
        "INVALID_STATE",
        "SYNTAX",
        "INVALID_MODIFICATION",
        "NAMESPACE",
        "INVALID_ACCESS",
        "VALIDATION",
        "TYPE_MISMATCH",
        "SECURITY",
        "NETWORK",
        "ABORT",
        "URL_MISMATCH",
        "QUOTA_EXCEEDED",
        "TIMEOUT",
        "INVALID_NODE_TYPE",
        "DATA_CLONE",
    ];
    let table: String = names
        .iter()
        .enumerate()
        .map(|(i, name)| format!("    readonly {name}_ERR: {};\n", i + 1))
        .collect();
    let twice = format!("interface E {{\n{table}}}\ndeclare var E: {{\n{table}}};\n");
    // An answer key: the answers come back, but in no cycle.
    let mut seed = 7u32;
    let key: String = (1..=60)
        .map(|n| {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            format!("{n}. {}\n", ["A", "B", "C", "D"][(seed >> 16) as usize % 4])
        })
        .collect();
    for text in [twice, format!("Answer key\n\n{key}")] {
        for s in presets() {
            let [a, b] = halts(&s, &text);
            assert!(a.is_none() && b.is_none(), "{a:?} {b:?} on\n{text}");
        }
    }
}

/// As text each digit and each line break is a symbol, as tokenizers cut them: a list of one
/// number written on and on inside a line halts as text where its tokens do (as one word a
/// copy it waited for 160 of them), and a table of hex values wrapped over lines, each line
/// cut at another place in the pattern, halts neither way.
#[test]
fn digits_and_line_breaks_are_symbols_as_text() {
    let list = format!(
        "@app.route('/users')\ndef get_users():\n    return jsonify({{\"users\": [{}]}})\n",
        "1234567890, ".repeat(40)
    );
    let s = StreamSettings::preset(Preset::Balanced);
    let [tokens, text] = halts(&s, &list);
    assert!(tokens.is_some(), "with pieces: {tokens:?}");
    assert!(text.is_some(), "as text: {text:?}");
    // icu's code point planes: runs of `0x80, 0x0,` pairs, thirteen values a line.
    let values: Vec<String> = (0..448)
        .map(|i| match i % 2 {
            0 => format!("0x{:x}0", 8 + i / 64),
            _ => "0x0".to_string(),
        })
        .collect();
    let rows: String = values
        .chunks(13)
        .map(|row| format!("    {},\n", row.join(", ")))
        .collect();
    let table = format!("pub const PLANES: [u16; 448] = [\n{rows}];\n");
    for s in presets() {
        assert_eq!(
            halts(&s, &table).map(|h| h.map(|(_, v)| v)),
            [None, None],
            "{table}"
        );
    }
}

/// As text, a run of non-space bytes longer than two tokens' worth (8 bytes) is cut where word
/// bytes and punctuation meet, as tokenizers cut it: a quoted name written again and again in
/// one line (SmolLM2's `'git-branch-show.py', ` thirty times) is a loop of several symbols a
/// copy, as it is of several tokens, and halts as soon as it does with pieces. Whole, each copy
/// was one symbol, and a loop of one symbol waits for 40 of them.
#[test]
fn a_quoted_name_repeated_in_a_line_halts_as_text() {
    let line = format!(
        "def show(repo):\n    path = os.path.join(repo, 'git-branch-path.sh', {})\n",
        "'git-branch-show.py', ".repeat(30)
    );
    let s = StreamSettings::preset(Preset::Balanced);
    let [tokens, text] = halts(&s, &line);
    assert!(tokens.is_some(), "with pieces: {tokens:?}");
    assert!(text.is_some(), "as text: {text:?}");
    // Long words of prose and names in code that do not repeat are cut too, and say nothing
    // more than they did.
    let prose = "Internationalization responsibilities, notwithstanding extraordinary \
        circumstances, necessitate comprehensive documentation: interoperability, \
        accountability and maintainability. "
        .to_string()
        + "def get_configuration_directory(environment_variables, application_name):\n    \
           return os.path.join(environment_variables['XDG_CONFIG_HOME'], application_name)\n";
    for s in presets() {
        assert_eq!(halts(&s, &prose).map(|h| h.map(|(_, v)| v)), [None, None]);
    }
}

/// Code written with a repetition inside one line of ordinary length (a literal, a test
/// string) does not halt; the same repetition run far past any line a person writes does.
#[test]
fn a_repetition_inside_a_code_line_halts_only_past_human_line_lengths() {
    let literal = "{style}12345{style:#} ".repeat(4);
    let human = format!(
        "fn wrap_styled() {{\n    let style = Style::new().bold();\n    let input = format!(\n        \"{literal}\"\n    );\n    actual.push_string(input);\n}}\n\nvar f100 = \"{}\"\n\nfunc TestNext(t *testing.T) {{\n\tfor _, s := range segmentList {{\n\t\treadRuneSegments(t, s)\n\t}}\n}}\n",
        "f".repeat(100)
    );
    for s in presets() {
        assert_eq!(halts(&s, &human).map(|h| h.map(|(_, v)| v)), [None, None]);
    }
    let runaway = format!(
        "fn wrap_styled() {{\n    let input = format!(\n        \"{}\"\n    );\n}}\n",
        "{style}12345{style:#} ".repeat(80)
    );
    let chars = format!("var f = \"{}\"\n", "f".repeat(600));
    for text in [&runaway, &chars] {
        for s in presets() {
            for (way, h) in halts(&s, text).iter().enumerate() {
                assert!(h.is_some(), "way {way} did not halt on {:.60}", text);
            }
        }
    }
}

/// An unrolled loop (one line of code written out a few times), a table's `NULL` slots and
/// a preprocessor table of versions are how people write C; a line a model writes on and on
/// halts, from `CODE_LINE_COPIES` (8) copies, and slots as data do (four times the span).
#[test]
fn unrolled_lines_null_slots_and_directives_are_human_c() {
    let body = |line: &str, n: usize| {
        format!(
            "static void point_mul(P256_POINT *r, const BN_ULONG p_scalar[P256_LIMBS]) {{\n  \
             crypto_word_t wvalue = p_str[index];\n  copy_conditional(h.Y, tmp, wvalue & 1);\n{}  \
             ecp_nistz256_point_add(r, r, &h);\n}}\n",
            format!("  {line}\n").repeat(n)
        )
    };
    let slots = format!(
        "void *PyArray_API[] = {{\n        (void *) &PyArray_Type,\n        (void *) \
         NpyString_pack,\n{}}};\n",
        "\tNULL,\n".repeat(30)
    );
    let versions: String = (0..24)
        .map(|k| {
            format!(
                "#define NPY_{}_{}_API_VERSION 0x{:08x}\n",
                1 + k / 10,
                k % 10,
                11 + k * 2 / 3
            )
        })
        .collect();
    let human = [body("ecp_nistz256_point_double(r, r);", 5), slots, versions];
    for text in &human {
        for s in presets() {
            let got = halts(&s, text).map(|h| h.map(|(_, v)| v));
            assert_eq!(got, [None, None], "{:.80}", text);
        }
    }
    // The same line on and on halts, by its eighth copy at the latest (the line it halts in
    // counts from the body's first three lines); slots written on and on halt as data does,
    // past four times the span.
    let runaway = body("str[len] = 0; // to avoid undefined behavior", 40);
    for s in presets() {
        for (way, h) in halts(&s, &runaway).iter().enumerate() {
            let (line, v) = h.unwrap_or_else(|| panic!("way {way} did not halt"));
            assert!(line <= 3 + 8, "way {way} halted at line {line}: {v:?}");
        }
    }
    let slots = format!("void *API[] = {{\n{}", "\tNULL,\n".repeat(400));
    for s in presets() {
        for (way, h) in halts(&s, &slots).iter().enumerate() {
            assert!(h.is_some(), "way {way} did not halt on 400 NULL slots");
        }
    }
}

/// A number or a byte buffer written out to its length in a literal, wrapped over lines (a
/// float parser's test of a thousand zeros, a 256-byte table of `\xff`) is data, judged by
/// its bytes as a buffer spelled out: past them it halts.
#[test]
fn digits_written_out_in_a_literal_halt_only_as_a_buffer() {
    let zeros = |lines: usize| {
        format!(
            "#[test]\nfn test_parse_long() {{\n    let n = \"1.\\\n{}1\";\n    check(n);\n}}\n",
            format!("{}\\\n", "0".repeat(60)).repeat(lines)
        )
    };
    let table = format!(
        "const reverseHexTable = \"\" +\n{}\t\t\"\\x00\\x01\" +\n",
        format!("\t\t\"{}\" +\n", "\\xff".repeat(16)).repeat(8)
    );
    for text in [zeros(16), table] {
        for s in presets() {
            assert_eq!(halts(&s, &text), [None, None], "{text:.160}");
        }
    }
    let runaway = zeros(60);
    for s in presets() {
        for (way, h) in halts(&s, &runaway).iter().enumerate() {
            assert!(h.is_some(), "way {way}: 3,600 zeros did not halt");
        }
    }
}

/// A list filled with one item (a decoding table's invalid entries, a C function's pointer
/// argument types, a test's tokens) is as long as its writer sized it: judged by its bytes,
/// as a buffer spelled out. A record (a comma inside its brackets) or a string written on
/// halts as a line of code does.
#[test]
fn a_list_filled_with_one_item_halts_only_as_a_buffer() {
    let table = |item: &str, n: usize| {
        format!(
            "const DECODE: [CodePoint; 256] = [\n    CodePoint::Valid(0),\n{}    \
             CodePoint::Valid(62),\n];\n",
            format!("    {item},\n").repeat(n)
        )
    };
    let argtypes = format!(
        "def _wake(app):\n    objc.objc_msgSend.argtypes = [\n{}    ]\n    event = msg(app)\n",
        "        void_p,\n".repeat(11)
    );
    let human = [
        table("CodePoint::INVALID", 43),
        table("Token::U8(0)", 15),
        argtypes,
    ];
    for text in &human {
        for s in presets() {
            assert_eq!(halts(&s, text), [None, None], "{text:.120}");
        }
    }
    // Past a buffer's bytes (1,536: 64 copies of 24 bytes) a fill halts.
    let runaway = table("CodePoint::INVALID", 200);
    for s in presets() {
        for (way, h) in halts(&s, &runaway).iter().enumerate() {
            let (line, v) = (*h).unwrap_or_else(|| panic!("way {way} did not halt"));
            assert!(
                (60..=80).contains(&line),
                "way {way} halted at line {line}: {v:?}"
            );
        }
    }
    // A record or a string given again halts by the eighth copy, as a line of code.
    for item in ["(self.x + other.x, self.y + other.y)", "\"rust-2.10.0\""] {
        let text = table(item, 40);
        for s in presets() {
            for (way, h) in halts(&s, &text).iter().enumerate() {
                let (line, v) = (*h).unwrap_or_else(|| panic!("{item}: way {way}"));
                assert!(
                    line <= 2 + 8,
                    "{item}: way {way} halted at line {line}: {v:?}"
                );
            }
        }
    }
}

/// Rows of a drawing (a chart's axis and bars, no letter or digit) repeat by design: a chart
/// as tall as people draw them does not halt.
#[test]
fn drawings_do_not_halt() {
    let mut chart = String::from("<pre class=\"screen\">\n    KB\n19.63^                 #\n");
    for _ in 0..24 {
        chart.push_str("     |                                                   #\n");
    }
    chart.push_str("   0 +----------------------------------------------------->Mi\n</pre>\n");
    for s in presets() {
        assert_eq!(halts(&s, &chart).map(|h| h.map(|(_, v)| v)), [None, None]);
    }
    // Rows without end are no picture: taller than a screen, they halt.
    let endless = "     |      #\n".repeat(200);
    for s in presets() {
        assert!(
            halts(&s, &endless)[0].is_some(),
            "{:?}",
            halts(&s, &endless)
        );
    }
}

/// Empty comments are no picture: a model writing `#` lines on halts as a line of code written
/// out again does, long before a drawing's 48 rows, while a comment whose paragraphs are
/// parted by empty comment lines (three at most in a row, as people write them) does not.
#[test]
fn empty_comment_lines_written_on_halt_like_code_lines() {
    let human = "#!/bin/bash\n#\n# Backs up a directory.\n#\n#\n#\n# Usage: backup DIR\n#\n\
                 set -e\ntar czf \"$1-$(date +%F).tar.gz\" \"$1\"\n";
    for s in presets() {
        assert_eq!(halts(&s, human).map(|h| h.map(|(_, v)| v)), [None, None]);
    }
    let looped = format!("#!/bin/bash\n\n# Usage:\n{}", "#  \n".repeat(60));
    let s = StreamSettings::preset(Preset::Balanced);
    for (how, h) in ["pieces", "text"].iter().zip(halts(&s, &looped)) {
        let (line, v) = h.unwrap_or_else(|| panic!("{how}: no halt"));
        // The fourth line is the first empty one; a drawing would run to its 48th row.
        assert!(line < 3 + 30, "{how}: halted at line {line}: {v:?}");
    }
}

/// A list of versions steps by design (`redis 2.8.21`, `2.8.22`, …): it is not a counter
/// ladder, while the same block stepping a plain counter is.
/// `text` halts as a counter ladder, fed as tokens with pieces and as text.
fn assert_ladder_halts(s: &StreamSettings, text: &str) {
    for (way, h) in halts(s, text).iter().enumerate() {
        let (_, v) = h
            .as_ref()
            .unwrap_or_else(|| panic!("way {way}: the ladder did not halt"));
        assert_eq!(v.kind, LoopKind::CounterLadder, "way {way}: {v:?}");
    }
}

#[test]
fn versions_are_not_counter_ladders() {
    let entry = |v: &str| {
        format!(
            "            {{\n                \"Engine\": \"redis\",\n                \"EngineVersion\": \"{v}\",\n                \"CacheParameterGroupFamily\": \"redis2.8\",\n                \"CacheEngineVersionDescription\": \"redis version {v}\"\n            }},\n"
        )
    };
    let versions: String = (6..16).map(|p| entry(&format!("2.8.{p}"))).collect();
    let counter: String = (6..40).map(|p| entry(&p.to_string())).collect();
    for s in presets() {
        let [a, b] = halts(&s, &versions);
        assert!(a.is_none() && b.is_none(), "{a:?} {b:?}");
        assert_ladder_halts(&s, &counter);
    }
}

/// A ladder steps the same way over all its copies: link references to pull requests whose
/// numbers rose by 2, 3 or 20 and then by one for the last eight lines are a list (a
/// changelog's), not a count; the same lines with every number one more than the last halt.
#[test]
fn a_ladder_steps_the_same_way_throughout() {
    let link = |n: u32| format!("[#{n}]: https://example.org/project/pull/{n}\n");
    let mut n = 8300;
    let mut list = String::from("## 1.54.1\n\nFixed a race in the scheduler.\n\n");
    for (i, gap) in [6, 3, 3, 20, 14, 1, 6, 4, 2, 10, 3, 1, 4, 3, 2, 4, 3, 1]
        .iter()
        .enumerate()
    {
        n += gap + i as u32 % 2;
        list += &link(n);
    }
    for _ in 0..8 {
        n += 1;
        list += &link(n);
    }
    let ladder: String = (8300..8340).map(link).collect();
    for s in presets() {
        let [a, b] = halts(&s, &list);
        assert!(a.is_none() && b.is_none(), "{a:?} {b:?}");
        assert_ladder_halts(&s, &ladder);
    }
}

/// A ladder covers the lines between its rungs too: a call written again for each index, each
/// closed by a `}` line that has no letters, covers two lines a rung and halts once it covers
/// as many lines as a ladder of one-line rungs does. Ten rungs (twenty lines) are a table
/// people write out.
#[test]
fn a_ladder_covers_the_lines_between_its_rungs() {
    let rung = |n: u32| format!("    mux.Listen(routes[{n}], \"8080\", {{\n    }}\n");
    let ladder = |n: u32| {
        format!(
            "func main() {{\n{}}}\n",
            (0..n).map(rung).collect::<String>()
        )
    };
    let s = StreamSettings::preset(Preset::Balanced);
    for (way, h) in halts(&s, &ladder(20)).iter().enumerate() {
        let (line, v) = h
            .as_ref()
            .unwrap_or_else(|| panic!("way {way}: the ladder did not halt"));
        assert_eq!(v.kind, LoopKind::CounterLadder, "way {way}: {v:?}");
        assert!(*line <= 32, "way {way}: halted at line {line}");
    }
    for s in presets() {
        let [a, b] = halts(&s, &ladder(10));
        assert!(a.is_none() && b.is_none(), "{a:?} {b:?}");
    }
    // Trial division by the primes, then by every odd number from 15, skipping from 25 to
    // 31: the ladder counts from its last irregular step, and its `if` lines, too short to be
    // lines the line engine counts, are between its rungs.
    let divisors = [2, 3, 5, 7, 11, 13, 15, 17, 19, 21, 23, 25]
        .into_iter()
        .chain((31..).step_by(2));
    let trial: String = divisors
        .take(60)
        .map(|k| format!("    if n % {k} == 0:\n        return None\n"))
        .collect();
    let trial = format!("def is_prime(n):\n{trial}    return True\n");
    for (way, h) in halts(&s, &trial).iter().enumerate() {
        let (line, v) = h
            .as_ref()
            .unwrap_or_else(|| panic!("way {way}: the trial division did not halt"));
        assert_eq!(v.kind, LoopKind::CounterLadder, "way {way}: {v:?}");
        // The rungs from 31 begin at line 26; twelve of them cover 24 lines.
        assert!(*line <= 26 + 24 + 8, "way {way}: halted at line {line}");
    }
}

/// The first warning or halt, fed as tokens with pieces and as 16-byte chunks of text.
fn first_alarms(settings: &StreamSettings, text: &str) -> [Option<Verdict>; 2] {
    let config = StreamConfig::new(settings).unwrap();
    let mut g = StreamGuard::new(&config);
    let tokens = tokenize(text)
        .into_iter()
        .map(|(id, piece)| g.push_token(id, Some(&piece)))
        .find(|v| v.action >= Action::Warn);
    let mut g = StreamGuard::new(&config);
    let chunks = text
        .as_bytes()
        .chunks(16)
        .map(|c| g.push_text(c))
        .find(|v| v.action >= Action::Warn);
    [tokens, chunks]
}

#[test]
fn closing_tags_and_names_grown_by_new_suffixes_do_not_warn() {
    // Nested tables closed at once, in markup: three copies of a short block, by design.
    let html = "<table width=\"100%\"><tr><td><table border=\"0\"><tr><td><table><tr><td>\n\
                <h1>The XSLT C library</h1><h2>Module templates</h2>\n\
                </td></tr></table></td></tr></table></td></tr></table>\n\
                <p>Each template is read once, when the stylesheet is compiled.</p>\n";
    // A name grown by a new suffix each time (a family of functions).
    let rust = "/// Binary search over sorted entries.\n\
                pub fn binary_search(&self, x: &K) -> Result<usize, usize> { todo!() }\n\
                pub fn binary_search_by<F>(&self, f: F) -> Result<usize, usize> { todo!() }\n\
                pub fn binary_search_by_key<B, F>(&self, b: &B, f: F) -> Result<usize, usize> { todo!() }\n";
    for s in presets() {
        for text in [html, rust] {
            let alarms = first_alarms(&s, text);
            assert!(alarms.iter().all(Option::is_none), "{text}: {alarms:?}");
        }
    }
    // The same suffix again and again is a growing repeat, and a loop in prose (whose first
    // token carries a space) still warns at two copies.
    let mut grown = String::new();
    let mut name = String::from("celsius_to_fahrenheit");
    for _ in 0..3 {
        grown += &format!("def {name}(c):\n    return c * 9 / 5 + 32\n\n");
        name += "_with_c";
    }
    let prose = " The model said the same thing about the weather again and again. ".repeat(3);
    let s = StreamSettings::preset(Preset::Balanced);
    for (way, v) in first_alarms(&s, &grown).iter().enumerate() {
        let v = v
            .as_ref()
            .unwrap_or_else(|| panic!("way {way}: no warning"));
        assert_eq!(v.kind, LoopKind::GrowingRepeat, "way {way}: {v:?}");
    }
    for (way, v) in first_alarms(&s, &prose).iter().enumerate() {
        assert!(v.is_some(), "way {way}: no warning on a prose loop");
    }
}

/// A byte buffer spelled out as escapes in a string literal is as long as the buffer: Go's
/// SHA-512 tests marshal a state with 136 zero bytes (`"sha\x05…\x00\x00…"`). A run of one
/// escape that goes on past any buffer still halts.
#[test]
fn a_buffer_of_escaped_bytes_is_data_as_long_as_the_buffer() {
    let buffer = format!(
        "func TestMarshal(t *testing.T) {{\n\tstate := \"sha\\x05\\x8c=7\\xc8{}\"\n\tcheck(t, state)\n}}\n",
        "\\x00".repeat(136)
    );
    for s in presets() {
        assert_eq!(halts(&s, &buffer), [None, None], "{buffer}");
    }
    let runaway = format!("data = \"{}", "\\x00".repeat(2000));
    for (way, h) in halts(&StreamSettings::default(), &runaway)
        .iter()
        .enumerate()
    {
        assert!(
            h.is_some(),
            "way {way}: no halt on 2,000 escaped zero bytes"
        );
    }
}

/// A buffer of one word spelled out as a list is data as long as the buffer, in bytes and
/// however the loop's copy is cut: Go's runtime tests fill an array with `0xffffffff` on one
/// long line, HMAC's tests (RFC 4231) spell a 131-byte key of `0xaa` in rows of eight, SHA-3's
/// a 200-byte message of `0xa3`; 640 of them are past any buffer. A copy cut inside a number
/// (`xaa, 0xaa, …, 0`) is the same loop as one cut between two, and a copy of one twelve-byte
/// item needs three items' worth of bytes before it to show two whole ones. A long decimal
/// written on and on is no buffer and halts as other data does.
#[test]
fn a_list_of_one_word_is_a_buffer_however_its_copy_is_cut() {
    let words = format!(
        "func TestDefer(t *testing.T) {{\n\tvar a = [...]uint32{{{}}}\n\tuse(a)\n}}\n",
        "0xffffffff, ".repeat(90)
    );
    let rows = format!(
        "var key = []byte{{\n{}\t\t\t0xaa, 0xaa, 0xaa,\n\t\t}}\n",
        "\t\t\t0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa,\n".repeat(16)
    );
    for s in presets() {
        assert_eq!(halts(&s, &words), [None, None], "{words}");
        assert_eq!(halts(&s, &rows), [None, None], "{rows}");
    }
    // SHA-3's 200-byte test message of `0xa3`: 800 pieces here, as long as the buffer in bytes.
    let row = "\t\t0xa3, 0xa3, 0xa3, 0xa3, 0xa3, 0xa3, 0xa3, 0xa3,\n";
    let message = format!("var msg = []byte{{\n{}\t}}\n", row.repeat(25));
    let runaway = format!("var msg = []byte{{\n{}", row.repeat(80));
    for s in presets() {
        assert_eq!(halts(&s, &message), [None, None], "{message}");
        for (way, h) in halts(&s, &runaway).iter().enumerate() {
            assert!(h.is_some(), "way {way}: no halt on 640 bytes of 0xa3");
        }
    }
    let decimals = format!(
        "    return jsonify({{\"users\": [{}",
        "1234567890, ".repeat(60)
    );
    for (way, h) in halts(&StreamSettings::default(), &decimals)
        .iter()
        .enumerate()
    {
        assert!(
            h.is_some(),
            "way {way}: no halt on sixty copies of a ten-digit number"
        );
    }
}

/// A name grown three times in a row by one suffix (`is_empty`, `is_empty_value`,
/// `is_empty_value_value`, `is_empty_value_value_value`) halts at the fourth name: people who
/// grow a name add a new suffix each time. Three growths by new suffixes still only warn. A
/// mention of the name a chain grew from (`x_scaled_scaled = rescale(x_scaled)`) neither
/// grows it nor starts a chain that pushes it out.
#[test]
fn a_name_grown_three_times_by_one_suffix_halts() {
    let mut stutter = String::new();
    let mut name = String::from("is_empty");
    for _ in 0..6 {
        stutter += &format!("    def {name}(self):\n        return self.items == []\n\n");
        name += "_value";
    }
    for s in presets() {
        for (way, h) in halts(&s, &stutter).iter().enumerate() {
            let (line, v) = h.as_ref().unwrap_or_else(|| panic!("way {way}: no halt"));
            // Each method is three lines; the fourth name is on line 10.
            assert!(*line <= 12, "way {way}: halted at line {line}: {v:?}");
            assert_eq!(v.kind, LoopKind::GrowingRepeat, "way {way}: {v:?}");
        }
    }
    // The line that grows the name names its older form too, beside a call of its own.
    let mut argued = String::from("import numpy as np\n\n");
    let mut name = String::from("rows");
    for _ in 0..8 {
        argued += &format!("{name}_scaled = rescale_matrix({name}, 0.5)\n");
        name += "_scaled";
    }
    for s in presets() {
        for (way, h) in halts(&s, &argued).iter().enumerate() {
            let (line, v) = h.as_ref().unwrap_or_else(|| panic!("way {way}: no halt"));
            assert!(*line <= 7, "way {way}: halted at line {line}: {v:?}");
            assert_eq!(v.kind, LoopKind::GrowingRepeat, "way {way}: {v:?}");
        }
    }
    let family = "pub fn binary_search(&self, x: &K) -> R { todo!() }\n\
                  pub fn binary_search_by<F>(&self, f: F) -> R { todo!() }\n\
                  pub fn binary_search_by_key<B, F>(&self, b: &B, f: F) -> R { todo!() }\n\
                  pub fn binary_search_by_key_mut<B, F>(&mut self, b: &B, f: F) -> R { todo!() }\n";
    for s in presets() {
        assert_eq!(halts(&s, family), [None, None], "{family}");
    }
}

/// A class written again under a name grown by one suffix each copy halts though every copy
/// holds other long words (`m_ptr_max_size`, `unsigned`): words that come back in each copy
/// start no chain of their own, so they never push the growing one out. Numbers written in
/// groups (`1_500_000`, `1_500_000_000`) and emoji strings (`🇦🇦🇦`, `🇦🇦🇦🇦`) are no names,
/// however they grow.
#[test]
fn a_growing_name_is_followed_past_the_other_words_of_its_copies() {
    let mut classes = String::from("#include <stddef.h>\n\n");
    let mut name = String::from("FixedSizeRingBuffer");
    for _ in 0..6 {
        classes += &format!(
            "class {name} {{\npublic:\n    {name}(size_t max_size = 1000000) {{\n        \
             m_ptr_max_size = max_size;\n    }}\nprivate:\n    unsigned int m_ptr_max_size;\n}};\n\n"
        );
        name += "Private";
    }
    for s in presets() {
        for (way, h) in halts(&s, &classes).iter().enumerate() {
            let (_, v) = h.as_ref().unwrap_or_else(|| panic!("way {way}: no halt"));
            assert_eq!(v.kind, LoopKind::GrowingRepeat, "way {way}: {v:?}");
        }
    }
    let mut grouped = String::from("fn sizes() {\n");
    let mut number = String::from("1_500");
    let mut flags = String::from("fn widths() {\n");
    let mut flag = String::from("🇦🇦");
    for k in 0..8 {
        grouped += &format!("    assert_eq!(format(HumanBytes({number})), \"{k}\");\n");
        number += "_000";
        flags += &format!("    assert_width!(\"{flag}\", {k}, {k});\n");
        flag += "🇦";
    }
    for s in presets() {
        for text in [&grouped, &flags] {
            let alarms = first_alarms(&s, text);
            assert!(
                alarms
                    .iter()
                    .flatten()
                    .all(|v| v.kind != LoopKind::GrowingRepeat),
                "{text}: {alarms:?}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Sibling after sibling of one template, each with new names and values: with a budget
    /// of `budget` copies the guard halts on the last line of the next copy, with the
    /// template's period and onset at its first copy; without a budget it warns from
    /// `template_warn` copies on and never halts.
    #[test]
    fn re_filled_templates_halt_within_their_budget(
        names in proptest::collection::vec((name(), 0u32..1000, 0u32..1000), 16..24),
        budget in 2u32..8,
        indent in 0usize..2,
    ) {
        let pad = "    ".repeat(indent);
        let mut text = String::from("import unittest\n\nclass TestOps(unittest.TestCase):\n");
        let mut ends = Vec::new();
        for (n, a, b) in &names {
            text.push_str(&format!(
                "{pad}    def test_{n}(self):\n{pad}        result = {n}({a}, {b})\n{pad}        self.assertEqual(result, {})\n\n",
                a + b
            ));
            ends.push(text.matches('\n').count() - 1);
        }
        let s = StreamSettings { template_budget: budget, ..StreamSettings::default() };
        for (way, h) in halts(&s, &text).iter().enumerate() {
            let (line, v) = h.as_ref().unwrap_or_else(|| panic!("way {way}: no halt"));
            prop_assert_eq!(v.kind, LoopKind::TemplateRunaway, "way {}: {:?}", way, v);
            prop_assert_eq!(v.period, 3);
            // The copy after the budget, on its last line. `halts` counts the line breaks
            // read when the halt came: a 16-byte chunk may hold the next two.
            let want = ends[budget as usize] - 1;
            prop_assert!(*line >= want && *line <= want + 2, "way {}: line {} want {}", way, line, want);
            prop_assert_eq!(v.repeats, budget as f32 + 1.0);
        }
        let d = StreamSettings::default();
        prop_assert_eq!(halts(&d, &text).map(|h| h.map(|(_, v)| v)), [None, None]);
        let mut g = StreamGuard::new(&StreamConfig::new(&d).unwrap());
        let warned = text.as_bytes().chunks(16).any(|c| {
            let v = g.push_text(c);
            v.action == Action::Warn && v.kind == LoopKind::TemplateRunaway
        });
        prop_assert!(warned, "no template warning over {} siblings", names.len());
    }
}

/// Rows of markup re-filled (a table's rows, an XML database's entries) are how documents are
/// written, and markup has no loop statement to write instead: no template warning, but a
/// host's budget still halts them.
#[test]
fn markup_re_filled_is_a_document_not_a_template_runaway() {
    let rows: String = [
        "Balkh", "Bamyan", "Daykundi", "Farah", "Faryab", "Ghazni", "Ghor", "Helmand", "Herat",
        "Jowzjan", "Kabul", "Kandahar", "Kapisa", "Khost", "Kunar", "Kunduz", "Laghman", "Logar",
    ]
    .iter()
    .enumerate()
    .map(|(i, n)| format!("<tr><td>AF-{i:02}</td>\n<td>{n}</td></tr>\n"))
    .collect();
    let text = format!("<table>\n{rows}</table>\n");
    let mut g = StreamGuard::new(&StreamConfig::new(&StreamSettings::default()).unwrap());
    let warned = text.as_bytes().chunks(16).any(|c| {
        let v = g.push_text(c);
        v.action != Action::Continue && v.kind == LoopKind::TemplateRunaway
    });
    assert!(!warned, "markup rows warned as a template");
    let s = StreamSettings {
        template_budget: 4,
        ..StreamSettings::default()
    };
    for (way, h) in halts(&s, &text).iter().enumerate() {
        let (_, v) = h
            .as_ref()
            .unwrap_or_else(|| panic!("way {way}: no halt past the budget"));
        assert_eq!(v.kind, LoopKind::TemplateRunaway, "way {way}: {v:?}");
    }
}

/// Found on human HTML cut by Gemma3's tokenizer (a licence page laid out with no-break
/// spaces): a run of U+00A0, one byte a token, read as a word said again and again. A no-break
/// space is white space: its runs are separator runs, which halt only past
/// `separator_run_halt`.
#[test]
fn no_break_spaces_are_white_space() {
    for settings in presets() {
        let mut g = StreamGuard::new(&StreamConfig::new(&settings).unwrap());
        g.push_token(10, Some(b"<p>Version 1.2,"));
        for _ in 0..60 {
            for (id, byte) in [(1, &b"\xc2"[..]), (2, &b"\xa0"[..])] {
                let v = g.push_token(id, Some(byte));
                assert!(v.action < Action::Halt, "{v:?}");
            }
        }
        // Spaces spelled as one token each, too.
        for _ in 0..60 {
            let v = g.push_token(3, Some("\u{a0}".as_bytes()));
            assert!(v.action < Action::Halt, "{v:?}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Tables of combinations, as type tests and overload sets are written: every line is a
    /// call or a signature made of a few names used again and again, in a new combination.
    /// Lines shaped as code (`name(`, `a_b`) are code wherever they stand, so they never halt
    /// as a near loop of prose.
    #[test]
    fn tables_of_combinations_never_halt(
        pairs in proptest::collection::vec((0usize..8, 0usize..8, 0usize..4), 40..80),
    ) {
        const ARGS: [&str; 8] = ["AR_f", "AR_i", "f4", "i8", "u8", "b_", "c16", "AR_LIKE_f"];
        const TYPES: [&str; 4] = ["np.float64", "np.int64", "Any", "npt.NDArray[np.float64]"];
        let mut tests = String::new();
        let mut stubs = String::new();
        let mut seen = std::collections::HashSet::new();
        for &(a, b, t) in &pairs {
            if seen.insert((a, b)) {
                tests += &format!("assert_type({} + {}, {})\n", ARGS[a], ARGS[b], TYPES[t]);
                stubs += &format!(
                    "@overload\ndef add(x1: {}, x2: {}) -> {}: ...\n",
                    ARGS[a], ARGS[b], TYPES[t]
                );
            }
        }
        for s in presets() {
            for text in [&tests, &stubs] {
                let got = halts(&s, text);
                prop_assert!(got.iter().all(Option::is_none), "{}: {:?}", text, got);
            }
        }
    }

    /// A list that names a new thing on every line (a syntax file's keywords, a menu) is
    /// regular, not a near loop: it does not even warn.
    #[test]
    fn keyword_lists_with_fresh_names_do_not_warn(
        names in proptest::collection::hash_set(name(), 40..80),
    ) {
        let text: String = names
            .iter()
            .map(|n| format!("syn match sqlGlobals '@@{n}'\n"))
            .collect();
        for s in presets() {
            let alarms = first_alarms(&s, &text);
            prop_assert!(alarms.iter().all(Option::is_none), "{}: {:?}", text, alarms);
        }
    }
}

/// One call wrapped over several lines, written out three times (a test expecting three
/// retries), is an unrolled statement and does not halt; an import written out again does
/// nothing, so it halts as any exact loop does.
#[test]
fn wrapped_calls_are_unrolled_and_imports_are_not() {
    let call = "    $this->expectHttpRequest($url,\n                             \
                RequestMethod::GET,\n                             $headers,\n                             \
                null,\n                             $failure);\n";
    let test = format!(
        "  public function testRetries() {{\n    $failure = ['status_code' => 500];\n{}    \
         $this->assertFalse(file_get_contents('gs://bucket/object.png'));\n  }}\n",
        call.repeat(3)
    );
    for s in presets() {
        let got = halts(&s, &test).map(|h| h.map(|(_, v)| v));
        assert_eq!(got, [None, None], "{test}");
    }
    // With tokens the import halts once its copies cover the halt span, as a loop in prose
    // does (an unrolled line waits for its eighth copy); as text, whose symbols are words, once the copies also
    // cover the halt span.
    let imports = format!(
        "import os\nimport sys\n{}",
        "import bank_account.account_data_service\n".repeat(30)
    );
    for s in presets() {
        let [tokens, text] = halts(&s, &imports);
        let (line, v) = tokens.expect("the import loop fed as tokens did not halt");
        assert!(line < 2 + 8, "tokens halted at line {line}: {v:?}");
        assert!(text.is_some(), "the import loop fed as text did not halt");
    }
}

/// A comment is prose, and so is a sentence in a string or between tags: a line of code that
/// says something in words, written out again, halts once its copies cover the halt span, as
/// a loop in prose does; an unrolled statement waits for its eighth copy. Three short comment
/// lines alike, as people write them in an example's output, do not halt.
#[test]
fn a_comment_or_a_sentence_written_again_halts_as_prose_does() {
    let head = "def flatten(items):\n    result = []\n";
    let prose = [
        "    # The flattened list will be a list of integers.\n",
        "    // The flattened list will be a list of integers.\n",
        "    -- The flattened list will be a list of integers.\n",
        "    print(\"The flattened list will be a list of integers.\")\n",
        "    <p class=\"note\">The flattened list will be a list of integers.</p>\n",
    ];
    let statement = format!(
        "{head}{}",
        "    result.append(flatten_list_of_integers(items, result));\n".repeat(20)
    );
    for line in prose {
        let looped = format!("{head}{}", line.repeat(20));
        for s in presets() {
            let [tokens, text] = halts(&s, &looped);
            let (at, v) = tokens.unwrap_or_else(|| panic!("{line} as tokens: no halt"));
            assert!(at < 2 + 5, "{line} as tokens halted at line {at}: {v:?}");
            let (at, v) = text.unwrap_or_else(|| panic!("{line} as text: no halt"));
            assert!(at < 2 + 8, "{line} as text halted at line {at}: {v:?}");
            let (at, v) = halts(&s, &statement)[0].expect("the statement halts");
            assert!(at >= 2 + 7, "the statement halted at line {at}: {v:?}");
        }
    }
    let example = "/**\n * Emits the value last.\n * ```ts\n * of('move').pipe(endWith('tick'))\n \
                   * // 'move'\n * // 'tick'\n * // 'tick'\n * // 'tick'\n * ```\n */\n\
                   export function endWith<T>(...values: T[]) {\n  return concat(values);\n}\n";
    // A program's output shown in a document, three lines alike: long enough to cover the
    // halt span, but three copies, as people show them.
    let output = format!(
        "Start the server and watch its log:\n\n```console\n$ node server.js\n{}```\n\n\
         Each worker says the same when it is ready.\n",
        "  worker is listening on the port you gave and is ready to accept connections from \
         clients now\n"
            .repeat(3)
    );
    for s in presets() {
        assert_eq!(halts(&s, example).map(|h| h.map(|(_, v)| v)), [None, None]);
        assert_eq!(halts(&s, &output).map(|h| h.map(|(_, v)| v)), [None, None]);
    }
}

/// `text` halts by line `last` (counting from 0) at `s`, fed as tokens with pieces and as text.
fn assert_halts_by(s: &StreamSettings, text: &str, last: usize, what: &str) {
    for (way, h) in ["tokens", "text"].iter().zip(halts(s, text)) {
        let (at, v) = h.unwrap_or_else(|| panic!("{what} as {way} does not halt"));
        assert!(at <= last, "{what} as {way} halted at line {at}: {v:?}");
    }
}

/// An assignment that calls nothing and does not read what it assigns does nothing the second
/// time: written again and again it halts as any loop does, from its third copy once the
/// copies cover the halt span. One that reads what it changes is an unrolled step and waits
/// for its eighth copy.
#[test]
fn an_assignment_that_changes_nothing_again_halts_as_any_loop_does() {
    let head = "def configure(config, settings):\n";
    let same = "    config.retry_policy.max_attempts = DEFAULT_MAX_ATTEMPTS if settings.strict else FALLBACK\n";
    let step = "    config.retry_policy.max_attempts = config.retry_policy.max_attempts * BACKOFF + EXTRA\n";
    for s in presets() {
        assert_halts_by(
            &s,
            &format!("{head}{}", same.repeat(20)),
            1 + 4,
            "the assignment",
        );
        let (at, v) = halts(&s, &format!("{head}{}", step.repeat(20)))[0].expect("the step halts");
        assert!(at > 7, "the step halted at line {at}: {v:?}");
    }
}

/// An object, a mapping or a rule of style holds a key once: the same key and value given
/// again and again halt as any loop does, while a config of keys each given once does not.
#[test]
fn a_key_given_again_and_again_halts_as_any_loop_does() {
    let head = "const pool = {\n  name: 'primary',\n";
    let key = "  connectionTimeoutMillis: DEFAULT_CONNECTION_TIMEOUT_MILLIS * RETRY_FACTOR,\n";
    for s in presets() {
        assert_halts_by(&s, &format!("{head}{}", key.repeat(20)), 2 + 4, "the key");
    }
    let config: String = std::iter::once(head.to_string())
        .chain(
            [
                "idleTimeoutMillis",
                "maxUses",
                "statementTimeout",
                "queryTimeout",
            ]
            .iter()
            .map(|k| format!("  {k}: DEFAULT_CONNECTION_TIMEOUT_MILLIS * RETRY_FACTOR,\n")),
        )
        .chain(std::iter::once("};\n".to_string()))
        .collect();
    for s in presets() {
        assert_eq!(halts(&s, &config).map(|h| h.map(|(_, v)| v)), [None, None]);
    }
}

/// A declaration made again right after itself declares nothing new (most languages refuse
/// it): written on and on it halts as any loop does; a list of fields, each declared once,
/// does not.
#[test]
fn a_declaration_made_again_and_again_halts_as_any_loop_does() {
    let head = "struct list_node {\n    int value;\n";
    let decl = "    struct list_node *next_node_in_the_same_bucket_of_the_table;\n";
    for s in presets() {
        assert_halts_by(
            &s,
            &format!("{head}{}", decl.repeat(20)),
            2 + 6,
            "the declaration",
        );
    }
    let fields: String = std::iter::once(head.to_string())
        .chain(
            ["prev", "next", "parent", "first_child", "next_sibling"]
                .iter()
                .map(|f| {
                    format!("    struct list_node *{f}_node_in_the_same_bucket_of_the_table;\n")
                }),
        )
        .chain(std::iter::once("};\n".to_string()))
        .collect();
    for s in presets() {
        assert_eq!(halts(&s, &fields).map(|h| h.map(|(_, v)| v)), [None, None]);
    }
}

/// On ids alone nothing says what is new, so a near loop warns as it always did (the
/// new-word rate holds back warnings only where the text is known).
#[test]
fn on_ids_alone_a_near_loop_still_warns() {
    let config = StreamConfig::new(&StreamSettings::preset(Preset::Balanced)).unwrap();
    let mut g = StreamGuard::new(&config);
    let block: Vec<u32> = (0..40).map(|k| 1000 + k * 7).collect();
    let mut first = None;
    for copy in 0..12u32 {
        for (k, &id) in block.iter().enumerate() {
            // Each copy changes a different symbol: no two copies alike back to back.
            let id = if k as u32 == copy * 3 {
                50_000 + copy
            } else {
                id
            };
            let v = g.push_token(id, None);
            if v.action >= Action::Warn && first.is_none() {
                first = Some(v);
            }
        }
    }
    let v = first.expect("no warning on a near loop fed as ids");
    assert_eq!(v.kind, LoopKind::NearLoop, "{v:?}");
}

/// A line of code written without a space (`library(df)`) is one symbol when read as text:
/// repeated, it still halts by its eighth copy (or the preset's `line_halt_copies`, if
/// more), however it is fed, and not only after the count a word stutter needs.
#[test]
fn a_line_without_spaces_repeated_halts_by_its_eighth_copy() {
    let text = format!("x <- read.csv(f)\n{}", "library(df)\n".repeat(40));
    for s in presets() {
        for (way, h) in halts(&s, &text).iter().enumerate() {
            let (line, v) = h.unwrap_or_else(|| panic!("way {way} did not halt"));
            // One line more: a 16-byte chunk of text may end past the line that halts.
            let copies = s.line_halt_copies.max(8) as usize;
            assert!(
                line <= 1 + copies + 1,
                "way {way} halted at line {line}: {v:?}"
            );
        }
    }
}

/// Markup has no loop statement, so an enumeration in it is written out whole: twelve
/// workspaces of a keybinding schema, three lines each, do not halt (ten do not even warn); the same ladder of a block
/// in code (`elif n == 5: return 5`, what a loop is for) halts; and markup counting on past
/// any enumeration (40 copies) halts too.
#[test]
fn a_ladder_in_markup_runs_as_long_as_what_it_enumerates() {
    let block = |n: u32| {
        format!(
            "    <key name=\"move-to-desk-{n}\" type=\"as\">\n      <default>[]</default>\n      \
             <summary>Move the window to desk {n}</summary>\n    </key>\n"
        )
    };
    let schema = |copies: u32| {
        let mut t = String::from("<schemalist>\n  <schema id=\"org.example.desks\">\n");
        for n in 1..=copies {
            t += &block(n);
        }
        t + "  </schema>\n</schemalist>\n"
    };
    for s in presets() {
        let human = schema(12);
        assert_eq!(halts(&s, &human), [None, None], "{human}");
        let alarms = first_alarms(&s, &schema(10));
        assert!(alarms.iter().all(Option::is_none), "{alarms:?}");
    }
    for (way, h) in halts(&StreamSettings::default(), &schema(40))
        .iter()
        .enumerate()
    {
        let (_, v) = h
            .as_ref()
            .unwrap_or_else(|| panic!("way {way}: no halt at 40 desks"));
        assert_eq!(v.kind, LoopKind::CounterLadder, "way {way}: {v:?}");
    }
    let mut code = String::from("def desk(n):\n    if n == 1:\n        return 1\n");
    for n in 2..=20 {
        code += &format!("    elif n == {n}:\n        return {n}\n");
    }
    for (way, h) in halts(&StreamSettings::default(), &code).iter().enumerate() {
        let (line, v) = h
            .as_ref()
            .unwrap_or_else(|| panic!("way {way}: no halt in code"));
        assert_eq!(v.kind, LoopKind::CounterLadder, "way {way}: {v:?}");
        assert!(*line < 30, "way {way}: halted at line {line}");
    }
}

/// A one-line ladder whose lines each name something new (registers `r0` to `r31` of a
/// target description) is a table: it neither halts nor warns, as long as tables are written
/// out by hand; past 64 names (`int num65;`) it halts. Counting on with nothing new
/// (`if size == 17: return True`) warns, then halts.
#[test]
fn a_ladder_that_names_something_new_on_each_line_does_not_warn() {
    let mut regs = String::from("<feature name=\"org.example.core\">\n");
    for n in 0..32 {
        regs += &format!("  <reg name=\"r{n}\" bitsize=\"64\" type=\"uint64\"/>\n");
    }
    regs += "</feature>\n";
    for s in presets() {
        let alarms = first_alarms(&s, &regs);
        assert!(alarms.iter().all(Option::is_none), "{alarms:?}");
    }
    let mut names = String::from("int main(void) {\n");
    for n in 1..=100 {
        names += &format!("    int num{n};\n");
    }
    for (way, h) in halts(&StreamSettings::default(), &names).iter().enumerate() {
        let (line, v) = h
            .as_ref()
            .unwrap_or_else(|| panic!("way {way}: no halt at 100 names"));
        assert_eq!(v.kind, LoopKind::CounterLadder, "way {way}: {v:?}");
        assert!((60..=70).contains(line), "way {way}: halted at line {line}");
    }
    let mut ladder = String::from("def fits(size):\n");
    for n in 1..=40 {
        ladder += &format!("    if size == {n}: return True\n");
    }
    let s = StreamSettings::preset(Preset::Balanced);
    for (way, v) in first_alarms(&s, &ladder).iter().enumerate() {
        let v = v
            .as_ref()
            .unwrap_or_else(|| panic!("way {way}: no warning"));
        assert_eq!(v.kind, LoopKind::CounterLadder, "way {way}: {v:?}");
    }
    for (way, h) in halts(&s, &ladder).iter().enumerate() {
        assert!(h.is_some(), "way {way}: no halt on a 40-step ladder");
    }
}

/// A blank bitmap or a zeroed buffer written as a list of one number (`0x00, 0x00,` row after
/// row) is as long as the buffer: a 32×32 icon (128 bytes) whose last seven rows are blank
/// does not halt. A list of zeros that goes on past any buffer still halts.
#[test]
fn a_buffer_written_as_a_list_is_data_as_long_as_the_buffer() {
    let mut icon = String::from("static unsigned char icon_bits[] = {\n");
    for row in 0..4 {
        icon += &format!(
            "   0x00, 0x0{row}, 0xe0, 0x01, 0x00, 0x00, 0xf0, 0x03, 0x00, 0x00, 0xf0, 0x03,\n"
        );
    }
    for _ in 0..7 {
        icon += "   0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,\n";
    }
    icon += "   0x00, 0x00, 0x00, 0x00};\n";
    for s in presets() {
        assert_eq!(halts(&s, &icon), [None, None], "{icon}");
    }
    let runaway = format!("zeros = [{}", "0x00, ".repeat(2000));
    for (way, h) in halts(&StreamSettings::default(), &runaway)
        .iter()
        .enumerate()
    {
        assert!(h.is_some(), "way {way}: no halt on 2,000 zeros in a list");
    }
}

/// A list wrapped over indented lines is still a buffer: a table of one long hex word, three
/// to a line under twelve spaces of indentation (the fill was read over 64 bytes before the
/// loop's copy, which held one whole item), does not halt while it is as long as a buffer;
/// past it, it halts.
#[test]
fn a_list_wrapped_over_indented_lines_is_a_buffer() {
    let table = |rows: usize| {
        let mut t = String::from("    static immutable ulong[] levels = [\n");
        t += "            0x104030303030200, 0x306030303030305,\n";
        for _ in 0..rows {
            t += "            0x303030303030303, 0x303030303030303, 0x303030303030303,\n";
        }
        t + "            0x0, 0x0];\n"
    };
    for s in presets() {
        let human = table(20);
        assert_eq!(halts(&s, &human), [None, None], "{human}");
    }
    for (way, h) in halts(&StreamSettings::default(), &table(80))
        .iter()
        .enumerate()
    {
        assert!(h.is_some(), "way {way}: no halt past a buffer's length");
    }
}

/// A block that comes back one level deeper each copy (`val year_sort: Book {` inside itself)
/// is a loop the exact engines cannot see, as its indentation changes every copy: it halts
/// by its eighth line. The same line nested three deep, and a retry nested once in its own
/// `except`, as people write them, do not warn.
#[test]
fn a_block_nesting_itself_halts() {
    let mut nest = String::from("class Book {\n");
    for depth in 1..40 {
        let pad = "    ".repeat(depth);
        nest += &format!("{pad}val year: Int = year\n{pad}val year_sort: Book {{\n");
    }
    for (way, h) in halts(&StreamSettings::default(), &nest).iter().enumerate() {
        let (line, v) = h.as_ref().unwrap_or_else(|| panic!("way {way}: no halt"));
        assert!(*line <= 12, "way {way}: halted at line {line}: {v:?}");
    }
    let retry = "def fetch(url):\n    try:\n        page = get_page(url, timeout=10)\n        \
                 record_visit(url, page)\n    except TimeoutError:\n        log_retry(url)\n        \
                 try:\n            page = get_page(url, timeout=10)\n            \
                 record_visit(url, page)\n        except TimeoutError:\n            \
                 log_retry(url)\n            raise\n    return page\n";
    for s in presets() {
        let alarms = first_alarms(&s, retry);
        assert!(alarms.iter().all(Option::is_none), "{alarms:?}");
    }
    let human = "def walk(tree):\n    for node in tree:\n        if node.children:\n            \
                 for node in node.children:\n                if node.children:\n                    \
                 for node in node.children:\n                        visit(node)\n    return tree\n";
    for s in presets() {
        let alarms = first_alarms(&s, human);
        assert!(alarms.iter().all(Option::is_none), "{alarms:?}");
    }
}

/// A name that runs on without a space (`date_published_by_author_by_author…`) is read as
/// text in pieces cut at its underscores, as tokenizers cut it: its loop halts within a few
/// hundred bytes, not once forty 24-byte slices have gone by.
#[test]
fn a_name_running_on_without_a_space_halts_as_text() {
    let text = format!(
        "schema:\n  posts:\n    title: \"posts\"\n    date_published{}",
        "_by_author".repeat(60)
    );
    for (way, h) in halts(&StreamSettings::default(), &text).iter().enumerate() {
        assert!(h.is_some(), "way {way}: no halt in 600 bytes of one suffix");
    }
}

/// A syntax file matches process ids with one pattern per digit (`"\d\+0="` … `"\d\+9="`):
/// a regular expression's escape makes a line code, where a ladder of ten is how people
/// write it, not prose repeating itself.
#[test]
fn lines_with_a_pattern_escape_are_code() {
    let mut vim = String::from("\" Vim syntax file for a log format\nsyn case match\n");
    for d in 0..10 {
        vim += &format!("syn match logPid{d} \"\\d\\+{d}=\" contained nextgroup=logPidRest\n");
    }
    vim += "hi def link logPid0 Special\n";
    for s in presets() {
        assert_eq!(halts(&s, &vim), [None, None], "{vim}");
    }
}

/// What a stream of text is judged does not depend on how it is cut: a code ladder followed
/// by markup lines, and a markup ladder followed by code, fed whole, in 16-byte chunks and a
/// byte at a time, warn (and halt) alike: whether a ladder is markup is read with the lines it
/// repeats, not from lines read after them in the same push.
#[test]
fn ladders_next_to_markup_are_judged_alike_however_the_text_is_cut() {
    let mut code_then_markup = String::from("def scale(size):\n");
    for n in 1..=8 {
        code_then_markup += &format!("    if size == {n}:\n        return size * {n}\n");
    }
    code_then_markup +=
        "<item name=\"first\" kind=\"plain\"/>\n<item name=\"second\" kind=\"plain\"/>\n";
    let mut markup_then_code = String::new();
    for n in 1..=20 {
        markup_then_code +=
            &format!("<option value=\"{n}\">\n  <label>Day {n}</label>\n</option>\n");
    }
    markup_then_code += "x = compute(a, b)\ny = compute(b, a)\n";
    for text in [&code_then_markup, &markup_then_code] {
        for s in presets() {
            let config = StreamConfig::new(&s).unwrap();
            let judged = |cut: usize| {
                let mut g = StreamGuard::new(&config);
                for chunk in text.as_bytes().chunks(cut) {
                    g.push_text(chunk);
                }
                g.finish_text();
                // A push answers once, at its end: what is compared is whether the stream
                // warned and halted, not at which push.
                let st = g.stats();
                (st.first_warn_at.is_some(), st.halted_at.is_some())
            };
            let whole = judged(text.len());
            assert_eq!(judged(16), whole, "{text}");
            assert_eq!(judged(1), whole, "{text}");
        }
    }
}

/// A ladder whose rung is a block of lines, each copy naming new things densely, is a table:
/// the channels of a device as `#define`s or struct fields, a `switch` dispatching each case
/// to its own handler. It does not halt, as long as tables are written out by hand. A block
/// written out again with only a numbered name new in it (one new word among a dozen it
/// repeats) is a model's runaway and halts. A block unrolled four times (the rounds of a
/// hash) does not halt; unrolled on and on, it does.
#[test]
fn a_table_of_named_blocks_is_not_a_ladder_and_a_renamed_block_is() {
    let mut defines = String::from("/* DMA controller */\n");
    let mut fields = String::from("struct dma_regs {\n");
    let mut cases =
        String::from("static int dispatch(int op, struct ctx *ctx)\n{\n    switch (op) {\n");
    for n in 0..32 {
        let base = 0x100 * (n + 1);
        defines += &format!(
            "#define DMA{n}_CTRL   0x{base:04x}\n#define DMA{n}_STAT   0x{:04x}\n#define DMA{n}_ADDR   0x{:04x}\n",
            base + 4,
            base + 8
        );
        fields += &format!("    uint32_t ch{n}_ctrl;\n    uint32_t ch{n}_stat;\n");
        cases += &format!("    case {n}:\n        return handle_{n}(ctx);\n");
    }
    fields += "};\n";
    cases += "    }\n    return -1;\n}\n";
    // Rounds of six lines, the registers rotating: four of them are 24 lines, as many as
    // a ladder needs, but four copies.
    let mut rounds = String::from("TEXT ·block(SB),NOSPLIT,$0\n");
    let regs = ["AX", "BX", "CX", "DX", "BP", "SI"];
    let round = |i: usize| {
        (0..6)
            .map(|r| {
                let name = |k: usize| regs[(k + 6 - r) % 6];
                let names: Vec<&str> = (0..6).map(name).collect();
                format!("\tROUND1({}, {})\n", names.join(", "), 6 * i + r)
            })
            .collect::<String>()
    };
    for i in 0..4 {
        rounds += &round(i);
    }
    rounds += "\tRET\n";
    for s in presets() {
        for text in [&defines, &fields, &cases, &rounds] {
            let [a, b] = halts(&s, text);
            assert!(a.is_none() && b.is_none(), "{a:?} {b:?} on\n{text}");
        }
    }
    let unrolled: String = (0..20).map(round).collect();
    let mut renamed = String::new();
    for n in 1..=20 {
        renamed += &format!(
            "const debouncedHandler{n} = debounce(function() {{\n  return function() {{\n    setTimeout(() => {{\n      debouncedHandler{n}();\n    }}, 100);\n  }};\n}});\n\n"
        );
    }
    let s = StreamSettings::preset(Preset::Balanced);
    assert_ladder_halts(&s, &unrolled);
    for (way, h) in halts(&s, &renamed).iter().enumerate() {
        let (line, v) = h
            .as_ref()
            .unwrap_or_else(|| panic!("way {way}: the renamed block did not halt"));
        assert_eq!(v.kind, LoopKind::CounterLadder, "way {way}: {v:?}");
        assert!(*line <= 8 * 10, "way {way}: halted at line {line}");
    }
}

/// A ladder's numbers all step alike, copy after copy: all of them, however many a copy
/// holds. Two rounds of a hash unrolled in assembly load the next words (numbers that count)
/// and then name the eight working registers rotated by two (numbers that wrap around past
/// the tenth of the block): not a ladder, however far it is unrolled. The same block with
/// its registers fixed is a model writing the block again with a counter, and halts.
#[test]
fn a_block_whose_later_numbers_rotate_is_not_a_ladder() {
    let block = |k: usize, rotate: bool| {
        let r = |i: usize| if rotate { (i + 8 - (2 * k) % 8) % 8 } else { i };
        let regs = |first: usize, w: usize| {
            let v: Vec<String> = (0..8).map(|i| format!("v{}", r(first + i))).collect();
            format!("\tROUND0({}, v{w})\n", v.join(", "))
        };
        format!(
            "\tlxvd2x\tvs{}, 0(inp)\t# words {} and {} of the block\n\taddi\tinp, inp, 16\n\
             \tvsldoi\tv{}, v{}, v{}, 8\n{}\tvpermle\tv{}, v{}, mask\n{}",
            32 + 2 * k,
            2 * k,
            2 * k + 1,
            17 + 2 * k,
            16 + 2 * k,
            16 + 2 * k,
            regs(0, 16 + 2 * k),
            18 + 2 * k,
            18 + 2 * k,
            regs(7, 17 + 2 * k),
        )
    };
    let rounds = |rotate: bool| {
        let body: String = (0..12).map(|k| block(k, rotate)).collect();
        format!("sha512_block:\n{body}\tblr\n")
    };
    for s in presets() {
        let [a, b] = halts(&s, &rounds(true));
        assert!(
            a.is_none() && b.is_none(),
            "{a:?} {b:?} on\n{}",
            rounds(true)
        );
    }
    assert_ladder_halts(&StreamSettings::preset(Preset::Balanced), &rounds(false));
}

/// Entries of a changelog or a bug list carry their own key, a date, an issue number or a
/// version, however alike their words (`512307  Port to the new scheduler, part 4`): a list
/// of records, which may warn but never halts as repeated lines. Lines whose numbers vary
/// with no key among them (`- 2g grated cheese`, `- 1g grated cheese`: values that come
/// back) are a loop and halt.
#[test]
fn records_with_their_own_key_are_not_a_loop() {
    let ids = [
        512301, 512307, 512308, 512330, 512331, 512345, 512352, 512353, 512360, 512371, 512372,
        512390, 512402, 512415,
    ];
    let mut bugs =
        String::from("Bugs fixed in this release:\n\n511980  Crash when the log is empty\n");
    for (part, id) in ids.iter().enumerate() {
        bugs += &format!("{id}  Port to the new scheduler, part {}\n", part + 1);
    }
    bugs += "512500  Wrong exit status after a signal\n";
    let dates = [
        "2024-11-30",
        "2024-10-02",
        "2024-08-17",
        "2024-08-01",
        "2024-05-23",
        "2024-03-09",
        "2023-12-28",
        "2023-11-11",
        "2023-07-04",
        "2023-06-30",
        "2023-02-14",
        "2022-12-01",
    ];
    let mut log = String::new();
    for (k, date) in dates.iter().enumerate() {
        log += &format!(
            "{date}  Jane Roe\n\n   * version-info: 0:{}:0\n\n   * all: merge the upstream release\n\n",
            70 - 3 * k - k % 2
        );
    }
    for s in presets() {
        for text in [&bugs, &log] {
            let [a, b] = halts(&s, text);
            assert!(a.is_none() && b.is_none(), "{a:?} {b:?} on\n{text}");
        }
    }
    let releases: String = (0..12)
        .map(|m| {
            format!(
                "Version 2.{}.0 fixes the parser and updates the docs.\n",
                40 - m
            )
        })
        .collect();
    for s in presets() {
        let [a, b] = halts(&s, &releases);
        assert!(a.is_none() && b.is_none(), "{a:?} {b:?} on\n{releases}");
    }
    // The link targets at a section's end, one per issue it names, in the order written (a
    // list of records as long as 24 halts, as sorted change log entries do).
    let issues = [
        218, 240, 236, 251, 263, 262, 270, 288, 291, 305, 301, 312, 330, 334, 329, 341, 356, 360,
        372, 371,
    ];
    let targets: String = issues
        .iter()
        .map(|n| format!(".. _issue {n}: https://tracker.example.org/project/issues/{n}\n"))
        .collect();
    for s in presets() {
        let [a, b] = halts(&s, &targets);
        assert!(a.is_none() && b.is_none(), "{a:?} {b:?} on\n{targets}");
    }
    // Records warn as much later as they halt: eight of them are a list, no loop yet.
    let few: String = targets.lines().take(8).map(|l| format!("{l}\n")).collect();
    for s in presets() {
        let alarms = first_alarms(&s, &few);
        assert!(alarms.iter().all(Option::is_none), "{alarms:?} on\n{few}");
    }
    // Loops whose numbers vary but key nothing: values that come back, random values,
    // a counter first on the line with a value beside it.
    let grams = [
        1, 1, 2, 1, 3, 2, 2, 1, 4, 1, 2, 2, 3, 1, 1, 2, 1, 2, 3, 1, 2, 1, 1, 2,
    ];
    let random = [
        48213, 907, 33120, 5519, 70002, 12876, 64440, 2301, 88817, 41095, 77, 30548, 9923, 61710,
        15052, 83391, 26644, 540, 71938, 37265, 4480, 99102, 21367, 58029,
    ];
    let loops = [
        grams
            .iter()
            .map(|g| format!("- {g}g grated cheese\n"))
            .collect::<String>(),
        random
            .iter()
            .map(|r| format!("- Order #{r} has been shipped to you.\n"))
            .collect(),
        random
            .iter()
            .enumerate()
            .map(|(k, r)| format!("{}. The answer is {}.\n", k + 1, r % 1000))
            .collect(),
        (1..=24)
            .map(|k| format!("The square of {k} is {}.\n", k * k))
            .collect(),
        random
            .iter()
            .map(|r| {
                format!(
                    "Upgrade to version {}.{}.{} first.\n",
                    r % 7,
                    r % 13,
                    r % 100
                )
            })
            .collect(),
    ];
    for text in &loops {
        for (way, h) in halts(&StreamSettings::default(), text).iter().enumerate() {
            let (line, _) = h
                .as_ref()
                .unwrap_or_else(|| panic!("way {way}: the loop did not halt: {text}"));
            assert!(*line <= 12, "way {way}: halted at line {line} of {text}");
        }
    }
    // A sentence written again around a number no other copy holds, three digits or more, is
    // read as records (a list of links to issues looks the same): it halts, three times later.
    let ids: String = (random.iter().chain(&random))
        .filter(|&&r| r >= 100)
        .enumerate()
        .map(|(k, r)| format!("- Order #{} has been shipped to you.\n", r + k as u32))
        .collect();
    for (way, h) in halts(&StreamSettings::default(), &ids).iter().enumerate() {
        let (line, _) = h
            .as_ref()
            .unwrap_or_else(|| panic!("way {way}: the loop did not halt: {ids}"));
        assert!(
            (20..=30).contains(line),
            "way {way}: halted at line {line} of {ids}"
        );
    }
}

/// Generated release notes: each entry the same words around a new pull request's number
/// (steps that do not repeat), a version and one of a few authors. A pull request is news;
/// a number that counts is not (see `a_long_number_is_news_unless_it_counts`).
#[test]
fn release_notes_linking_each_pull_request_are_not_a_loop() {
    let authors = ["@ana-dev", "@bkowalski", "@chen"];
    let mut pr = 2810;
    let mut notes = String::new();
    for k in 0..48usize {
        pr += [3, 7, 1, 12, 5, 2, 9, 4, 16, 6][k % 10] + k / 10;
        notes += &format!(
            "* Add Runtime {}.{}.{} by {} in https://github.com/example/tool/pull/{pr}\n",
            3 + k % 2,
            9 + k % 5,
            k % 7,
            authors[(k * 7 / 3) % 3],
        );
        if k % 6 == 5 {
            notes += &format!("\n## Release v2.{}.0\n", 60 - k / 6);
        }
    }
    for s in presets() {
        let [a, b] = halts(&s, &notes);
        assert!(a.is_none() && b.is_none(), "{a:?} {b:?} on\n{notes}");
    }
    // One entry written again and again, its number counted up or stepped evenly, is a loop.
    for step in [1, 3] {
        let looped: String = (0..48)
            .map(|k| {
                format!(
                    "* Add Runtime 3.9.1 by @chen in https://github.com/example/tool/pull/{}\n",
                    2810 + step * k
                )
            })
            .collect();
        for (way, h) in ["tokens", "text"]
            .iter()
            .zip(halts(&StreamSettings::default(), &looped))
        {
            let (line, v) = h.unwrap_or_else(|| panic!("{way}: no halt on\n{looped}"));
            assert!(line <= 30, "{way}: halted at line {line} {v:?}");
        }
    }
}

/// A rule drawn with a pattern of punctuation and single letters (`=x=x=x=`) is a
/// decoration between sections, as long as a line: it does not halt. Longer than a line it is
/// a loop, and so are tags, escapes and paths written again and again.
#[test]
fn a_rule_drawn_with_a_letter_is_a_decoration() {
    let rule = "=x".repeat(39) + "=\n";
    let text = format!(
        "See the list of changes for details.\n\n{rule}\nNews for version 3.1\n\nColour support.\n\n{rule}\nNews for version 3.0\n\nA new parser.\n"
    );
    for s in presets() {
        let [a, b] = halts(&s, &text);
        assert!(a.is_none() && b.is_none(), "{a:?} {b:?}");
    }
    for endless in [
        "=x".repeat(600),
        "<p></p>".repeat(300),
        "\\r\\n".repeat(400),
    ] {
        for (way, h) in halts(&StreamSettings::default(), &endless)
            .iter()
            .enumerate()
        {
            assert!(h.is_some(), "way {way}: no halt on {}", &endless[..40]);
        }
    }
}

/// Bytes of `text` pushed when the guard first halts (see [`first_halts`]), with the verdict.
fn halt_bytes(settings: &StreamSettings, text: &str) -> [Option<(usize, Verdict)>; 2] {
    first_halts(settings, text).map(|h| h.map(|(_, bytes, v)| (bytes, v)))
}

/// The copy of a part of `unit` bytes said on in a name by which the guard halts: the tenth,
/// or the one by which the loop spans the symbols the exact-loop detector needs to report it
/// (`warn_span`; a piece of `tokenize` holds at most 5 bytes, so a symbol at most one unit or
/// 5 bytes of them), and then the copies a piece or a chunk of text that ends it holds.
fn last_copy(s: &StreamSettings, unit: usize) -> usize {
    let per_symbol = 5.0f64.max(unit as f64) / unit as f64;
    10.max((s.warn_span as f64 * per_symbol).ceil() as usize) + 16 / unit + 1
}

/// A name that says one of its parts on (`create_yaml_yaml_yaml…`) halts once the part came
/// back ten times and the exact-loop detector reports the loop (`warn_span` symbols: a part
/// of one token halts at its 16th copy at `balanced`), in a line of code as anywhere, however
/// the name is joined. Eight times, as people at most say a part, it does not halt, nor do the names people
/// write with a part said again (a walk up a tree, a test of a long name, base64).
#[test]
fn a_name_that_says_one_part_on_halts() {
    let cases = [
        (
            "```python\nimport yaml\n\ndef create",
            "_yaml",
            "(config):\n",
        ),
        (
            "```ts\nclass Rectangle {\n  private off",
            "Type",
            ": any;\n",
        ),
        ("```java\nimport java", ".util", ".List;\n"),
        ("```yaml\nimage: nginx", "-dev", ":latest\n"),
    ];
    for s in presets() {
        for (head, unit, tail) in cases {
            let text = format!("{head}{}{tail}", unit.repeat(60));
            for (way, h) in ["tokens", "text"].iter().zip(halt_bytes(&s, &text)) {
                if *way == "text" && unit == "Type" {
                    // As text a name joined by capitals alone is one long word, not symbols.
                    continue;
                }
                let (at, v) = h.unwrap_or_else(|| panic!("{unit} as {way}: no halt"));
                assert_eq!(v.kind, LoopKind::WordStutter, "{unit} as {way}: {v:?}");
                let copies = (at - head.len()) / unit.len();
                assert!(
                    (9..=last_copy(&s, unit.len())).contains(&copies),
                    "{unit} as {way}: halted at copy {copies}: {v:?}"
                );
            }
            let text = format!("{head}{}{tail}", unit.repeat(8));
            assert_eq!(
                halt_bytes(&s, &text).map(|h| h.map(|h| h.1)),
                [None, None],
                "{text}"
            );
        }
    }
    let human = "```\nuse super::super::super::super::Foundation::HANDLE;\n\
                 root = path.parent.parent.parent.parent\n\
                 name = '_TEST_TEST_TEST_TEST_TEST_TEST_TEST_TEST_TES.txt'\n\
                 host = 'twohundredandfiftythreecharacters.twohundredandfiftythreecharacters.\
                 twohundredandfiftythreecharacters.twohundredandfiftythreecharacters.\
                 twohundredandfiftythreecharacters.twohundredandfiftythreecharacters.\
                 twohundredandfiftythreecharacters.com'\n\
                 blob = 'Y2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2Nj'\n```\n";
    for s in presets() {
        assert_eq!(halt_bytes(&s, human).map(|h| h.map(|h| h.1)), [None, None]);
    }
}

/// The settings bound a name said on as any loop: with `halt_copies` 12 it halts at no copy
/// before the twelfth (at balanced, the tenth; in bytes pushed, a piece early when the loop's
/// first copy begins a symbol early, a 16-byte chunk of text late).
#[test]
fn a_name_said_on_waits_for_the_copies_the_settings_ask() {
    // A part of two pieces, so that the loop is reported from its eighth copy.
    let head = "```java\nimport java";
    let text = format!("{head}{}.List;\n", ".util".repeat(60));
    let copies_at = |s: &StreamSettings| -> Vec<usize> {
        halt_bytes(s, &text)
            .iter()
            .map(|h| {
                let (at, v) = h.unwrap_or_else(|| panic!("no halt"));
                assert_eq!(v.kind, LoopKind::WordStutter, "{v:?}");
                (at - head.len()) / ".util".len()
            })
            .collect()
    };
    let balanced = StreamSettings::preset(Preset::Balanced);
    assert!(
        copies_at(&balanced).iter().all(|&c| (9..=13).contains(&c)),
        "{:?}",
        copies_at(&balanced)
    );
    let mut s = balanced.clone();
    s.halt_copies = 12;
    assert!(
        copies_at(&s).iter().all(|&c| c >= 12),
        "{:?}",
        copies_at(&s)
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// A made-up part said on inside a line of code, joined any way, halts as a name that
    /// stutters, from its tenth copy to the one the exact-loop detector reports it by; said
    /// eight times it does not halt. (The tenth copy in symbols: when the name's head ends as
    /// the part does, the loop's first copy begins a symbol early, so the halt may come a
    /// symbol before the tenth copy's last byte.)
    #[test]
    fn any_part_said_on_in_a_name_halts_from_its_tenth_copy(
        part in name(),
        joint in prop::sample::select(vec!["_", ".", "-", "/", "::", ""]),
        head in name(),
    ) {
        let unit = if joint.is_empty() {
            // Joined by a capital: `offTypeType`.
            let mut p = part.clone();
            p[..1].make_ascii_uppercase();
            p
        } else {
            format!("{joint}{part}")
        };
        let lead = format!("def run(x):\n    value = {head}");
        for s in presets() {
            let text = format!("{lead}{}(x)\n", unit.repeat(80));
            for (way, h) in ["tokens", "text"].iter().zip(halt_bytes(&s, &text)) {
                if *way == "text" && joint.is_empty() {
                    // As text a name joined by capitals alone is one long word, not symbols.
                    continue;
                }
                let (at, v) = h.unwrap_or_else(|| panic!("{unit} as {way}: no halt"));
                let copies = (at - lead.len()) / unit.len();
                prop_assert!(
                    (9..=last_copy(&s, unit.len())).contains(&copies),
                    "{} as {}: halted at copy {}: {:?}", unit, way, copies, v
                );
            }
            let few = format!("{lead}{}(x)\n", unit.repeat(8));
            prop_assert_eq!(halt_bytes(&s, &few).map(|h| h.map(|h| h.1)), [None, None]);
        }
    }
}

/// A table whose entries carry their index in a comment is numbered for its reader, who looks
/// an entry up by its number: a key map over a byte's values (`#  65 A` above each action), an
/// array of handlers with `/* 12 */` before each. It runs as long as its domain, 256 entries,
/// without a halt (a warning past half of it); the same ladders with their numbers in the code
/// instead (`65 => :put_char`) halt, and an indexed ladder past 256 entries halts too. Index
/// comments with no entries between them number nothing: a count like any other.
#[test]
fn a_table_numbered_for_its_reader_runs_over_its_domain() {
    let keymap = |n: u32, indexed: bool| {
        let mut t = String::from("KEYMAP = [\n");
        for k in 0..n {
            let action = if (48..58).contains(&k) {
                "put_digit"
            } else {
                "put_char"
            };
            if indexed {
                let c = char::from_u32(33 + k % 90).unwrap();
                t += &format!("    #  {k} {c}\n    :{action},\n");
            } else {
                t += &format!("    {k} => :{action},\n");
            }
        }
        t + "]\n"
    };
    let handlers = |n: u32, indexed: bool| {
        let mut t = String::from("static const struct handler table[] = {\n");
        for k in 0..n {
            let index = if indexed {
                format!("/* {k} */ ")
            } else {
                String::new()
            };
            t += &format!("\t{index}{{on_default, \"slot {k}\"}},\n");
        }
        t + "};\n"
    };
    for s in presets() {
        for table in [keymap(256, true), handlers(256, true)] {
            assert_eq!(halts(&s, &table), [None, None], "{table}");
        }
        // A warning half way, as ladders of markup warn.
        for table in [keymap(128, true), handlers(128, true)] {
            let alarms = first_alarms(&s, &table);
            assert!(alarms.iter().all(Option::is_none), "{alarms:?}");
        }
    }
    // Comments that say only numbers, one after another, number no entry: a count of years
    // past any copyright line (SmolLM2's `# 2016` … `# 2085`).
    let mut years = String::from("# A package manager\n\n# Copyright (c) 2015\n");
    for y in 2016..2086 {
        years += &format!("# {y}\n");
    }
    let s = StreamSettings::default();
    for table in [
        keymap(100, false),
        handlers(100, false),
        handlers(300, true),
        years,
    ] {
        for (way, h) in halts(&s, &table).iter().enumerate() {
            let (_, v) = h
                .as_ref()
                .unwrap_or_else(|| panic!("way {way}: no halt in {table}"));
            assert_eq!(v.kind, LoopKind::CounterLadder, "way {way}: {v:?}");
        }
    }
}

/// Lines whose counter is part of a name declare numbered names (an interface's
/// `val slotR7 : int`, read as prose: no bracket, no semicolon), as a table does: sixteen of
/// them do not halt at prose's eight lines, and past 64 names they halt, as a one-line ladder
/// of names in code does. A prose line counting on its own (`Step 7 is done.`) still halts at
/// eight.
#[test]
fn prose_lines_counting_in_a_name_declare_names() {
    let names = |n: u32| {
        let mut t = String::from("(* Registers of the toy machine. *)\n\n");
        for k in 0..n {
            t += &format!("val slotR{k} : int\n");
        }
        t + "val slot_count : int\n"
    };
    for s in presets() {
        let human = names(16);
        assert_eq!(halts(&s, &human), [None, None], "{human}");
    }
    for (way, h) in halts(&StreamSettings::default(), &names(80))
        .iter()
        .enumerate()
    {
        let (line, v) = h
            .as_ref()
            .unwrap_or_else(|| panic!("way {way}: no halt at eighty names"));
        assert_eq!(v.kind, LoopKind::CounterLadder, "way {way}: {v:?}");
        assert!(*line <= 70, "way {way}: halted at line {line}");
    }
    let steps: String = (1..=12).map(|k| format!("Step {k} is done.\n")).collect();
    for (way, h) in halts(&StreamSettings::default(), &steps).iter().enumerate() {
        let (line, _) = h
            .as_ref()
            .unwrap_or_else(|| panic!("way {way}: no halt on counted prose"));
        assert!(*line <= 9, "way {way}: halted at line {line}");
    }
}

/// A program's output shown after it: the example prints a sentence in a loop, and the
/// sample output below it says that sentence as often as the loop ran. A line the text
/// printed before, in quotes, is output, judged as a statement written out (eight copies),
/// not as a sentence said again (four): six lines pass. The same six lines with nothing
/// that printed them are a sentence said again and halt.
#[test]
fn output_of_a_printed_line_is_shown_as_often_as_it_ran() {
    let example = |printed: bool| {
        let call = if printed {
            "##       echo \"Still waiting for the lock to clear...\"\n"
        } else {
            "##       echo \"tick\"\n"
        };
        let mut t = String::from(
            "## Waits for the lock.\n##\n## Example:\n##   proc waitLock() =\n##     while locked():\n",
        );
        t += call;
        t += "##       sleep(250)\n##\n## Sample output\n## -------------\n";
        for _ in 0..6 {
            t += "##   Still waiting for the lock to clear...\n";
        }
        t + "##   Lock cleared.\nproc waitLock*() =\n  discard\n"
    };
    for s in presets() {
        let shown = example(true);
        assert_eq!(halts(&s, &shown), [None, None], "{shown}");
    }
    for (way, h) in halts(&StreamSettings::default(), &example(false))
        .iter()
        .enumerate()
    {
        assert!(
            h.is_some(),
            "way {way}: no halt on a sentence said six times"
        );
    }
}

/// An output statement written again says the same thing again, as a sentence does: people
/// write one three times at most (a separator, a random draw shown thrice), so it halts from
/// its fourth copy (and the span a halt needs), not at a statement's eighth. A print without
/// an argument (`print()`, spacing) is a statement like any other. As text a short line is a
/// few words, and the span waits for the line detector's eighth copy.
#[test]
fn an_output_statement_written_again_halts_as_a_sentence_does() {
    let script = |line: &str, n: usize| {
        let mut t = String::from("def show(a, b):\n    total = a + b\n");
        for _ in 0..n {
            t += &format!("    {line}\n");
        }
        t + "    return total\n"
    };
    for s in presets() {
        for human in [
            script("print(\"=\" * 72)", 3),
            script("fmt.Println(rng.Intn(6) + 1)", 3),
            script("print()", 6),
        ] {
            assert_eq!(halts(&s, &human), [None, None], "{human}");
        }
    }
    for line in ["print(a + b)", "console.log(total)", "echo \"$total\""] {
        for (way, h) in halts(&StreamSettings::default(), &script(line, 12))
            .iter()
            .enumerate()
        {
            let (at, _) = h
                .as_ref()
                .unwrap_or_else(|| panic!("way {way}: no halt on {line} written twelve times"));
            // Two lines before the first copy; with tokens by the fourth copy, as text (a
            // short line is four or five words, and a halt needs 40 symbols) by the line's
            // eighth, where any line of code halts.
            let by = if way == 0 { 4 } else { 8 };
            assert!(*at <= 2 + by, "way {way}: {line} halted at line {at}");
        }
    }
}

/// Lisp is written in forms, one to a line at the margin, and its files open with rules of
/// its comment leader: `(define-lane-test u8.16+ …)` line after line with new names, a
/// `;;;;…` rule, an export list of names that carry part numbers (`#:cpu-m680x-6301`,
/// `-6309`, `-6800`) are how people write it. A form written out verbatim again and again
/// still halts, as any line of code does.
#[test]
fn lisp_forms_rules_and_numbered_names_are_human_code() {
    let rule = ";".repeat(72);
    let mut forms = format!(
        "{rule}\n;;;; Tests of the lane operations.\n{rule}\n\n(in-package :lanes-test)\n\n"
    );
    let types = [
        "u8.16", "u16.8", "u32.4", "f32.4", "f64.2", "s8.16", "s16.8", "s32.4",
    ];
    let ops = [
        "+", "-", "*", "min", "max", "and", "or", "xor", "=", "/=", "<", "<=", ">", ">=",
    ];
    for t in types {
        for op in ops {
            forms.push_str(&format!(
                "(lanes-test:define-lane-test {t}{op} ({t}) ({t} &rest {t}) {t}{op})\n"
            ));
        }
    }
    let mut exports =
        String::from("(defpackage \"CPU-MODES\"\n  (:use :common-lisp)\n  (:export\n");
    for part in [
        "6301", "6309", "6800", "6801", "6805", "6808", "6809", "6811", "6812", "6830",
    ] {
        exports.push_str(&format!("   #:cpu-mode-m680x-{part}\n"));
    }
    exports.push_str("   #:cpu-mode-big-endian))\n\n");
    for (bit, part) in [
        "6301", "6309", "6800", "6801", "6805", "6808", "6809", "6811",
    ]
    .iter()
    .enumerate()
    {
        exports.push_str(&format!(
            "(defconstant cpu-mode-m680x-{part} (ash 1 {}))\n",
            bit + 1
        ));
    }
    for s in presets() {
        for text in [&forms, &exports] {
            assert_eq!(
                halts(&s, text).map(|h| h.map(|(_, v)| v.kind)),
                [None, None],
                "{text}"
            );
        }
    }
    let written_again = "(in-package :lanes-test)\n\n".to_string()
        + &"(lanes-test:define-lane-test u8.16+ (u8.16) (u8.16 &rest u8.16) u8.16+)\n".repeat(40);
    for s in presets() {
        let [tokens, text] = halts(&s, &written_again);
        assert!(tokens.is_some() && text.is_some(), "{tokens:?} {text:?}");
    }
}

/// Tables people lay out in columns, and tables of numbered names: a key map whose columns
/// are aligned with runs of spaces (`k-f3   k-shift-mask or constant s-k3   ( -- u )`), in a
/// language whose lines hold no brackets to say they are code, and registers declared with
/// their numbers (`10 constant $t2`: the number steps with the name). A count written in
/// prose lines still halts, aligned or not.
#[test]
fn aligned_columns_and_numbered_names_are_tables() {
    let mut keys = String::from("\\ Function keys with a modifier.\n");
    for (mask, pad) in [("shift", "  "), ("ctrl", "   "), ("alt", "    ")] {
        for k in 1..=12 {
            let name = format!("k-f{k}");
            let gap = if k < 10 { "   " } else { "  " };
            keys += &format!(
                "{name}{gap}k-{mask}-mask{pad}or constant {}-k{k}{gap}( -- u ) \\ keys\n",
                &mask[..1]
            );
        }
    }
    let mut registers = String::from("\\ MIPS registers\n0 constant $zero\n1 constant $at\n");
    for r in 0..8 {
        registers += &format!("{} constant $t{r}\n", 8 + r);
    }
    for r in 0..8 {
        registers += &format!("{} constant $s{r}\n", 16 + r);
    }
    registers += "24 constant $t8\n25 constant $t9\n";
    for s in presets() {
        for text in [&keys, &registers] {
            assert_eq!(
                halts(&s, text).map(|h| h.map(|(_, v)| v.kind)),
                [None, None],
                "{text}"
            );
        }
    }
    let counting: String = (1..=40)
        .map(|d| format!("Day {d}:  I woke up and went to the park again.\n"))
        .collect();
    for s in presets() {
        let [tokens, text] = halts(&s, &counting);
        assert!(tokens.is_some() && text.is_some(), "{tokens:?} {text:?}");
    }
}

/// A preset that waits longer for lines written again waits as much longer for a ladder: an
/// unrolled block of seven copies (Scilab's `check_op1` … `check_op7`, one per operator of a
/// PDE) may halt at balanced, never at lenient, and a ladder that runs on halts at both,
/// later at lenient.
#[test]
fn a_lenient_preset_waits_longer_for_ladders() {
    let block = |i: usize| {
        format!(
            "    if (params_pde.check_op{i} == \"1\") then\n        oper=[oper;{i}];\n        \
             if (stripblanks(b{i}) == \"IN_EDP{i}(t)\") then\n            \
             b{i}=\"inptr[\"+string(k)+\"][0]\";\n            k=k+1;\n        end\n    end\n"
        )
    };
    let text = |n: usize| (1..=n).map(block).collect::<String>() + "endfunction\n";
    let lenient = StreamSettings::preset(Preset::Lenient);
    let balanced = StreamSettings::preset(Preset::Balanced);
    assert_eq!(
        halts(&lenient, &text(7)).map(|h| h.map(|(_, v)| v)),
        [None, None]
    );
    let long = text(40);
    for (way, (b, l)) in halts(&balanced, &long)
        .into_iter()
        .zip(halts(&lenient, &long))
        .enumerate()
    {
        let (b, l) = (b.expect("balanced halts"), l.expect("lenient halts"));
        assert_eq!(l.1.kind, LoopKind::CounterLadder, "way {way}: {l:?}");
        assert!(
            l.0 > b.0,
            "way {way}: lenient at line {}, balanced at {}",
            l.0,
            b.0
        );
    }
}

/// Reference documentation describes each member of a family in the same words, under a
/// heading that names it (a conversion to each unit, rounded down and up): the section's new
/// name is what it says, so the text is not "saying nothing new" however alike the sections.
/// The same sections under headings that name nothing new (a step number) still halt.
#[test]
fn sections_headed_by_a_new_name_say_something_new() {
    let units = [
        ("inch", "in"),
        ("foot", "ft"),
        ("yard", "yd"),
        ("mile", "mi"),
        ("point", "pt"),
        ("pica", "pc"),
        ("cicero", "cc"),
        ("didot", "dd"),
        ("furlong", "fur"),
        ("chain", "ch"),
        ("link", "li"),
        ("rod", "rd"),
        ("hand", "hh"),
        ("span", "sp"),
        ("cubit", "cu"),
    ];
    let section = |heading: &str, code: &str, way: &str| {
        format!(
            "### `{heading}(<length>)`\n\n> Produces a decimal (with up to five decimal places) \
             `D` such that `D{code}`\n> represents the length exactly if possible. If not \
             possible it\n> will be the {way} representable length, and the error is at most \
             one unit\n> in the last place of the result.\n>\n> If the input is the largest \
             length, then `D{code}` virtually represents\n> the largest length plus one unit \
             and will trigger on use \"Length too large\".\n\n"
        )
    };
    let mut doc = String::from("# Conversions\n\nEach macro takes a length expression.\n\n");
    for (unit, code) in units {
        for (suffix, way) in [
            ("", "closest"),
            ("down", "largest smaller"),
            ("up", "smallest larger"),
        ] {
            doc += &section(&format!("lengthto{unit}{suffix}"), code, way);
        }
    }
    for s in presets() {
        assert_eq!(halts(&s, &doc), [None, None], "{s:?}");
    }
    // Sections alike under headings that name nothing new (a step number).
    let mut steps = String::from("# Conversions\n\n");
    for i in 0..units.len() {
        for way in ["closest", "largest smaller", "smallest larger"] {
            steps += &section(&format!("Step {i}"), "in", way);
        }
    }
    // As text, within the third section (with these short tokens near loops halt late).
    for s in presets() {
        let [_, text] = halts(&s, &steps);
        let (line, v) = text.unwrap_or_else(|| panic!("{s:?}: no halt"));
        assert!(line <= 40, "halted at line {line}: {v:?}");
        assert_eq!(v.kind, LoopKind::NearLoop);
    }
}

/// People write a block of statements two or three times (a check repeated on purpose) and go
/// on with a line of their own; a model's loop begins the block again. A block of lines in
/// code halts once its next copy has begun with a word, not at the end of its third copy.
#[test]
fn a_block_written_three_times_then_left_is_not_a_loop() {
    let block =
        "        let reply = session.poll_next().await;\n        assert!(reply.is_none());\n\n";
    let head = "    #[tokio::test]\n    async fn drained_session_stays_drained() -> Result<()> {\n        let mut session = open_session(&store).await?;\n        session.drain().await?;\n\n";
    let human = format!(
        "{head}{}        session.close().await?;\n        Ok(())\n    }}\n",
        block.repeat(3)
    );
    for s in presets() {
        let [a, b] = halts(&s, &human);
        assert!(a.is_none() && b.is_none(), "{a:?} {b:?} on\n{human}");
    }
    // The same block written on halts, at balanced on the first line of its fourth copy
    // (the head is five lines, a copy three).
    let looped = format!("{head}{}", block.repeat(12));
    for (k, s) in presets().iter().enumerate() {
        for h in halts(s, &looped) {
            let (line, v) = h.unwrap_or_else(|| panic!("no halt on\n{looped}"));
            assert_eq!(v.kind, LoopKind::ExactLoop);
            if k == 0 {
                assert_eq!(line, 5 + 3 * 3, "{v:?}");
            }
        }
    }
}

/// A block of statements over fresh names: a call and an assertion for each name.
fn statement_block(names: &[(String, String)]) -> String {
    names
        .iter()
        .zip(["open", "read", "seek"])
        .map(|((v, f), act)| {
            format!("        let {v}_{act} = {f}_{act}(&session).await?;\n        assert!({v}_{act}.is_ok());\n")
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// A block of two to six lines written two or three times over and then left for a line
    /// of its own never halts; written on, it halts by the first line of its fourth copy at
    /// balanced, and at lenient too.
    #[test]
    fn blocks_written_a_few_times_and_left_never_halt_and_written_on_halt(
        names in proptest::collection::vec((name(), name()), 1..4),
        copies in 2usize..4,
        after in name(),
        blank in any::<bool>(),
    ) {
        let sep = if blank { "\n" } else { "" };
        let block = statement_block(&names) + sep;
        let head = "    #[tokio::test]\n    async fn checks() -> Result<()> {\n        let session = open().await?;\n";
        let human = format!("{head}{}        {after}(&session).await?;\n        Ok(())\n    }}\n", block.repeat(copies));
        for s in presets() {
            prop_assert_eq!(halts(&s, &human).map(|h| h.is_none()), [true, true], "{}", human);
        }
        let looped = format!("{head}{}", block.repeat(16));
        let lines = block.matches('\n').count();
        for (k, s) in presets().iter().enumerate() {
            for h in halts(s, &looped) {
                let (line, _) = h.ok_or_else(|| TestCaseError::fail(format!("no halt on\n{looped}")))?;
                if k == 0 {
                    // The head is three lines; the fourth copy's first line is read by then.
                    prop_assert!(line <= 3 + 3 * lines + 2, "line {} of\n{}", line, looped);
                }
            }
        }
    }
}

/// A terminal UI's expected screen in a test: a frame's side written on each row, in quotes,
/// as tall as the widget (ratatui's table tests draw ten). A drawing's row is judged as a
/// drawing: only a picture taller than a screen halts.
#[test]
fn a_frame_drawn_in_a_test_is_a_drawing() {
    let screen = |rows: usize| {
        format!(
            "    let expected = Buffer::with_lines([\n        \"┌Title───────────────────────┐\",\n{}        \"└────────────────────────────┘\",\n    ]);\n    assert_eq!(terminal.backend().buffer(), &expected);\n",
            "        \"│                            │\",\n".repeat(rows)
        )
    };
    let human = screen(12);
    for s in presets() {
        let [a, b] = halts(&s, &human);
        assert!(a.is_none() && b.is_none(), "{a:?} {b:?}");
    }
    let endless = screen(400);
    for s in presets() {
        for h in halts(&s, &endless) {
            assert!(h.is_some(), "a frame taller than a screen halts");
        }
    }
}

/// A short import written again and again is too short for a loop of symbols to cover the
/// span a halt needs, and as lines it waited for a statement's eighth copy: read as lines it
/// halts from its fourth, as nobody imports a thing twice in a row, and so does a short
/// output statement. Short keys are not judged
/// by their shape as lines: people write them four times and more (`_: usize,` for each
/// unused parameter).
#[test]
fn a_short_import_written_on_halts_at_its_fourth_copy_as_lines() {
    let head = "#include <stdio.h>\n#include <string.h>\n";
    let looped = format!("{head}{}", "#include <math.h>\n".repeat(20));
    let balanced = StreamSettings::preset(Preset::Balanced);
    for (way, h) in halts(&balanced, &looped).iter().enumerate() {
        let (line, v) = h.unwrap_or_else(|| panic!("way {way} did not halt"));
        // The head is two lines, and the first `math.h` is the first copy.
        assert!(line <= 2 + 4 + 1, "way {way} halted at line {line}: {v:?}");
    }
    // So does a short output statement: people print one thing three times in a row at most.
    let printed = format!(
        "def main():\n    a, b = 2, 3\n{}",
        "    print(a + b)\n".repeat(20)
    );
    for (way, h) in halts(&balanced, &printed).iter().enumerate() {
        let (line, v) = h.unwrap_or_else(|| panic!("way {way} did not halt on prints"));
        assert!(line <= 2 + 4 + 1, "way {way} halted at line {line}: {v:?}");
    }
    let human = [format!(
            "impl Backend for Dummy {{\n    fn conv(\n        &self,\n{}    ) -> Result<()> {{\n        fail()\n    }}\n}}\n",
            "        _: usize,\n".repeat(6)
    )];
    for text in &human {
        for s in presets() {
            let got = halts(&s, text).map(|h| h.map(|(_, v)| v));
            assert_eq!(got, [None, None], "{text}");
        }
    }
}

/// A form's expected HTML in a test: a `<select>` of the days of a month, an option a line,
/// as markup or in Python strings. Markup has no loop statement, so a count in it is written
/// out to its end: it halts only past a markup ladder's copies, as the ladder of its lines
/// does; options written on past them halt.
#[test]
fn the_days_of_a_month_in_markup_are_written_out() {
    let options = |n: usize, quoted: bool| -> String {
        (1..=n)
            .map(|d| {
                if quoted {
                    format!("        '<option value=\"{d}\">{d}</option>'\n")
                } else {
                    format!("        <option value=\"{d}\">{d}</option>\n")
                }
            })
            .collect()
    };
    for quoted in [false, true] {
        let open = if quoted {
            "    html = (\n"
        } else {
            "    html = \"\"\"\n"
        };
        let close = if quoted { "    )\n" } else { "    \"\"\"\n" };
        let form = format!(
            "def test_render(self):\n{open}{}{close}    self.check_html(widget, 'mydate', '', html)\n",
            options(31, quoted)
        );
        for s in presets() {
            let [a, b] = halts(&s, &form);
            assert!(a.is_none() && b.is_none(), "{a:?} {b:?} on\n{form}");
        }
        let endless = format!("def test_render(self):\n{open}{}", options(200, quoted));
        for s in presets() {
            for h in halts(&s, &endless) {
                assert!(h.is_some(), "200 options halt (quoted: {quoted})");
            }
        }
    }
}
