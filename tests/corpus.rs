//! The bundled samples of real data: SmolLM2-135M generations (labelled with
//! `../shared/tools/label.py`) and human-written code, documentation and licences tokenized
//! with the SmolLM2 tokenizer (`scripts/human_text.py`). The full corpora are measured by
//! `examples/quality.rs`; these samples keep the main promises under test on every clone.

use loopguard::{Action, LoopKind, Preset, StreamConfig, StreamGuard, Verdict};

mod common;

#[test]
fn model_output_runaway_loops_halt_and_normal_streams_do_not() {
    let records = common::load("smollm2-sample.jsonl");
    let config = StreamConfig::default();
    let mut g = StreamGuard::new(&config);
    let (mut looping, mut latencies) = (0, Vec::new());
    for rec in &records {
        for with_pieces in [true, false] {
            g.reset();
            let halt = common::feed_tokens(&mut g, rec, with_pieces);
            match rec.label.as_deref() {
                Some("looping") => {
                    let h = halt.unwrap_or_else(|| panic!("{} not halted", rec.id));
                    let (onset, period) = (rec.label_onset.unwrap(), rec.label_period.unwrap());
                    latencies.push((h.at as f64 - onset as f64) / period as f64);
                    looping += 1;
                }
                Some("normal") => assert!(halt.is_none(), "{} halted: {halt:?}", rec.id),
                _ => {}
            }
        }
    }
    assert_eq!(looping, 28);
    latencies.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let median = latencies[latencies.len() / 2];
    assert!(median <= 3.0, "median latency {median} periods");
}

#[test]
fn human_text_never_halts() {
    let records = common::load("human-sample.jsonl");
    let tokens: usize = records.iter().map(|r| r.ids.len()).sum();
    assert!(tokens > 30_000);
    for preset in [Preset::Balanced, Preset::Lenient] {
        let config = StreamConfig::preset(preset);
        let mut g = StreamGuard::new(&config);
        for rec in &records {
            g.reset();
            let v = common::feed_tokens(&mut g, rec, true);
            assert!(v.is_none(), "{preset:?} halted {} as tokens: {v:?}", rec.id);
            g.reset();
            let v = common::feed_text(&mut g, rec.text.as_bytes(), 16);
            assert!(v.is_none(), "{preset:?} halted {} as text: {v:?}", rec.id);
        }
    }
}

/// Human code and documentation in thirteen languages (`tests/data/code-sample.jsonl`, cut
/// from the corpus `scripts/code_corpus.py` builds, permissively licensed sources only): no
/// halt, fed as ids with pieces or as text, and warnings on few records.
#[test]
fn human_code_never_halts() {
    let records = common::load("code-sample.jsonl");
    assert_eq!(records.len(), 39);
    for preset in [Preset::Balanced, Preset::Lenient] {
        let config = StreamConfig::preset(preset);
        let mut g = StreamGuard::new(&config);
        let mut warned = [0, 0];
        for rec in &records {
            g.reset();
            let v = common::feed_tokens(&mut g, rec, true);
            assert!(v.is_none(), "{preset:?} halted {} as tokens: {v:?}", rec.id);
            warned[0] += (g.stats().warnings > 0) as usize;
            g.reset();
            let v = common::feed_text(&mut g, rec.text.as_bytes(), 16);
            assert!(v.is_none(), "{preset:?} halted {} as text: {v:?}", rec.id);
            warned[1] += (g.stats().warnings > 0) as usize;
        }
        assert!(
            warned[0] <= 3 && warned[1] <= 1,
            "{preset:?} warned on {warned:?} of 39"
        );
    }
}

