//! Runs the Go package's checks (`bindings/go`) against the library built from the sources as
//! they are now, installed with its pkg-config file into a scratch prefix: `gofmt`, `go vet`, the tests
//! under the race detector (finalizers, a collection between calls, callbacks, errors), the
//! example agent loop, and a short run of the benchmark that compares a Go batch push with the
//! same pushes made from C.
//!
//! Needs Go (Debian's golang-go, 1.19 or later) with gcc and pkg-config; skipped without them
//! unless `LOOPGUARD_REQUIRE_TOOLS=1` (set by `.ci/run`).

use std::process::Command;

mod tools;

fn have(tool: &str, arg: &str) -> bool {
    Command::new(tool)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn go_package() {
    let ok = have("go", "version") && have("gcc", "--version") && have("pkg-config", "--version");
    if !tools::available(
        ok,
        "go, gcc or pkg-config is not installed: apt-get install golang-go",
    ) {
        return;
    }
    let root = tools::root();
    let lib = tools::release_lib_dir();
    // A fixed prefix: Go's build cache keeps the -L path pkg-config gave it, so a prefix that
    // moved or vanished would break the next run's link.
    let prefix = tools::target_dir().join("go-prefix");
    tools::succeed(
        Command::new(root.join("scripts/install.sh"))
            .env("PREFIX", &prefix)
            .env("LOOPGUARD_LIB_DIR", &lib),
    );
    let header = {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        std::fs::read(root.join("include/loopguard.h"))
            .unwrap()
            .hash(&mut h);
        format!("0x{:x}", h.finish())
    };
    let go = |args: &[&str]| {
        let mut cmd = Command::new("go");
        cmd.current_dir(root.join("bindings/go"))
            .args(args)
            .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))
            .env("LD_LIBRARY_PATH", prefix.join("lib"))
            .env("CGO_ENABLED", "1")
            // Go's build cache does not see a header outside the package change: its hash in
            // the flags makes a changed header rebuild the package.
            .env(
                "CGO_CFLAGS",
                format!("-O2 -g -DLOOPGUARD_HEADER_HASH={header}"),
            )
            // The package has no dependencies: nothing is fetched.
            .env("GOPROXY", "off")
            .env("GOFLAGS", "-mod=mod");
        let out = tools::succeed(&mut cmd);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let gofmt = tools::succeed(
        Command::new("gofmt")
            .args(["-l", "."])
            .current_dir(root.join("bindings/go")),
    );
    assert!(
        gofmt.stdout.is_empty(),
        "gofmt would change: {}",
        String::from_utf8_lossy(&gofmt.stdout)
    );
    go(&["vet", "./..."]);
    go(&["test", "-race", "-count=1", "./..."]);
    let example = go(&["run", "./examples/agent"]);
    assert!(
        example.contains("-> block") && example.contains("<loop-recovery>"),
        "the example agent was not stopped:\n{example}"
    );
    let bench = go(&[
        "test",
        "-run",
        "^$",
        "-bench",
        "PoolPush",
        "-benchtime",
        "20x",
        ".",
    ]);
    tools::note("go batch push (64 a step), ns per token:");
    for line in bench.lines().filter(|l| l.starts_with("Benchmark")) {
        tools::note(line);
    }
}
