//! Agent-guard quality on real coding-agent runs (bash-tool agents: SWE-agent on Java issues
//! with five models, mini-swe-agent with gpt-5-mini on SWE-bench Verified): how many runs
//! that resolved their task the guard warns on, blocks or halts; how many hand-labelled stuck
//! runs it warns on at the labelled point; and how many labelled runs that were not stuck it
//! warns on.
//!
//!     cargo run --release --example coding_agent_quality -- [CORPUS_DIR] [--preset NAME]
//!         [--labels FILE] [--list] [--trace ID] [--memory] [--unflagged]
//!         [--host claude|codex|openhands|tools]
//!
//! CORPUS_DIR defaults to `../shared/corpus` (it holds `coding_agents.jsonl`, which is not
//! redistributable: read it from there). The labels default to
//! `scripts/data/coding_agent_labels.jsonl`, the project's own judgements of 71 runs (ids and
//! verdicts only). `--list` prints the first warning of every run the guard acts on;
//! `--trace ID` prints one run event by event with the guard's answer to each. `--memory`
//! gives each run the loop memory exported by the earlier runs of the same task (other models
//! on the same issue: an agent restarted on a task it failed), and says how the first
//! warnings moved. `--unflagged` feeds every result without its error flag, as hosts whose
//! harness flags no failure do (OpenHands prints the exit status into the output, Codex into
//! its metadata): the guard must then tell failures from the output alone. `--host NAME` feeds
//! each event shaped as another harness sends it, to check that the guard's answers do not
//! depend on the shape: `claude` (tool `Bash`, a `description` beside the command: the
//! thought's first words), `codex` (tool `shell`, the command as `["bash", "-lc", COMMAND]`
//! with a `workdir`, the output in JSON with its exit code and a duration, no error flag) and
//! `openhands` (tool `execute_bash`, the exit code and working directory printed after the
//! output, no error flag). `tools` is Claude Code with its file tools: what a command line
//! does with a file becomes the tool made for it (SWE-agent's `open`, `goto` and scrolling,
//! `cat FILE` and `nl -ba FILE | sed -n 'A,Bp'` a `Read` of the lines shown; `search_file`,
//! `search_dir` and a plain `grep` a `Grep`; `find_file` a `Glob`; `create` and a heredoc into
//! a file a `Write`; SWE-agent's `edit A:B` an `Edit` of the open file), anything else `Bash`.
//!
//! A run is replayed as recorded: each event is a call of the `bash` tool with its command as
//! the arguments (`{"command": ...}`), then its output and error as the result; a reply the
//! harness rejected (`"error": "format_error"`, no command) is a rejection event.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use loopguard::{Action, AgentConfig, AgentGuard, AgentPreset, AgentVerdict};
use serde_json::Value;

/// `--unflagged`: results are fed without their error flag.
static UNFLAGGED: AtomicBool = AtomicBool::new(false);

/// `--host`: the harness whose shape events are given (`None`: as recorded).
static HOST: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// One event's call and result as `host` sends them: (tool, arguments, result, error).
fn shaped(
    host: &str,
    step: usize,
    e: &Value,
    viewer: &mut Viewer,
) -> (String, String, Option<String>, Option<String>) {
    let command = e["args"]["command"].as_str().unwrap_or("").to_string();
    let (result, error) = (e["result"].as_str(), e["error"].as_str());
    let status = i32::from(error.is_some());
    let out = result.unwrap_or("").to_string();
    match host {
        "claude" => {
            let words: String = e["thought"]
                .as_str()
                .unwrap_or("Run a command")
                .chars()
                .take(60)
                .collect();
            let args =
                serde_json::json!({"command": command, "description": words, "timeout": 120000});
            (
                "Bash".into(),
                args.to_string(),
                result.map(String::from),
                error.map(String::from),
            )
        }
        "codex" => {
            let args = serde_json::json!({"command": ["bash", "-lc", command], "workdir": "/repo"});
            // A duration that differs every time, as a real one does.
            let seconds = 0.1 + (step % 7) as f64 * 0.37;
            let output = serde_json::json!({
                "output": out,
                "metadata": {"exit_code": status, "duration_seconds": seconds},
            });
            (
                "shell".into(),
                args.to_string(),
                Some(output.to_string()),
                None,
            )
        }
        "openhands" => {
            let args = serde_json::json!({"command": command, "is_input": "false"});
            let output = format!(
                "{out}\n[The command completed with exit code {status}.]\n[Current working directory: /workspace]"
            );
            ("execute_bash".into(), args.to_string(), Some(output), None)
        }
        "tools" => match viewer.file_tool(&command) {
            Some((tool, args)) => (
                tool,
                args.to_string(),
                result.map(String::from),
                error.map(String::from),
            ),
            // Any other command is Claude Code's `Bash`, with its description.
            None => shaped("claude", step, e, viewer),
        },
        _ => unreachable!("checked when parsed"),
    }
}