#[test]
fn near_loops_halt_where_the_text_shows_prose_and_only_warn_elsewhere() {
    let records = common::load("smollm2-sample.jsonl");
    // A fuzzy stream: the same list item again and again, its wording varying.
    let rec = records
        .iter()
        .find(|r| r.id.ends_with(":p090:t10"))
        .expect("p090:t10 in the sample");
    assert_eq!(rec.label.as_deref(), Some("fuzzy"));
    let config = StreamConfig::default();
    let mut g = StreamGuard::new(&config);
    let halt = common::feed_tokens(&mut g, rec, true).expect("halted with pieces");
    assert_eq!(halt.kind, LoopKind::NearLoop);
    assert!(halt.confidence >= 0.45, "{halt:?}");

    // Ids alone: nothing tells prose from a data table or a changelog, so it only warns.
    g.reset();
    assert_eq!(common::feed_tokens(&mut g, rec, false), None);
    assert!(g.stats().first_warn_at.is_some());

    // The same tokens on indented lines, on `field:` lines, on lines that begin with markup, a
    // date or a drawn rule: repetition there (code, changelog entries, licence fields, HTML)
    // is left out of the coverage.
    for lead in ["  ", "Files: ", "<li>", "2021-01-09  ", "━━ ", "--- "] {
        let mut masked = rec.clone();
        for p in &mut masked.pieces {
            *p = String::from_utf8_lossy(p)
                .replace('\n', &format!("\n{lead}"))
                .into_bytes();
        }
        masked.pieces[0].splice(0..0, lead.bytes());
        g.reset();
        let v = common::feed_tokens(&mut g, &masked, true);
        assert!(
            v.is_none_or(|v| v.kind != LoopKind::NearLoop),
            "lines led by {lead:?}: {v:?}"
        );
    }
    // Every line a heading (it ends with ':'): each is taken out of the coverage once it ends.
    let mut headings = rec.clone();
    for p in &mut headings.pieces {
        *p = String::from_utf8_lossy(p).replace('\n', ":\n").into_bytes();
    }
    g.reset();
    let v = common::feed_tokens(&mut g, &headings, true);
    assert!(
        v.is_none_or(|v| v.kind != LoopKind::NearLoop),
        "heading lines: {v:?}"
    );
}

/// The licence terms of the notices below: a passage of about 180 tokens, in words of its own.
const TERMS: &str = "Anyone who receives a copy of this package and the notes that come with it \
    may use it, change it, join it with other work, publish it, hand it on, grant others \
    the same rights, and sell copies of it, without paying for any of this, provided that \
    the notice of ownership above and this grant of rights are kept in every copy or in \
    every large part of the package that is passed on.\n\nThe package comes as it is, with \
    no promise of any kind, stated or implied, including but not limited to promises that \
    it can be sold, that it fits any purpose, or that it breaks no one else's rights. The \
    people who wrote it or who own it shall in no case be held to answer for any claim, \
    loss or other duty, whether under a contract, a wrong or anything else, that comes \
    from, out of or in connection with the package or its use or other dealings in it.\n\n";

const OWNERS: [&str; 8] = [
    "Ada Moreau",
    "Bram Okafor",
    "Chen Lindqvist",
    "Dara Novak",
    "Emeka Sato",
    "Farah Kowalski",
    "Goran Abe",
    "Hana Oyelaran",
];

/// Every verdict of `guard` fed `text` as text alone, in chunks of 16 bytes, and its end.
fn verdicts_as_text(guard: &mut StreamGuard, text: &str) -> Vec<Verdict> {
    let mut verdicts: Vec<Verdict> = text
        .as_bytes()
        .chunks(16)
        .map(|c| guard.push_text(c))
        .collect();
    verdicts.push(guard.finish_text());
    verdicts
}

/// A notices file: for each component a heading, a copyright line, then the same terms.
fn notices() -> String {
    let mut doc = String::from("# Notices for the components shipped in this release\n\n");
    for (i, owner) in OWNERS.iter().enumerate() {
        doc += &format!(
            "## component-{}\n\nCopyright (c) {} {owner}\n\n",
            i * 7 + 3,
            2011 + i
        );
        doc += TERMS;
    }
    doc
}

