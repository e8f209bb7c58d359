//! Runs the Python package's tests (`bindings/python/tests`, pytest) against the library built
//! from the sources as they are now: the ctypes declarations checked against the header, the
//! stream, pool and agent guards, and the llama-cpp-python adapter end to end (which skips
//! itself without llama-cpp-python and the model).
//!
//! Needs python3 with pytest and numpy; skipped without them unless
//! `LOOPGUARD_REQUIRE_TOOLS=1` (set by `.ci/run`).

use std::process::Command;

mod tools;

#[test]
fn python_package() {
    let root = tools::root();
    let probe = Command::new("python3")
        .args(["-c", "import pytest, numpy"])
        .output();
    let why = "python3 with pytest and numpy is not installed: pip install pytest numpy";
    if !tools::available(probe.is_ok_and(|o| o.status.success()), why) {
        return;
    }
    let lib = tools::release_lib_dir().join("libloopguard.so");
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
        .env("LOOPGUARD_LIB", lib)
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