/// What a host with file tools knows between calls: the file SWE-agent's `open` (or
/// `create`) made current, and the first line of its window.
#[derive(Default)]
struct Viewer {
    file: String,
    line: u64,
}

/// Lines SWE-agent's window shows.
const WINDOW: u64 = 100;

impl Viewer {
    /// The file tool and its arguments for a command line that reads, searches or writes a
    /// file, as Claude Code's `Read`, `Grep`, `Glob`, `Write` and `Edit` take them; `None` for
    /// any other command (it stays a `Bash` call).
    fn file_tool(&mut self, command: &str) -> Option<(String, Value)> {
        use serde_json::json;
        let (first, body) = command.split_once('\n').unwrap_or((command, ""));
        let words: Vec<&str> = first.split_whitespace().collect();
        let unquote = |w: &str| w.trim_matches(|c| c == '"' || c == '\'').to_string();
        let read = |file: &str, offset: u64, limit: u64| json!({"file_path": file, "offset": offset, "limit": limit});
        let plain = !first.contains(['|', '>', ';', '&', '$', '`']);
        let tool = match words.as_slice() {
            ["open", file, rest @ ..] => {
                self.file = unquote(file);
                self.line = rest.first().and_then(|n| n.parse().ok()).unwrap_or(1);
                ("Read", read(&self.file, self.line, WINDOW))
            }
            ["goto", n] => {
                self.line = n.parse().ok()?;
                ("Read", read(&self.file, self.line, WINDOW))
            }
            ["scroll_down"] => {
                self.line += WINDOW;
                ("Read", read(&self.file, self.line, WINDOW))
            }
            ["scroll_up"] => {
                self.line = self.line.saturating_sub(WINDOW).max(1);
                ("Read", read(&self.file, self.line, WINDOW))
            }
            ["create", file] => {
                (self.file, self.line) = (unquote(file), 1);
                ("Write", json!({"file_path": self.file, "content": ""}))
            }
            ["edit", range] if !body.is_empty() => {
                let new = body.strip_suffix("end_of_edit").unwrap_or(body);
                let old = format!("the lines {range} of {}", self.file);
                let args = json!({"file_path": self.file, "old_string": old, "new_string": new});
                ("Edit", args)
            }
            ["search_file", ..] | ["search_dir", ..] | ["find_file", ..] => {
                // The term may be quoted with spaces in it: it is what lies between the quotes.
                let rest = first.split_once(' ')?.1.trim();
                let (term, place) = match rest.strip_prefix('"') {
                    Some(r) => r.split_once('"').map(|(t, p)| (t.to_string(), p.trim()))?,
                    None => rest
                        .split_once(' ')
                        .map_or((rest.to_string(), ""), |(t, p)| (t.to_string(), p.trim())),
                };
                match words[0] {
                    "search_file" => {
                        let path = if place.is_empty() { &self.file } else { place };
                        let args = json!({"pattern": term, "path": path, "output_mode": "content"});
                        ("Grep", args)
                    }
                    "search_dir" => {
                        let path = if place.is_empty() { "." } else { place };
                        ("Grep", json!({"pattern": term, "path": path}))
                    }
                    _ => {
                        let path = if place.is_empty() { "." } else { place };
                        (
                            "Glob",
                            json!({"pattern": format!("**/{term}"), "path": path}),
                        )
                    }
                }
            }
            ["cat", file] if plain && body.is_empty() => {
                ("Read", json!({"file_path": unquote(file)}))
            }
            ["nl", "-ba", file, "|", "sed", "-n", range] | ["sed", "-n", range, file]
                if body.is_empty() =>
            {
                let (a, b) = unquote(range)
                    .trim_end_matches('p')
                    .split_once(',')
                    .and_then(|(a, b)| Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?)))?;
                ("Read", read(&unquote(file), a, b.saturating_sub(a) + 1))
            }
            ["grep", rest @ ..] if plain && body.is_empty() => {
                let mut operands = rest.iter().filter(|w| !w.starts_with('-'));
                let pattern = unquote(operands.next()?);
                let path = operands.next().map_or(".".to_string(), |p| unquote(p));
                (
                    "Grep",
                    json!({"pattern": pattern, "path": path, "output_mode": "content"}),
                )
            }
            ["cat", "<<'EOF'" | "<<EOF" | "<<'PY'" | "<<\"EOF\"", ">", file] => {
                let content = body.rsplit_once('\n').map_or(body, |(c, _)| c);
                (
                    "Write",
                    json!({"file_path": unquote(file), "content": content}),
                )
            }
            _ => return None,
        };
        Some((tool.0.to_string(), tool.1))
    }
}

