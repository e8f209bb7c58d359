//! The speed gate: instructions per unit of work on each hot path, counted by callgrind (the
//! same binary gives the same count on every run, whatever the machine is doing), checked
//! against the committed baseline `benches/instructions.txt`. A path that costs more than 5%
//! over its baseline fails; one 5% under it says the baseline should be lowered
//! (`LOOPGUARD_UPDATE_BASELINE=1 cargo test --release --test speed_gate` rewrites it).
//!
//! The work is `examples/profile_tokens` over the bundled SmolLM2 sample
//! (`tests/data/smollm2-sample.jsonl`), built in release with one codegen unit (in
//! `target/speed-gate`): token ids, ids with pieces, text
//! alone in 16-byte chunks, ids through the C ABI, and a pool of 64 through `lg_pool_push`.
//! Each count is a run with `REPS=3` minus one with `REPS=1` (loading and setup cancel), over
//! the units the extra work pushed. Needs valgrind; skipped without it unless
//! `LOOPGUARD_REQUIRE_TOOLS=1`.

use std::collections::BTreeMap;
use std::process::Command;

mod tools;

const TOLERANCE: f64 = 0.05;
const PATHS: [(&str, &str, &str); 6] = [
    ("ids", "", "a token"),
    ("pieces", "PIECES=1", "a token"),
    ("text", "TEXT=16", "a byte"),
    ("c_abi", "CABI=1", "a token"),
    ("pool", "POOL=64", "a sequence-token"),
    ("speculative", "PIECES=1 SPEC=4", "an accepted token"),
];

/// Instructions and units of work of one run.
fn measure(exe: &std::path::Path, env: &str, reps: u32) -> (u64, u64) {
    let mut cmd = Command::new("valgrind");
    cmd.args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(exe)
        .arg(tools::root().join("tests/data/smollm2-sample.jsonl"))
        .env("REPS", reps.to_string());
    for (k, v) in env.split_whitespace().filter_map(|kv| kv.split_once('=')) {
        cmd.env(k, v);
    }
    let out = tools::succeed(&mut cmd);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let collected = stderr
        .lines()
        .find_map(|l| l.split("Collected :").nth(1))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no instruction count from callgrind:\n{stderr}"));
    // "tokens pushed: N …", "bytes pushed: N …", "pool of 64: N sequence-tokens …"
    let stdout = String::from_utf8_lossy(&out.stdout);
    let units = stdout
        .lines()
        .next()
        .and_then(|l| l.split(": ").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no unit count from profile_tokens:\n{stdout}"));
    (collected, units)
}

fn baseline_path() -> std::path::PathBuf {
    tools::root().join("benches/instructions.txt")
}

fn read_baseline() -> BTreeMap<String, f64> {
    let text = std::fs::read_to_string(baseline_path()).unwrap_or_default();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            Some((parts.next()?.to_string(), parts.next()?.parse().ok()?))
        })
        .collect()
}

#[test]
fn instructions_per_unit_stay_within_the_baseline() {
    let ok = Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !tools::available(ok, "valgrind is not installed: apt-get install valgrind") {
        return;
    }
    // One codegen unit, in a target directory of its own: with the default sixteen, how the
    // crate's functions fall into units (and so what is inlined where) moves with code far
    // from the hot paths, and an unrelated change to the agent guard moved the speculative
    // path's count by 2.6%. With one unit the count is the code's own.
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target = tools::target_dir().join("speed-gate");
    tools::succeed(
        Command::new(cargo)
            .current_dir(tools::root())
            .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "1")
            .env("CARGO_TARGET_DIR", &target)
            .args([
                "build",
                "--release",
                "--quiet",
                "--example",
                "profile_tokens",
            ]),
    );
    let exe = target.join("release/examples/profile_tokens");
    let baseline = read_baseline();
    let update = std::env::var("LOOPGUARD_UPDATE_BASELINE").is_ok();
    let mut measured = Vec::new();
    let mut failures = Vec::new();
    for (name, env, unit) in PATHS {
        let (i3, u3) = measure(&exe, env, 3);
        let (i1, u1) = measure(&exe, env, 1);
        let per = (i3 - i1) as f64 / (u3 - u1).max(1) as f64;
        measured.push((name, per));
        match baseline.get(name) {
            _ if update => tools::note(&format!("{name:8} {per:8.1} instructions {unit}")),
            None => failures.push(format!("{name}: no baseline in benches/instructions.txt")),
            Some(&base) => {
                let change = per / base - 1.0;
                tools::note(&format!(
                    "{name:8} {per:8.1} instructions {unit} (baseline {base:.1}, {:+.1}%)",
                    100.0 * change
                ));
                if change > TOLERANCE {
                    failures.push(format!(
                        "{name}: {per:.1} instructions {unit}, {:.1}% over the baseline {base:.1}",
                        100.0 * change
                    ));
                } else if change < -TOLERANCE {
                    // Cheaper is never a failure (a newer compiler may do better), but the
                    // baseline should follow, or it stops catching regressions.
                    tools::note(&format!(
                        "{name}: {:.1}% under the baseline: lower it (LOOPGUARD_UPDATE_BASELINE=1)",
                        -100.0 * change
                    ));
                }
            }
        }
    }
    if update {
        let mut text = String::from(
            "# Instructions per unit of work on each hot path (tests/speed_gate.rs), callgrind,\n\
             # examples/profile_tokens over tests/data/smollm2-sample.jsonl, release build.\n",
        );
        for (name, per) in &measured {
            text += &format!("{name} {per:.1}\n");
        }
        std::fs::write(baseline_path(), text).unwrap();
        return;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
