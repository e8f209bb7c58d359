//! Runs the Python package's tests (`bindings/python/tests`, pytest) against the library built
//! from the sources as they are now: the ctypes declarations checked against the header, the
//! stream, pool and agent guards, and the llama-cpp-python adapter end to end (which skips
//! itself without llama-cpp-python and the model).
//!
//! Needs python3 with pytest and numpy; skipped without them unless
//! `LOOPGUARD_REQUIRE_TOOLS=1` (set by `.ci/run`).

use std::path::PathBuf;
use std::process::Command;

#[test]
fn python_package() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let required = std::env::var("LOOPGUARD_REQUIRE_TOOLS").is_ok();
    let probe = Command::new("python3")
        .args(["-c", "import pytest, numpy"])
        .output();
    if !probe.as_ref().is_ok_and(|o| o.status.success()) {
        assert!(
            !required,
            "python3 with pytest and numpy is required: pip install pytest numpy"
        );
        eprintln!("skipped: python3 with pytest and numpy is not installed");
        return;
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(&root)
        .args(["build", "--release", "--lib", "--quiet"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new("python3")
        .current_dir(root.join("bindings/python"))
        .args([
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-s",
            "-p",
            "no:cacheprovider",
            "tests",
        ])
        .env("LOOPGUARD_LIB", root.join("target/release/libloopguard.so"))
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "pytest failed:\n{text}");
    // The summary (and the adapter's measured share of the time per token) in the test log.
    for line in text.lines().filter(|l| {
        l.contains("passed")
            || l.contains("SKIPPED")
            || l.starts_with("llama-cpp-python")
            || l.starts_with("guard per token")
    }) {
        eprintln!("{line}");
    }
}