/// Feeds one trajectory; returns the most severe verdict per event.
fn run(config: &AgentConfig, events: &[Value]) -> Vec<AgentVerdict> {
    run_with_memory(config, events, &[]).0
}

/// [`run`] with a loop memory imported first (empty: none); also returns the memory after.
fn run_with_memory(
    config: &AgentConfig,
    events: &[Value],
    memory: &[u8],
) -> (Vec<AgentVerdict>, Vec<u8>) {
    let mut g = AgentGuard::new(config);
    if !memory.is_empty() {
        g.import_memory(memory)
            .expect("a memory this program exported");
    }
    let mut out = Vec::new();
    let mut viewer = Viewer::default();
    for e in events {
        if e["error"].as_str() == Some("format_error") && e["args"]["command"].is_null() {
            out.push(g.reject().clone());
            continue;
        }
        let (tool, args, result, mut error) = match HOST.get() {
            Some(host) => shaped(host, out.len(), e, &mut viewer),
            None => (
                e["tool"].as_str().unwrap_or("").to_string(),
                serde_json::to_string(&e["args"]).unwrap(),
                e["result"].as_str().map(String::from),
                e["error"].as_str().map(String::from),
            ),
        };
        let mut worst = g
            .call_with_thought(&tool, args.as_bytes(), e["thought"].as_str())
            .clone();
        if UNFLAGGED.load(Ordering::Relaxed) {
            error = None;
        }
        if result.is_some() || error.is_some() {
            let v = g.result(
                result.as_deref().map(str::as_bytes),
                error.as_deref().map(str::as_bytes),
            );
            if v.action > worst.action {
                worst = v.clone();
            }
        }
        out.push(worst);
    }
    (out, g.export_memory())
}

/// One line per event: the command, the start of its error or result, the guard's answer.
fn print_trace(config: &AgentConfig, events: &[Value]) {
    let short = |v: &Value, n: usize| {
        let t = v.as_str().unwrap_or("");
        t.chars().take(n).collect::<String>().replace('\n', "\\n")
    };
    for (i, (e, v)) in events.iter().zip(run(config, events)).enumerate() {
        let what = if e["args"]["command"].is_null() {
            "(rejected reply)".to_string()
        } else {
            short(&e["args"]["command"], 70)
        };
        let out = if e["error"].is_string() {
            format!("ERR {}", short(&e["error"], 50))
        } else {
            short(&e["result"], 50)
        };
        let answer = if v.action > Action::Continue {
            format!("  <= {} {}", v.action.as_str(), v.kind.as_str())
        } else {
            String::new()
        };
        println!("{i:3} {what}\n      -> {out}{answer}");
    }
}

fn first_at_least(verdicts: &[AgentVerdict], a: Action) -> Option<usize> {
    verdicts.iter().position(|v| v.action >= a)
}