/// A document that quotes one long passage for each component it ships (a notices file: a
/// heading, a copyright line, then the same licence terms) repeats far more than any model
/// loop, but one recurrence at a time, each copy a passage length after the last: no halt,
/// as ids with pieces or as text. The same passage stuttering within itself still halts.
#[test]
fn a_passage_quoted_for_each_component_does_not_halt() {
    let (terms, owners, doc) = (TERMS, OWNERS, notices());
    for preset in [Preset::Balanced, Preset::Lenient] {
        let config = StreamConfig::preset(preset);
        let v = common::feed_tokenized(&mut StreamGuard::new(&config), &doc);
        assert!(
            v.is_none(),
            "{preset:?} halted the notices as tokens: {v:?}"
        );
        let v = common::feed_text(&mut StreamGuard::new(&config), doc.as_bytes(), 16);
        assert!(v.is_none(), "{preset:?} halted the notices as text: {v:?}");
        // The terms stuttering, a sentence said again and again with a word changed.
        let mut stutter = String::from(&terms[..400]);
        for owner in owners.iter().cycle().take(40) {
            stutter += &format!(
                "The people who wrote it, {owner} and others, shall in no \
                case be held to answer for any claim. "
            );
        }
        let v = common::feed_text(&mut StreamGuard::new(&config), stutter.as_bytes(), 16);
        assert!(v.is_some(), "{preset:?} let the stutter through as text");
    }
}

/// Nor does it warn, but with the strict preset: coverage whose repeats come from further back
/// than half the near window is a passage quoted once again, a long repeat's evidence, and only
/// strict warns on those. As tokens with pieces and as text, where the terms differ from copy
/// to copy by the copyright line alone.
#[test]
fn a_passage_quoted_for_each_component_warns_only_when_strict() {
    let doc = notices();
    for (preset, warns) in [
        (Preset::Balanced, false),
        (Preset::Lenient, false),
        (Preset::Strict, true),
    ] {
        let config = StreamConfig::preset(preset);
        let mut g = StreamGuard::new(&config);
        let as_tokens: Vec<Verdict> = common::tokenize(&doc)
            .into_iter()
            .map(|(id, piece)| g.push_token(id, Some(&piece)))
            .collect();
        let as_text = verdicts_as_text(&mut StreamGuard::new(&config), &doc);
        for (how, verdicts) in [("tokens", as_tokens), ("text", as_text)] {
            let warned = verdicts.iter().find(|v| v.action == Action::Warn);
            assert!(
                verdicts.iter().all(|v| v.action != Action::Halt),
                "{preset:?} halted the notices as {how}"
            );
            assert_eq!(warned.is_some(), warns, "{preset:?} as {how}: {warned:?}");
        }
    }
}

