//! Helpers for the tests that build the library's C artifacts and drive outside tools (gcc,
//! python3, llama.cpp).
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Cargo's target directory: `CARGO_TARGET_DIR` when set (relative to the repository), else
/// `target`.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => root().join(dir),
        None => root().join("target"),
    }
}

/// `<target>/release`, after `cargo build --release --lib` built the C artifacts from the
/// sources as they are now (release: the tests measure the guard's time in a real generation
/// loop).
pub fn release_lib_dir() -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .current_dir(root())
        .args(["build", "--release", "--lib", "--quiet"]);
    succeed(&mut build);
    target_dir().join("release")
}

/// Runs `cmd` and fails the test with its output unless it succeeds.
pub fn succeed(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `false` (skip, with a notice) when a tool is missing, unless `LOOPGUARD_REQUIRE_TOOLS` is
/// set (by `.ci/run`), which makes it a failure.
pub fn available(ok: bool, why: &str) -> bool {
    if !ok {
        assert!(
            std::env::var("LOOPGUARD_REQUIRE_TOOLS").is_err(),
            "required (LOOPGUARD_REQUIRE_TOOLS is set): {why}"
        );
        note(&format!("skipped: {why}"));
    }
    ok
}

/// Prints a line in the test's normal output. The test harness captures `eprintln!` unless
/// run with `--nocapture`; a write to the stderr handle itself is not captured, so a skipped
/// suite says so in every run.
pub fn note(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}
