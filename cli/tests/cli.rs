//! The `loopguard` binary run as a user runs it: on the bundled samples of real model output
//! and agent traces, with its answers checked against the library's guards fed directly.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use loopguard::{Action, AgentConfig, AgentGuard, StreamConfig, StreamGuard};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_loopguard");

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/data")
        .join(name)
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("the binary runs")
}

fn run_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

fn json_lines(o: &Output) -> Vec<Value> {
    stdout(o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn records(name: &str) -> Vec<Value> {
    std::fs::read_to_string(data(name))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A scratch directory removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("lg-cli-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn file(&self, name: &str, contents: &[u8]) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, contents).unwrap();
        path.to_str().unwrap().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.0).ok();
    }
}

#[test]
fn the_readme_command_shows_the_halts_with_their_repeated_text() {
    let o = run(&["scan", data("smollm2-sample.jsonl").to_str().unwrap()]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "loops found: {text}");
    assert!(
        text.contains("Scanned 40 records (40 token streams)"),
        "{text}"
    );
    assert!(text.contains("halted 22 (55%)"), "{text}");
    assert!(
        text.contains("tokens that would have been saved: 4818 of 16900"),
        "{text}"
    );
    assert!(
        text.contains("most saved first (20 shown):"),
        "the 20 halts that save most are listed: {text}"
    );
    assert!(
        text.contains("halt at token 59 of 512: exact_loop, period 7")
            && text.contains("repeating \" a tale of patience and perseverance,\""),
        "{text}"
    );
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
}

/// Every token record: the CLI's answer is the library's, token by token.
#[test]
fn token_records_match_the_guard_fed_directly() {
    let path = data("smollm2-sample.jsonl");
    let o = run(&["scan", "--format", "json", path.to_str().unwrap()]);
    let lines = json_lines(&o);
    let input = records("smollm2-sample.jsonl");
    assert_eq!(lines.len(), input.len());
    let config = StreamConfig::default();
    let mut halts = 0;
    for (line, rec) in lines.iter().zip(&input) {
        assert_eq!(line["id"], rec["id"], "input order");
        assert_eq!(line["type"], "tokens");
        let mut g = StreamGuard::new(&config);
        let (mut first_warn, mut halt, mut onset) = (None, None, None);
        let ids = rec["token_ids"].as_array().unwrap();
        for (i, id) in ids.iter().enumerate() {
            let piece = rec["pieces"][i].as_str().unwrap().as_bytes();
            let v = g.push_token(id.as_u64().unwrap() as u32, Some(piece));
            if v.action >= Action::Warn && first_warn.is_none() {
                first_warn = Some(i as u64);
                onset = Some(v.onset);
            }
            if v.action == Action::Halt {
                halt = Some(i as u64);
                onset = Some(v.onset);
                break;
            }
        }
        assert_eq!(line["first_warn_at"], json!(first_warn), "{}", rec["id"]);
        assert_eq!(line["halt_at"], json!(halt), "{}", rec["id"]);
        assert_eq!(line["onset"], json!(onset), "{}", rec["id"]);
        let saved = halt.map_or(0, |h| ids.len() as u64 - 1 - h);
        assert_eq!(line["tokens_saved"], json!(saved));
        let verdict = match (halt, first_warn) {
            (Some(_), _) => "halt",
            (None, Some(_)) => "warn",
            _ => "continue",
        };
        assert_eq!(line["verdict"], verdict);
        if halt.is_some() {
            halts += 1;
            assert!(line["kind"].is_string() && line["period"].as_u64().unwrap() > 0);
            assert_eq!(
                line["evidence"].as_str().unwrap().as_bytes(),
                g.repeated_text()
            );
        }
        for key in [
            "id",
            "verdict",
            "first_warn_at",
            "halt_at",
            "kind",
            "period",
            "repeats",
            "onset",
            "tokens_saved",
            "evidence",
        ] {
            assert!(line.get(key).is_some(), "{key} in {line}");
        }
    }
    assert_eq!(halts, 22);
}

/// Text records: indexes are byte offsets, and the repeated text is found where they point.
#[test]
fn text_records_report_byte_offsets() {
    let scratch = Scratch::new("text");
    let input = records("smollm2-sample.jsonl");
    let mut file = String::new();
    for r in &input {
        file += &json!({"id": r["id"], "text": r["text"]}).to_string();
        file.push('\n');
    }
    let path = scratch.file("text.jsonl", file.as_bytes());
    let lines = json_lines(&run(&["scan", "--format", "json", &path]));
    assert_eq!(lines.len(), input.len());
    let mut halts = 0;
    for (line, rec) in lines.iter().zip(&input) {
        let text = rec["text"].as_str().unwrap();
        assert_eq!(line["type"], "text");
        assert_eq!(line["length"], json!(text.len()));
        let Some(at) = line["halt_at"].as_u64() else {
            continue;
        };
        halts += 1;
        let onset = line["onset"].as_u64().unwrap() as usize;
        let at = at as usize;
        assert!(onset <= at && at < text.len(), "{line}");
        // The last copy of the block ends by the halt: it lies between onset and halt.
        let evidence = line["evidence"].as_str().unwrap();
        let region = &text.as_bytes()[onset..=at];
        let needle = evidence.trim().as_bytes();
        assert!(
            region.windows(needle.len()).any(|w| w == needle),
            "{evidence:?} not in {:?}",
            String::from_utf8_lossy(region)
        );
        let words_after = text[at + 1..].split_whitespace().count() as u64;
        assert_eq!(line["tokens_saved"], json!(words_after));
    }
    assert!(halts >= 12, "text-only halts {halts}");
}

/// Replays an agent trace on the guard directly: the most severe action per event.
fn replay(config: &AgentConfig, events: &[Value]) -> Vec<Action> {
    let mut g = AgentGuard::new(config);
    events
        .iter()
        .map(|e| {
            let args = serde_json::to_string(&e["args"]).unwrap();
            let a = g
                .call_with_thought(
                    e["tool"].as_str().unwrap(),
                    args.as_bytes(),
                    e["thought"].as_str(),
                )
                .action;
            let (r, er) = (e["result"].as_str(), e["error"].as_str());
            let b = if r.is_some() || er.is_some() {
                g.result(r.map(str::as_bytes), er.map(str::as_bytes)).action
            } else {
                Action::Continue
            };
            a.max(b)
        })
        .collect()
}

#[test]
fn agent_traces_match_the_guard_and_their_labels() {
    let path = data("agent-sample.jsonl");
    let lines = json_lines(&run(&["scan", "--format", "json", path.to_str().unwrap()]));
    let input = records("agent-sample.jsonl");
    assert_eq!(lines.len(), input.len());
    let config = AgentConfig::default();
    let (mut stuck, mut stuck_warned, mut calm_warned) = (0, 0, 0);
    for (line, rec) in lines.iter().zip(&input) {
        assert_eq!(line["type"], "events");
        let actions = replay(&config, rec["events"].as_array().unwrap());
        let first = |a: Action| actions.iter().position(|&x| x >= a).map(|i| i as u64);
        assert_eq!(
            line["first_warn_at"],
            json!(first(Action::Warn)),
            "{}",
            rec["id"]
        );
        let halt = actions.iter().position(|&x| x == Action::Halt);
        assert_eq!(line["halt_at"], json!(halt), "{}", rec["id"]);
        if let Some(h) = halt {
            assert_eq!(line["tokens_saved"], json!(actions.len() - 1 - h));
            let onset = line["onset"].as_u64().unwrap();
            assert!(onset <= h as u64, "the loop begins before it halts: {line}");
        }
        let warned = line["verdict"] != "continue";
        if rec["label"]["stuck"] == true {
            stuck += 1;
            stuck_warned += usize::from(warned);
        } else {
            calm_warned += usize::from(warned);
        }
    }
    assert_eq!(stuck, 40);
    assert!(stuck_warned >= 38, "stuck runs warned: {stuck_warned}/40");
    assert_eq!(calm_warned, 0, "runs labelled not stuck are left alone");
}

/// Sessions of other agents written blind to the guard's rules (Claude Code, Codex, Goose,
/// Copilot, OpenHands, SWE-agent, Cline, Roo Code, Cursor, Gemini CLI; how they were made is
/// in `scripts/data/README.md`): no healthy one is warned, and every loop is, from where it began.
/// (How late each loop is warned is a measurement, in the README, not a test.)
#[test]
fn held_out_agent_sessions_warn_on_loops_only() {
    held_out_sessions_warn_on_loops("coding-agent-heldout.jsonl", &[]);
}

/// The second set written blind (scripts/data/README.md), measured as it came and then fixed:
/// the guard answers as it did then on the two sessions it still gets wrong, and warns on no
/// other healthy session and on every other loop from its start. The two: aider's flaky test
/// run three times in a row on purpose (an identical call at the third), and Augment's dev
/// server relaunched into a port in use, each round read and killed under a new terminal ID.
#[test]
fn second_held_out_agent_sessions_warn_on_loops_only() {
    held_out_sessions_warn_on_loops(
        "coding-agent-heldout-2.jsonl",
        &[
            "blind2/aider-tz-due-dates",
            "blind2/augment-notes-api-eaddrinuse",
        ],
    );
}

/// The third set written blind, measured as it came after the second set's rules and then
/// fixed: no healthy session warned, every loop warned from its start on.
#[test]
fn third_held_out_agent_sessions_warn_on_loops_only() {
    held_out_sessions_warn_on_loops("coding-agent-heldout-3.jsonl", &[]);
}

/// The fourth set written blind (long sessions of eight agents, short ones of others, MCP
/// tools among them), measured as it came: the one loop missed was Roo Code asking the user the
/// same confirmation reworded eleven times, a conversation with a tool that is a person; it
/// warns at the fifth question since `question_streak`.
#[test]
fn fourth_held_out_agent_sessions_warn_on_loops_only() {
    held_out_sessions_warn_on_loops("coding-agent-heldout-4.jsonl", &[]);
}

/// The fifth set written blind (24 sessions in the shapes of Claude Code, Codex, aider, Cline,
/// OpenHands, Cursor, Gemini CLI, Goose, SWE-agent, mini-swe-agent, Roo Code, Copilot,
/// Windsurf, Amp, OpenCode, a Devin-like agent and MCP servers), measured as it came and then
/// fixed where a rule of one sentence answered: known wrong are Cursor's dev server restarted
/// after each config change, whose log read after each restart says the same startup banner
/// (warned). Pull requests opened again and again on new branches after a timeout, missed
/// while each round named a new branch, warn late since a failure that each edit between
/// leaves as it was is the same error.
#[test]
fn fifth_held_out_agent_sessions_warn_on_loops_only() {
    held_out_sessions_warn_on_loops(
        "coding-agent-heldout-5.jsonl",
        &["blind5/cursor-vite-proxy-restarts"],
    );
}

/// The sixth set written blind (24 sessions in the shapes of Claude Code, Junie, Kilo Code,
/// Codex, smolagents, aider, OpenHands, Cline, SWE-agent, Roo Code, Gemini CLI,
/// mini-swe-agent, Continue, Goose, Windsurf, OpenCode, Copilot and Cursor), measured as it
/// came and then fixed where a rule of one sentence answered. Known wrong, both missed: a pod
/// in CrashLoopBackOff polled while only its restart count and ages move, and a streak of
/// rejected replies (off by default, see the README).
#[test]
fn sixth_held_out_agent_sessions_warn_on_loops_only() {
    held_out_sessions_warn_on_loops(
        "coding-agent-heldout-6.jsonl",
        &[
            "blind6/cursor-crashloop-polling",
            "blind6/swe-agent-format-error-streak",
        ],
    );
}

/// The seventh set written blind (24 sessions in the shapes of Claude Code, OpenHands, Codex,
/// aider, Gemini CLI, SWE-agent, mini-swe-agent, Cursor, Goose, Cline, Roo Code, Windsurf,
/// Copilot, OpenCode, Amp and Continue), written after the sixth set's rules and measured as it
/// came: no healthy session warned; known wrong is web searches reworded thirteen times whose
/// answers all say the same in other words and links (missed).
#[test]
fn seventh_held_out_agent_sessions_warn_on_loops_only() {
    held_out_sessions_warn_on_loops(
        "coding-agent-heldout-7.jsonl",
        &["blind7/gemini-cli-websearch-reworded-never-acts"],
    );
}

/// The eighth set written blind (24 sessions; most of the healthy ones come back to the same
/// file, command or page on purpose, to try the rule that a call answered the same is asked
/// again in vain), measured as it came: no healthy session warned, and Cursor's codebase
/// searches reworded for a function that has another name missed. Three loops missed as they
/// came warn since: a build failing on a missing header through `| tail`, its exit status 0,
/// under five commands (a build's first diagnostic is read as its failure), Cline asking the
/// user the same question reworded (`question_streak`, at the fifth question), and the
/// reworded searches, once they show only snippets shown before (nine events late).
#[test]
fn eighth_held_out_agent_sessions_warn_on_loops_only() {
    held_out_sessions_warn_on_loops("coding-agent-heldout-8.jsonl", &[]);
}

/// The ninth set written blind (48 sessions in the shapes of fifteen agents; a quarter of them
/// talk with their user through a question tool), measured as it came part by part (see
/// `scripts/data/README.md`). Cline's browser closed after each edit and answered alike warned
/// until its note that the browser closed was read as the harness's voice. Codebase searches
/// reworded for a rate limit and research whose searches keep showing the same lines warn
/// since searches that show only lines shown before are the same result (two and ten events
/// late). Known wrong, missed: an aider session raising sleeps in a flaky test and a
/// crash-looping pod whose memory limit is raised again and again.
#[test]
fn ninth_held_out_agent_sessions_warn_on_loops_only() {
    held_out_sessions_warn_on_loops(
        "coding-agent-heldout-9.jsonl",
        &[
            "blind9/aider-flaky-broadcast-sleeps",
            "blind9/roo-code-k8s-crashloop-probes",
        ],
    );
}

/// The tenth set written blind (24 sessions, two thirds healthy: long compile-fix cycles,
/// piped builds, jobs polled, outputs paged, questions to the user), measured as it came: no
/// healthy session warned, 3 of 8 loops. SWE-agent's reproduction script failing alike after
/// each edit, with inline `python -c` checks between, warns since an interpreter is the script
/// it runs. Known wrong, missed: tsconfig switched between three settings, a provider
/// reinstalled with the system pip while Airflow runs from a venv, and a deploy polled for an
/// hour while it waits for a reviewer's approval. A pandas column cast back and forth between
/// two failing tests warns late, since a failure that each edit between leaves as it was is
/// the same error.
#[test]
fn tenth_held_out_agent_sessions_warn_on_loops_only() {
    held_out_sessions_warn_on_loops(
        "coding-agent-heldout-10.jsonl",
        &[
            "blind10/cursor-ts-esm-moduleresolution-flipflop",
            "blind10/mini-swe-agent-airflow-provider-wrong-env",
            "blind10/opencode-deploy-waiting-for-approval",
        ],
    );
}

/// The eleventh set written blind (36 sessions: SWE-bench-style sessions in the shapes of
/// OpenHands, SWE-agent and mini-swe-agent; edit-run loops in twelve agents' shapes; long
/// healthy sessions that look repetitive on purpose), measured as it came: 1 of 21 healthy
/// sessions warned (mini-swe-agent's `<returncode>0</returncode>` read as an answer of
/// nothing), 5 of 15 loops within one event. SWE-agent scrolling up and down over the same
/// windows of a file warns since reads in a row that show a page a third time are the same
/// result. Known wrong: a migration job polled while it hangs, missed; a test fixture's time zone the agent circles, warned seven events before its
/// labelled start by the same error (as it came), and a foreign key whose violation each edit
/// leaves as it was, warned two events before, at the third failure.
#[test]
fn eleventh_held_out_agent_sessions_warn_on_loops_only() {
    held_out_sessions_warn_on_loops(
        "coding-agent-heldout-11.jsonl",
        &[
            "blind11/cursor-waits-on-hung-migration",
            "blind11/aider-pandas-merge-asof-tz",
            "blind11/opencode-sql-fk-backfill",
        ],
    );
}

/// The twelfth set written blind (36 sessions: healthy debugging that reruns a failing build or
/// test on purpose, SWE-bench-style sessions, agents with many tools), measured once after this
/// round's rules (its third part before the rule on Cline's browser notes, which its one false
/// alarm gave): no healthy session warned now, 10 of 15 loops; test expectations flipped
/// between two values warn since a change made a third time either way is a flip. Known wrong,
/// missed: edits to a copy of a package Python does not import (the script prints the same number each time), research cycling through three
/// files, documentation searched in new words, and a job polled while it stays pending.
#[test]
fn twelfth_held_out_agent_sessions_warn_on_loops_only() {
    held_out_sessions_warn_on_loops(
        "coding-agent-heldout-12.jsonl",
        &[
            "blind12/openhands-marshmallow-timedelta-wrong-copy",
            "blind12/sweagent-gson-nan-tojsontree-research-loop",
            "blind12/gemini-cli-vite-hmr-search-loop",
            "blind12/goose-reindex-job-pending-forever",
        ],
    );
}

/// The thirteenth set written blind (36 sessions: SWE-agent run by weak models, OpenHands and
/// mini-swe-agent on SWE-bench issues, and IDE and CLI agents beyond the usual ones), measured
/// once after this round's rules: no healthy session of 19 warned, 13 of 17 loops, 11 within
/// one event; SWE-agent reopening two files in turn warns (late) since the same `open` again
/// with other pages between is paging. Known wrong: searches answered "More than 200 files
/// matched" again and again, a reproduction rewritten that never fails, and thirteen rejected
/// replies in a row (off by default), missed; edits to a source the program never loads and an
/// unrelated fix rerun against the same failing test, warned three and seven events before
/// their labelled start.
#[test]
fn thirteenth_held_out_agent_sessions_warn_on_loops_only() {
    held_out_sessions_warn_on_loops(
        "coding-agent-heldout-13.jsonl",
        &[
            "blind13/swe-agent-django-urlvalidator-broad-search-loop",
            "blind13/openhands-mpl-3d-set-visible-repro-never-fails",
            "blind13/mini-swe-agent-pytest-skipif-cache-format-streak",
            "blind13/swe-agent-axios-header-crlf-dist-loop",
            "blind13/zed-bevy-asteroid-split-test",
        ],
    );
}

/// The fourteenth set written blind (36 sessions: agents that search a lot, in nine agents'
/// search tools, healthy and stuck; everyday work in twelve agents' shapes; long SWE-bench-like
/// runs by open models), measured once as it came: no healthy session of 22 warned (none of
/// the eight that search heavily), 10 of 14 loops warned, 5 within one event. Codebase and
/// grep searches taken in turn over the same files warn since a line is its content wherever
/// a search printed it (`Line 14:` before it, or `src/a.ts:14:`), eight events late. Known
/// wrong, missed: a pandas build failing a new way after each install, SWE-agent's edits
/// refused by the linter for a new indentation error each time, and editor views of the same
/// few ranges with greps between; warned two events before the labelled start: a rounding
/// test failing alike after edits to the wrong file, and a tsconfig setting flipped among four
/// values.
#[test]
fn fourteenth_held_out_agent_sessions_warn_on_loops_only() {
    held_out_sessions_warn_on_loops(
        "coding-agent-heldout-14.jsonl",
        &[
            "blind14/openhands-pandas-rebuild-install-loop",
            "blind14/swe-agent-django-fast-delete-pk-indent",
            "blind14/openhands-jackson-ignoreunknown-creator-scroll",
            "blind14/copilot-invoice-rounding-wrong-file",
            "blind14/augment-node-fetch3-esm-toggle",
        ],
    );
}

/// The fifteenth set written blind (24 sessions: agents that search and read a lot, healthy
/// and stuck, and everyday work in twelve agents' shapes), measured once as it came, after the
/// rules on searches that find nothing new: no healthy session of 15 warned (eight of them
/// search and re-read on purpose), 8 of 9 loops warned, 5 within one event; the guard of that
/// session's start answered every session alike. Known wrong, missed: Claude Code reading two
/// files back and forth with shifting offsets, never editing.
#[test]
fn fifteenth_held_out_agent_sessions_warn_on_loops_only() {
    held_out_sessions_warn_on_loops(
        "coding-agent-heldout-15.jsonl",
        &["blind15/claude-code-proration-two-file-reread"],
    );
}

/// Each session warns where it is labelled stuck, from one event before its labelled start
/// (within one event, as the coding-agent target counts a catch) on, and healthy sessions do
/// not warn; `known_wrong` are those it gets the wrong way.
fn held_out_sessions_warn_on_loops(name: &str, known_wrong: &[&str]) {
    let path = data(name);
    let lines = json_lines(&run(&["scan", "--format", "json", path.to_str().unwrap()]));
    let input = records(name);
    assert_eq!(lines.len(), input.len());
    for (line, rec) in lines.iter().zip(&input) {
        let label = &rec["label"];
        let warned = line["first_warn_at"].as_u64();
        // A loop warned at all from one event before its start is caught; a healthy session
        // is right unwarned. Known wrong: missed, warned too early, or warned when healthy.
        let right = if label["stuck"].as_bool().unwrap() {
            let start = label["loop_start"].as_u64().unwrap();
            warned.is_some_and(|w| w + 1 >= start)
        } else {
            warned.is_none()
        };
        let known = known_wrong.contains(&rec["id"].as_str().unwrap());
        assert_eq!(right, !known, "{}: {line}", rec["id"]);
    }
}

/// Coding-agent traces (a bash tool, heredoc edits, empty successes, rejected replies; and
/// sessions shaped as Claude Code's and OpenHands' tools send them, a todo list and a think
/// tool answered alike between the actions; written for the tests, not recorded): the guard
/// warns where each is labelled stuck and nowhere else, and a rejected reply (`format_error`)
/// is an event of its own.
#[test]
fn coding_agent_traces_warn_where_labelled() {
    let path = data("coding-agent-sample.jsonl");
    let lines = json_lines(&run(&["scan", "--format", "json", path.to_str().unwrap()]));
    let input = records("coding-agent-sample.jsonl");
    assert_eq!(lines.len(), input.len());
    for (line, rec) in lines.iter().zip(&input) {
        let want = &rec["label"]["should_warn_at"];
        assert_eq!(&line["first_warn_at"], want, "{}: {line}", rec["id"]);
        assert_ne!(line["verdict"], "halt", "{}", rec["id"]);
    }
    // With the rejected-replies rule on, the streak of ten warns at its fifth.
    let scratch = Scratch::new("coding");
    let cfg = scratch.file("c.toml", b"[agent]\nrejected_replies = { warn = 5 }\n");
    let lines = json_lines(&run(&[
        "scan",
        "--format",
        "json",
        "--config",
        &cfg,
        path.to_str().unwrap(),
    ]));
    let rejected = lines
        .iter()
        .find(|l| l["id"] == "fixture/rejected-then-submit")
        .unwrap();
    assert_eq!(rejected["kind"], "rejected_replies", "{rejected}");
    assert_eq!(rejected["first_warn_at"], 5, "{rejected}");
    // The short form of a rejection is read the same way.
    let short = scratch.file(
        "r.jsonl",
        br#"{"id": "r", "events": [{"format_error": "no command"}, {"format_error": ""}, {"format_error": null}, {"format_error": 1}, {"format_error": true}]}"#,
    );
    let lines = json_lines(&run(&[
        "scan", "--format", "json", "--config", &cfg, &short,
    ]));
    assert_eq!(lines[0]["first_warn_at"], 4, "{}", lines[0]);
}

/// The same traces written as OpenAI chat transcripts get the same answers at the matching
/// message positions.
#[test]
fn chat_transcripts_match_event_traces() {
    let scratch = Scratch::new("chat");
    let input = records("agent-sample.jsonl");
    let (mut events_file, mut chat_file) = (String::new(), String::new());
    let mut positions = Vec::new(); // per record: message index of each event
    for r in &input {
        let events = r["events"].as_array().unwrap();
        let mut messages = vec![
            json!({"role": "system", "content": "You are a shopping agent."}),
            json!({"role": "user", "content": r["task"]}),
        ];
        let mut at = Vec::new();
        for (i, e) in events.iter().enumerate() {
            at.push(messages.len());
            let id = format!("call_{i}");
            messages.push(json!({"role": "assistant", "content": null, "tool_calls": [{
                "id": id, "type": "function",
                "function": {"name": e["tool"], "arguments": serde_json::to_string(&e["args"]).unwrap()}
            }]}));
            match (e["result"].as_str(), e["error"].as_str()) {
                (_, Some(err)) => messages.push(
                    json!({"role": "tool", "tool_call_id": id, "content": err, "is_error": true}),
                ),
                (Some(res), None) => {
                    messages.push(json!({"role": "tool", "tool_call_id": id, "content": res}))
                }
                (None, None) => {}
            }
        }
        positions.push(at);
        let stripped: Vec<Value> = events
            .iter()
            .map(|e| json!({"tool": e["tool"], "args": e["args"], "result": e["result"], "error": e["error"]}))
            .collect();
        events_file += &json!({"id": r["id"], "events": stripped}).to_string();
        events_file.push('\n');
        chat_file += &json!({"id": r["id"], "messages": messages}).to_string();
        chat_file.push('\n');
    }
    let ev = json_lines(&run(&[
        "scan",
        "--format",
        "json",
        &scratch.file("e.jsonl", events_file.as_bytes()),
    ]));
    let chat = json_lines(&run(&[
        "scan",
        "--format",
        "json",
        &scratch.file("c.jsonl", chat_file.as_bytes()),
    ]));
    assert_eq!(ev.len(), chat.len());
    let mut loops = 0;
    for ((e, c), at) in ev.iter().zip(&chat).zip(&positions) {
        assert_eq!(c["type"], "messages");
        assert_eq!(e["verdict"], c["verdict"], "{}", e["id"]);
        assert_eq!(e["kind"], c["kind"], "{}", e["id"]);
        for key in ["first_warn_at", "block_at", "halt_at", "onset"] {
            let want = e[key].as_u64().map(|i| at[i as usize]);
            let call_msg = c[key].as_u64().map(|i| {
                // A verdict on a result lands on the tool message; its call is just before.
                let i = i as usize;
                if at.contains(&i) {
                    i
                } else {
                    i - 1
                }
            });
            assert_eq!(call_msg, want, "{key} of {}", e["id"]);
        }
        loops += usize::from(e["verdict"] != "continue");
    }
    assert!(loops >= 38, "{loops}");
}

#[test]
fn standard_input_is_read_with_a_dash() {
    let input = std::fs::read(data("smollm2-sample.jsonl")).unwrap();
    let o = run_stdin(&["scan", "--format", "json", "-"], &input);
    assert_eq!(o.status.code(), Some(1));
    let lines = json_lines(&o);
    assert_eq!(lines.len(), 40);
    assert_eq!(lines.iter().filter(|l| l["verdict"] == "halt").count(), 22);
}

#[test]
fn malformed_lines_are_reported_and_the_scan_goes_on() {
    let scratch = Scratch::new("bad");
    let good = r#"{"id": "loop", "token_ids": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}"#;
    let lines = [
        good,
        "{not json",
        "[1, 2]",
        r#"{"id": "x", "prompt": "no data"}"#,
        r#"{"id": "y", "token_ids": [1, -2, 3]}"#,
        r#"{"id": "z", "token_ids": [1, 4294967296]}"#,
        r#"{"id": "w", "text": 42}"#,
        r#"{"id": "v", "events": [{"role": "narrator", "text": "hi"}]}"#,
        r#"{"id": "u", "events": [{"args": {}}]}"#,
        r#"{"id": "t", "pieces_hex": ["zz"], "token_ids": [1]}"#,
        "",
        r#"{"id": "clean", "text": "Nothing repeats here at all."}"#,
        r#"{"id": "s", "pieces": ["a", 7], "token_ids": [1, 2]}"#,
        r#"{"id": "r", "pieces": ["a"], "token_ids": [1, 2]}"#,
        r#"{"id": "q", "pieces_hex": "6162", "token_ids": [1]}"#,
        r#"{"id": "p", "pieces_hex": [null], "token_ids": [1]}"#,
    ];
    let mut file = lines.join("\n").into_bytes();
    file.extend_from_slice(b"\n{\"id\": \"bytes\", \"text\": \"\xff\xfe\"}\n");
    let path = scratch.file("bad.jsonl", &file);
    let o = run(&["scan", "--format", "json", &path]);
    assert_eq!(o.status.code(), Some(2), "errors win over loops");
    let ids: Vec<Value> = json_lines(&o).iter().map(|l| l["id"].clone()).collect();
    assert_eq!(ids, [json!("loop"), json!("clean")]);
    let err = stderr(&o);
    for (line, what) in [
        (2, "not valid JSON"),
        (3, "a record must be a JSON object"),
        (4, "no `token_ids`, `text`, `events` or `messages` field"),
        (5, "token_ids[1]: -2 is not a token id"),
        (6, "token_ids[1]: 4294967296 is not a token id"),
        (7, "`text` must be a string"),
        (8, "events[0]: unknown role \"narrator\""),
        (9, "events[0]: neither `tool` nor `role`"),
        (10, "pieces_hex[0]: \"zz\" is not hexadecimal"),
        (13, "pieces[1]: expected a string, found a number"),
        (
            14,
            "`pieces` is 1 long and `token_ids` 2: one piece per token",
        ),
        (15, "`pieces_hex` must be a list of strings, found a string"),
        (16, "pieces_hex[0]: expected a string, found null"),
        (17, "not valid JSON"),
    ] {
        let want = format!("{path}:{line}: {what}");
        assert!(err.contains(&want), "{want:?} missing from:\n{err}");
    }
    // The summary counts what could not be read.
    let o = run(&["scan", &path]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stdout(&o).contains("14 lines could not be read"),
        "{}",
        stdout(&o)
    );
}

/// A line over `--max-line-bytes` is skipped with an error and never held whole: the lines
/// after it are still scanned.
#[test]
fn lines_over_the_cap_are_skipped() {
    let mut input = b"{\"id\": \"a\", \"text\": \"short\"}\n{\"text\": \"".to_vec();
    input.extend(std::iter::repeat(b'x').take(5000));
    input.extend_from_slice(b"\"}\n{\"id\": \"b\", \"text\": \"after\"}\n");
    let o = run_stdin(
        &["scan", "--format", "json", "--max-line-bytes", "1000", "-"],
        &input,
    );
    assert_eq!(o.status.code(), Some(2));
    let ids: Vec<Value> = json_lines(&o).iter().map(|l| l["id"].clone()).collect();
    assert_eq!(ids, [json!("a"), json!("b")]);
    assert!(
        stderr(&o).contains("-:2: a line of 5013 bytes, over --max-line-bytes 1000: skipped"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn exit_codes() {
    let scratch = Scratch::new("exit");
    let clean = scratch.file(
        "clean.jsonl",
        b"{\"text\": \"A short, ordinary answer.\"}\n",
    );
    assert_eq!(run(&["scan", &clean]).status.code(), Some(0));
    let empty = scratch.file("empty.jsonl", b"");
    let o = run(&["scan", &empty]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("Scanned 0 records"));
    // A record that only warns: 0 by default, 1 with --fail-on warn.
    let input = records("smollm2-sample.jsonl");
    let warn_only = input
        .iter()
        .find(|r| r["id"] == "SmolLM2-135M-Instruct.Q4_1.gguf:p054:greedy")
        .unwrap();
    let warn = scratch.file("warn.jsonl", format!("{warn_only}\n").as_bytes());
    assert_eq!(run(&["scan", &warn]).status.code(), Some(0));
    assert_eq!(
        run(&["scan", "--fail-on", "warn", &warn]).status.code(),
        Some(1)
    );
    let sample = data("smollm2-sample.jsonl");
    let sample = sample.to_str().unwrap();
    assert_eq!(
        run(&["scan", "--fail-on", "never", sample]).status.code(),
        Some(0)
    );
    // Missing files and bad arguments are errors.
    let o = run(&["scan", "/nonexistent/file.jsonl"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("/nonexistent/file.jsonl: No such file"),
        "{}",
        stderr(&o)
    );
    assert_eq!(run(&["scan"]).status.code(), Some(2));
    assert_eq!(
        run(&["scan", "--format", "xml", sample]).status.code(),
        Some(2)
    );
}

#[test]
fn presets_and_configuration_files_change_the_thresholds() {
    let scratch = Scratch::new("config");
    let sample = data("smollm2-sample.jsonl");
    let sample = sample.to_str().unwrap();
    // (halted streams, tokens saved)
    let scan = |args: &[&str]| {
        let mut all = vec!["scan", "--format", "json"];
        all.extend_from_slice(args);
        all.push(sample);
        let o = run(&all);
        assert_ne!(o.status.code(), Some(2), "{}", stderr(&o));
        let lines = json_lines(&o);
        let halted = lines.iter().filter(|l| l["verdict"] == "halt").count();
        let saved: u64 = lines
            .iter()
            .map(|l| l["tokens_saved"].as_u64().unwrap())
            .sum();
        (halted, saved)
    };
    let halts = |args: &[&str]| scan(args).0;
    let balanced = scan(&[]);
    // Strict halts at least as many streams, and sooner.
    let strict = scan(&["--preset", "strict"]);
    assert!(
        strict.0 >= balanced.0 && strict.1 > balanced.1,
        "{strict:?} {balanced:?}"
    );
    let lenient = scan(&["--preset", "lenient"]);
    assert!(
        lenient.0 < balanced.0 && lenient.1 < balanced.1,
        "{lenient:?} {balanced:?}"
    );
    let balanced = balanced.0;

    // Printed defaults read back give the same answers.
    let o = run(&["config", "--print-defaults"]);
    assert_eq!(o.status.code(), Some(0));
    let defaults = scratch.file("defaults.toml", &o.stdout);
    assert_eq!(halts(&["--config", &defaults]), balanced);
    let o = run(&["config", "--check", &defaults]);
    assert!(stdout(&o).contains("valid (stream preset balanced, agent preset default)"));

    // Keys in TOML and in JSON: halting only at 10 copies, and never on near loops, halts
    // fewer streams.
    let toml = scratch.file(
        "c.toml",
        b"[stream]\nhalt_copies = 10\nline_halt_copies = 10\nnear_halt = 0\n",
    );
    let json = scratch.file(
        "c.json",
        br#"{"stream": {"halt_copies": 10, "line_halt_copies": 10, "near_halt": 0}}"#,
    );
    let fewer = halts(&["--config", &toml]);
    assert!(fewer < balanced, "{fewer} vs {balanced}");
    assert_eq!(halts(&["--config", &json]), fewer);
    // The file's preset, overridden by the command line's.
    let strict = scratch.file("s.toml", b"[stream]\npreset = \"strict\"\n");
    assert_eq!(
        halts(&["--config", &strict]),
        halts(&["--preset", "strict"])
    );
    assert_eq!(
        halts(&["--config", &strict, "--preset", "balanced"]),
        balanced
    );

    // Agent presets: gemini-cli's thresholds are higher than ours.
    let agents = data("agent-sample.jsonl");
    let warned = |preset: &str| {
        let o = run(&[
            "scan",
            "--format",
            "json",
            "--preset",
            preset,
            agents.to_str().unwrap(),
        ]);
        json_lines(&o)
            .iter()
            .filter(|l| l["verdict"] != "continue")
            .count()
    };
    assert!(warned("gemini_cli") < warned("default"));

    // Errors name the file and the key, and stop before scanning.
    let bad = scratch.file("bad.toml", b"[stream]\nhalt_copies = 1\n");
    let o = run(&["scan", "--config", &bad, sample]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).is_empty());
    assert!(
        stderr(&o).contains(&format!("{bad}: stream.halt_copies = 1: allowed 2..=1000")),
        "{}",
        stderr(&o)
    );
    let o = run(&["scan", "--preset", "fast", sample]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown preset \"fast\""));
    let o = run(&["scan", "--config", "/nonexistent.toml", sample]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn the_progress_bar_stays_off_stderr_when_it_is_not_a_terminal() {
    let scratch = Scratch::new("progress");
    // Over the 4 MiB that turn the bar on for a terminal.
    let sample = std::fs::read(data("smollm2-sample.jsonl")).unwrap();
    let big: Vec<u8> = sample
        .iter()
        .copied()
        .cycle()
        .take(sample.len() * 16)
        .collect();
    assert!(big.len() > 4 << 20);
    let path = scratch.file("big.jsonl", &big);
    let o = run(&["scan", "--fail-on", "never", &path]);
    assert_eq!(o.status.code(), Some(0));
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
    assert!(stdout(&o).contains("Scanned 640 records"));
}

/// The CLI's dependencies stay out of the library, and so out of its C artifacts.
#[test]
fn the_library_does_not_depend_on_the_cli_crates() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
    let o = Command::new(env!("CARGO"))
        .args([
            "tree",
            "--offline",
            "-e",
            "normal",
            "-p",
            "loopguard",
            "--prefix",
            "none",
        ])
        .arg("--manifest-path")
        .arg(&manifest)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let tree = stdout(&o);
    assert!(tree.contains("serde_json"), "{tree}");
    for cli_only in ["clap", "indicatif", "toml"] {
        assert!(
            !tree.lines().any(|l| l.starts_with(&format!("{cli_only} "))),
            "{cli_only} in the library's tree:\n{tree}"
        );
    }
}