/// Release notes as a forge writes them, each change with its author's and its pull request's
/// links: the addresses repeat by design (one host, one repository), and their symbols count
/// towards no near loop, as tokens with pieces or as text. The descriptions say something new
/// on every line.
#[test]
fn release_notes_full_of_links_do_not_warn() {
    let changes = [
        "Fix a panic when the config file is empty",
        "Add support for reading settings from the environment",
        "Speed up parsing of large arrays by reusing buffers",
        "Document the retry policy and its defaults",
        "Drop the unused dependency on the old time crate",
        "Report the line and column of syntax errors",
        "Allow trailing commas in inline tables",
        "Make the serializer keep the order of map keys",
        "Handle Windows line endings in multi-line strings",
        "Expose the span of every value to callers",
        "Reject duplicate keys instead of keeping the last one",
        "Support dotted keys in nested tables",
        "Remove the deprecated builder methods",
        "Validate dates before building timestamps",
        "Fix an overflow in the integer parser on 32-bit targets",
        "Publish the JSON schema of the configuration",
    ];
    let users = [
        "amara-k", "bjornl", "chen-wei", "dsouza", "eun-ji", "farid99",
    ];
    let mut notes = String::from("## What's Changed\n\n");
    for (i, change) in changes.iter().enumerate() {
        let user = users[i % users.len()];
        let n = 4100 + 17 * i;
        notes += &format!(
            "* {change} by [@{user}](https://github.com/{user}) in [#{n}](https://github.com/acme/widget/pull/{n})\n"
        );
    }
    // And a bot's dependency bumps, one new name a line.
    let deps = [
        "serde",
        "tokio",
        "clap",
        "regex",
        "anyhow",
        "itertools",
        "rayon",
        "bytes",
        "smallvec",
        "indexmap",
        "hashbrown",
        "memchr",
    ];
    for (i, dep) in deps.iter().enumerate() {
        let n = 4400 + 3 * i;
        notes += &format!(
            "* Bump {dep} from 1.{i}.0 to 1.{i}.1 by [@dependabot](https://github.com/apps/dependabot) in [#{n}](https://github.com/acme/widget/pull/{n})\n"
        );
    }
    for preset in [Preset::Balanced, Preset::Lenient] {
        let config = StreamConfig::preset(preset);
        let as_text = verdicts_as_text(&mut StreamGuard::new(&config), &notes);
        let warned = as_text.iter().find(|v| v.action != Action::Continue);
        assert!(warned.is_none(), "{preset:?} as text: {warned:?}");
        let mut g = StreamGuard::new(&config);
        let as_tokens: Vec<Verdict> = common::tokenize(&notes)
            .into_iter()
            .map(|(id, piece)| g.push_token(id, Some(&piece)))
            .collect();
        let warned = as_tokens.iter().find(|v| v.action != Action::Continue);
        assert!(warned.is_none(), "{preset:?} as tokens: {warned:?}");
    }
}

/// reStructuredText underlines a section with any punctuation; it recommends `"`, `'` and `:`
/// besides the rule characters (`""""` is Sphinx's fifth level). Such an underline, as long as
/// its title, is a rule, read as text or as a tokenizer cuts it (two quotes a piece); a run of
/// quotes longer than any line still halts.
#[test]
fn sections_underlined_with_quotes_are_rules() {
    let mut doc = String::from("Getting started\n===============\n\n");
    for (title, mark) in [
        ("Registering mock responses with matchers", '"'),
        ("Matching the query string of a request", '\''),
        ("Comparing a version against a base", ':'),
    ] {
        let underline: String = std::iter::repeat(mark).take(title.len()).collect();
        doc += &format!(
            "{title}\n{underline}\n\nYou can use the `{}` function to match against what the \
             request sent, and the test fails when nothing matches.\n\n",
            title.split(' ').next().unwrap_or_default().to_lowercase()
        );
    }
    for preset in [Preset::Balanced, Preset::Lenient] {
        let config = StreamConfig::preset(preset);
        let as_text = verdicts_as_text(&mut StreamGuard::new(&config), &doc);
        let warned = as_text.iter().find(|v| v.action != Action::Continue);
        assert!(warned.is_none(), "{preset:?} as text: {warned:?}");
        // A tokenizer cuts a run of one character into pieces of two.
        let mut g = StreamGuard::new(&config);
        for (id, piece) in common::tokenize(&doc) {
            let run = piece.len() > 4 && piece.iter().skip(1).all(|&b| b == piece[1]);
            let pieces: Vec<&[u8]> = if run {
                std::iter::once(&piece[..1])
                    .chain(piece[1..].chunks(2))
                    .collect()
            } else {
                vec![&piece[..]]
            };
            for p in pieces {
                let id = if run {
                    u32::from(p[0]) * 7 + p.len() as u32
                } else {
                    id
                };
                let v = g.push_token(id, Some(p));
                assert_eq!(v.action, Action::Continue, "{preset:?} as tokens: {v:?}");
            }
        }
    }
    // Quotes written on and on, past any line, are a loop.
    let mut g = StreamGuard::new(&StreamConfig::default());
    let runaway = format!("{doc}Basic usage\n{}", "\"".repeat(2000));
    let halt = verdicts_as_text(&mut g, &runaway)
        .into_iter()
        .find(|v| v.action == Action::Halt)
        .expect("a run of 2000 quotes halts");
    assert_eq!(halt.kind, LoopKind::CharRun);
}