fn describe(v: &AgentVerdict) -> String {
    let mut s = v.subject.chars().take(90).collect::<String>();
    s = s.replace('\n', "\\n");
    format!("{} {} ({})", v.action.as_str(), v.kind.as_str(), s)
}

fn pct(n: usize, of: usize) -> f64 {
    100.0 * n as f64 / of.max(1) as f64
}

fn main() {
    let mut dir = "../shared/corpus".to_string();
    let mut labels_path = "scripts/data/coding_agent_labels.jsonl".to_string();
    let mut preset = AgentPreset::Default;
    let mut list = false;
    let mut trace = None;
    let mut memory = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--preset" => {
                let name = args.next().unwrap_or_else(|| die("--preset NAME"));
                preset = AgentPreset::from_name(&name)
                    .unwrap_or_else(|| die(&format!("--preset: unknown preset {name:?}")));
            }
            "--labels" => labels_path = args.next().unwrap_or_else(|| die("--labels FILE")),
            "--list" => list = true,
            "--memory" => memory = true,
            "--unflagged" => UNFLAGGED.store(true, Ordering::Relaxed),
            "--host" => {
                let name = args.next().unwrap_or_else(|| die("--host NAME"));
                if !matches!(name.as_str(), "claude" | "codex" | "openhands" | "tools") {
                    die(&format!(
                        "--host: unknown host {name:?} (claude, codex, openhands, tools)"
                    ));
                }
                HOST.set(name).expect("--host given once");
            }
            "--trace" => trace = Some(args.next().unwrap_or_else(|| die("--trace ID"))),
            _ => dir = a,
        }
    }
    let config = AgentConfig::preset(preset);
    let path = format!("{dir}/coding_agents.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| die(&format!("{path}: {e}")));
    let mut runs: HashMap<String, Value> = HashMap::new();
    let mut order = Vec::new();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| die(&format!("{path}: {e} in {line:.80}")));
        let id = v["id"].as_str().unwrap_or_default().to_string();
        order.push(id.clone());
        runs.insert(id, v);
    }
    println!("preset: {}", preset.name());
    if let Some(id) = trace {
        let run_of = runs
            .get(&id)
            .unwrap_or_else(|| die(&format!("--trace: no run {id:?}")));
        print_trace(&config, run_of["events"].as_array().unwrap());
        return;
    }

    // Every run, by outcome: warned, blocked, halted.
    let mut verdicts: HashMap<&str, Vec<AgentVerdict>> = HashMap::new();
    for id in &order {
        verdicts.insert(id, run(&config, runs[id]["events"].as_array().unwrap()));
    }
    if memory {
        // Runs of one task in corpus order, each given what the earlier ones left.
        let mut left: HashMap<String, AgentGuard> = HashMap::new();
        let (mut given, mut earlier, mut later, mut new, mut gone) = (0, 0, 0, 0, 0);
        for id in &order {
            let task = runs[id]["task"]["instance_id"]
                .as_str()
                .unwrap_or(id)
                .to_string();
            let holder = left.entry(task).or_insert_with(|| AgentGuard::new(&config));
            let before = holder.export_memory();
            given += usize::from(holder.memory_len() > 0);
            let (vs, after) =
                run_with_memory(&config, runs[id]["events"].as_array().unwrap(), &before);
            holder.import_memory(&after).expect("exported here");
            let (a, b) = (
                first_at_least(&verdicts[id.as_str()], Action::Warn),
                first_at_least(&vs, Action::Warn),
            );
            match (a, b) {
                (Some(a), Some(b)) if b < a => earlier += 1,
                (Some(a), Some(b)) if b > a => later += 1,
                (None, Some(_)) => new += 1,
                (Some(_), None) => gone += 1,
                _ => {}
            }
            verdicts.insert(id, vs);
        }
        println!(
            "memory: {given} of {} runs were given the loops of earlier runs of their task; \
             first warnings came earlier in {earlier}, later in {later}, in {new} runs that had \
             none, and went away in {gone}",
            order.len()
        );
        // The same agent restarted on the same task: each run replayed with the memory its
        // own first replay left.
        let (mut replays, mut sooner, mut steps) = (0, 0, 0);
        for id in &order {
            let events = runs[id]["events"].as_array().unwrap();
            let (first, own) = run_with_memory(&config, events, &[]);
            let Some(a) = first_at_least(&first, Action::Warn) else {
                continue;
            };
            replays += 1;
            let (again, _) = run_with_memory(&config, events, &own);
            if let Some(b) = first_at_least(&again, Action::Warn).filter(|&b| b < a) {
                sooner += 1;
                steps += a - b;
            }
        }
        println!(
            "memory, the same run again: of the {replays} runs it warns on, {sooner} warned \
             sooner ({steps} events sooner in all)"
        );
    }
    for (name, want) in [
        ("resolved", Some(true)),
        ("not resolved", Some(false)),
        ("outcome unknown", None),
    ] {
        let ids: Vec<&String> = order
            .iter()
            .filter(|id| runs[*id]["outcome"]["resolved"].as_bool() == want)
            .collect();
        let count = |a| {
            ids.iter()
                .filter(|id| first_at_least(&verdicts[id.as_str()], a).is_some())
                .count()
        };
        let (w, b, h) = (
            count(Action::Warn),
            count(Action::Block),
            count(Action::Halt),
        );
        println!(
            "{name}: {} runs; warned {w} ({:.1}%), blocked {b} ({:.1}%), halted {h} ({:.1}%)",
            ids.len(),
            pct(w, ids.len()),
            pct(b, ids.len()),
            pct(h, ids.len())
        );
        if want == Some(true) || list {
            for id in &ids {
                let vs = &verdicts[id.as_str()];
                if let Some(at) = first_at_least(vs, Action::Warn) {
                    let worst = vs.iter().map(|v| v.action).max().unwrap();
                    println!(
                        "  {name} {id}: event {at} of {}: {} (worst {})",
                        vs.len(),
                        describe(&vs[at]),
                        worst.as_str()
                    );
                }
            }
        }
    }

    // The hand-labelled runs: stuck ones are caught when the first warning comes within one
    // event of the labelled point (an alarm long before the loop began is not a catch).
    let labels = std::fs::read_to_string(&labels_path)
        .unwrap_or_else(|e| die(&format!("--labels {labels_path}: {e}")));
    let mut groups: HashMap<&str, (usize, usize, Vec<i64>)> = HashMap::new();
    let (mut ok, mut ok_warned) = (0, 0);
    let mut lines = Vec::new();
    for line in labels.lines() {
        let l: Value = serde_json::from_str(line).unwrap();
        let id = l["id"].as_str().unwrap().to_string();
        let vs = &verdicts[id.as_str()];
        let first = first_at_least(vs, Action::Warn);
        if l["stuck"].as_bool().unwrap() {
            let group = if l["kind"].as_str() == Some("rejected_replies") {
                "rejected replies"
            } else {
                "task loops"
            };
            let want = l["should_warn_at"].as_i64().unwrap();
            let g = groups.entry(group).or_default();
            g.0 += 1;
            match first {
                Some(at) => {
                    let off = at as i64 - want;
                    g.2.push(off);
                    if off.abs() <= 1 {
                        g.1 += 1;
                    } else {
                        lines.push(format!(
                            "  off by {off:+}: {id} (warn wanted at {want}): {}",
                            describe(&vs[at])
                        ));
                    }
                }
                None => lines.push(format!("  missed: {id} (warn wanted at {want})")),
            }
        } else {
            ok += 1;
            if let Some(at) = first {
                ok_warned += 1;
                lines.push(format!(
                    "  false alarm: {id} at event {at}: {}",
                    describe(&vs[at])
                ));
            }
        }
    }
    for (name, (n, caught, mut offs)) in groups {
        offs.sort_unstable();
        println!(
            "labelled stuck, {name}: {caught}/{n} ({:.1}%) warned within one event; offsets {offs:?}",
            pct(caught, n)
        );
    }
    println!(
        "labelled not stuck: warned {ok_warned}/{ok} ({:.1}%)",
        pct(ok_warned, ok)
    );
    for l in lines {
        println!("{l}");
    }
}

/// Bad arguments or an unreadable file: say which, and exit 2.
fn die(msg: &str) -> ! {
    eprintln!("coding_agent_quality: {msg}");
    std::process::exit(2)
}
