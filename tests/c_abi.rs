//! Builds and runs the C and C++ tests against the library cargo just built: plainly, under
//! AddressSanitizer + UndefinedBehaviorSanitizer, under valgrind (0 errors, 0 leaks), the
//! threaded test under ThreadSanitizer, and the header alone as C99 and C++17 with
//! `-Wall -Wextra -Werror -pedantic`.
//!
//! A tool that is missing skips its test with a notice, unless `LOOPGUARD_REQUIRE_TOOLS=1`
//! (set by `.ci/run`), which makes it a failure.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `target/debug` (or `target/release` under `cargo test --release`), holding a
/// `libloopguard.a` and `libloopguard.so` built from the sources as they are now. `cargo test`
/// builds the library only as an rlib for the test harness, so the C artifacts are built here,
/// once per test binary, with `cargo build --lib` in the same profile.
fn lib_dir() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            // target/<profile>/deps/c_abi-<hash> -> target/<profile>
            let exe = std::env::current_exe().unwrap();
            let dir = exe.parent().unwrap().parent().unwrap().to_path_buf();
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let mut build = Command::new(cargo);
            build
                .current_dir(root())
                .args(["build", "--lib", "--quiet", "--message-format=short"]);
            if dir.ends_with("release") {
                build.arg("--release");
            }
            let out = build.output().expect("run cargo build --lib");
            assert!(
                out.status.success(),
                "cargo build --lib failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            dir
        })
        .clone()
}

fn have(tool: &str) -> bool {
    let ok = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("LOOPGUARD_REQUIRE_TOOLS").is_err(),
            "{tool} is required (LOOPGUARD_REQUIRE_TOOLS is set) but missing"
        );
        // Written to the handle, not with eprintln!, which the harness captures: the notice
        // shows in every run, not only under --nocapture.
        let _ = writeln!(std::io::stderr(), "skipped: {tool} is not installed");
    }
    ok
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{cmd:?} failed:\n{text}");
    text
}

/// Compiles `sources` into a program linked statically against the library.
fn build(name: &str, compiler: &str, std: &str, sources: &[&str], flags: &[&str]) -> PathBuf {
    let out = std::env::temp_dir().join(format!("loopguard-{}-{name}", std::process::id()));
    let lib = lib_dir().join("libloopguard.a");
    assert!(
        lib.exists(),
        "{} missing: cargo builds it with the library",
        lib.display()
    );
    let mut cmd = Command::new(compiler);
    cmd.arg(format!("-std={std}"))
        .args(["-Wall", "-Wextra", "-Werror", "-pedantic", "-g"])
        .arg("-I")
        .arg(root().join("include"))
        .arg("-I")
        .arg(root().join("bindings/cpp"))
        .args(flags)
        .args(sources.iter().map(|s| root().join(s)))
        .arg(&lib)
        // The static link line (README): the library's native dependencies.
        .args(["-lpthread", "-ldl", "-lm", "-lrt", "-lutil"])
        .arg("-o")
        .arg(&out);
    run(&mut cmd);
    out
}

#[test]
fn the_header_compiles_alone_as_c99_and_cpp17() {
    if !have("gcc") || !have("g++") {
        return;
    }
    let dir = std::env::temp_dir();
    for (compiler, std, ext) in [("gcc", "c99", "c"), ("g++", "c++17", "cpp")] {
        let src = dir.join(format!("loopguard-header-{}.{ext}", std::process::id()));
        std::fs::write(
            &src,
            "#include \"loopguard.h\"\nint main(void) { return lg_version_number() == 0; }\n",
        )
        .unwrap();
        run(Command::new(compiler)
            .arg(format!("-std={std}"))
            .args([
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pedantic",
                "-fsyntax-only",
                "-I",
            ])
            .arg(root().join("include"))
            .arg(&src));
    }
}

/// The C test programs in `tests/c/`, each with its own `main`.
const C_TESTS: [&str; 2] = ["test_stream", "test_agent"];

#[test]
fn c_tests_pass() {
    if !have("gcc") {
        return;
    }
    for t in C_TESTS {
        let exe = build(
            &format!("plain-{t}"),
            "gcc",
            "c99",
            &[&format!("tests/c/{t}.c")],
            &[],
        );
        assert!(run(&mut Command::new(&exe)).contains("all checks passed"));
    }
}

#[test]
fn c_tests_pass_under_asan_and_ubsan() {
    if !have("gcc") {
        return;
    }
    let flags = [
        "-fsanitize=address,undefined",
        "-fno-sanitize-recover=all",
        "-fno-omit-frame-pointer",
    ];
    for t in C_TESTS {
        let exe = build(
            &format!("asan-{t}"),
            "gcc",
            "c99",
            &[&format!("tests/c/{t}.c")],
            &flags,
        );
        let out = run(Command::new(&exe).env("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=1"));
        assert!(out.contains("all checks passed"));
    }
}

#[test]
fn c_tests_pass_under_valgrind() {
    if !have("gcc") || !have("valgrind") {
        return;
    }
    for t in C_TESTS {
        let exe = build(
            &format!("valgrind-{t}"),
            "gcc",
            "c99",
            &[&format!("tests/c/{t}.c")],
            &[],
        );
        let out = run(Command::new("valgrind")
            .args([
                "--error-exitcode=9",
                "--leak-check=full",
                "--errors-for-leak-kinds=definite,indirect",
            ])
            .args(["--show-leak-kinds=definite,indirect"])
            .arg(&exe));
        assert!(
            out.contains("all checks passed") && out.contains("ERROR SUMMARY: 0 errors"),
            "{out}"
        );
    }
}

#[test]
fn threads_pass_under_tsan() {
    if !have("gcc") {
        return;
    }
    let exe = build(
        "tsan",
        "gcc",
        "c99",
        &["tests/c/test_threads.c"],
        &["-fsanitize=thread"],
    );
    let out = run(Command::new(&exe).env("TSAN_OPTIONS", "halt_on_error=1"));
    assert!(
        out.contains("all checks passed") && !out.contains("WARNING: ThreadSanitizer"),
        "{out}"
    );
}

#[test]
fn cpp_wrapper_tests_pass_plainly_and_under_asan() {
    if !have("g++") {
        return;
    }
    let exe = build("cpp", "g++", "c++17", &["tests/cpp/test_wrapper.cpp"], &[]);
    assert!(run(&mut Command::new(&exe)).contains("all checks passed"));
    let flags = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"];
    let exe = build(
        "cpp-asan",
        "g++",
        "c++17",
        &["tests/cpp/test_wrapper.cpp"],
        &flags,
    );
    assert!(run(&mut Command::new(&exe)).contains("all checks passed"));
}

#[test]
fn links_against_the_shared_library_too() {
    if !have("gcc") {
        return;
    }
    let out = std::env::temp_dir().join(format!("loopguard-{}-dynamic", std::process::id()));
    run(Command::new("gcc")
        .args(["-std=c99", "-I"])
        .arg(root().join("include"))
        .arg(root().join("tests/c/test_stream.c"))
        .arg("-L")
        .arg(lib_dir())
        .args(["-lloopguard", "-o"])
        .arg(&out));
    let text = run(Command::new(&out).env("LD_LIBRARY_PATH", lib_dir()));
    assert!(text.contains("all checks passed"));
}

/// The header's version macros match Cargo.toml, and so does the library at run time.
#[test]
fn header_version_matches_cargo_toml() {
    let header = std::fs::read_to_string(root().join("include/loopguard.h")).unwrap();
    let get = |name: &str| -> u32 {
        let line = header
            .lines()
            .find(|l| l.starts_with(&format!("#define {name} ")))
            .unwrap();
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    let want = |v: &str| v.parse::<u32>().unwrap();
    assert_eq!(
        get("LG_VERSION_MAJOR"),
        want(env!("CARGO_PKG_VERSION_MAJOR"))
    );
    assert_eq!(
        get("LG_VERSION_MINOR"),
        want(env!("CARGO_PKG_VERSION_MINOR"))
    );
    assert_eq!(
        get("LG_VERSION_PATCH"),
        want(env!("CARGO_PKG_VERSION_PATCH"))
    );
    let n = loopguard::ffi::lg_version_number();
    assert_eq!(
        n,
        get("LG_VERSION_MAJOR") * 10000 + get("LG_VERSION_MINOR") * 100 + get("LG_VERSION_PATCH")
    );
    let s = unsafe { std::ffi::CStr::from_ptr(loopguard::ffi::lg_version_string()) };
    assert_eq!(s.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
}

/// The checked-in header is what cbindgen generates from `src/ffi/` now.
#[test]
fn the_header_is_up_to_date() {
    if !have("cbindgen") {
        return;
    }
    let out = std::env::temp_dir().join(format!("loopguard-{}.h", std::process::id()));
    run(Command::new("cbindgen")
        .current_dir(root())
        .args([
            "--config",
            "cbindgen.toml",
            "--crate",
            "loopguard",
            "--quiet",
            "--output",
        ])
        .arg(&out));
    let fresh = std::fs::read_to_string(&out).unwrap();
    let checked_in =
        std::fs::read_to_string(Path::new(&root()).join("include/loopguard.h")).unwrap();
    assert!(
        fresh == checked_in,
        "include/loopguard.h is stale: regenerate it with cbindgen (see cbindgen.toml)"
    );
}

/// `scripts/install.sh` installs a usable library: the README's example builds with the
/// pkg-config line, dynamically and statically (the documented static link line).
#[test]
fn install_and_pkg_config_link_lines_work() {
    if !have("gcc") || !have("pkg-config") {
        return;
    }
    let prefix = std::env::temp_dir().join(format!("loopguard-prefix-{}", std::process::id()));
    run(Command::new("bash")
        .arg(root().join("scripts/install.sh"))
        .env("PREFIX", &prefix)
        .env("LOOPGUARD_LIB_DIR", lib_dir()));
    let pc = prefix.join("lib/pkgconfig");
    let flags = |args: &[&str]| -> Vec<String> {
        let out = run(Command::new("pkg-config")
            .env("PKG_CONFIG_PATH", &pc)
            .args(args)
            .arg("loopguard"));
        out.split_whitespace().map(str::to_string).collect()
    };
    let cflags = flags(&["--cflags"]);
    let example = root().join("examples/c/halt.c");
    // Dynamic: -lloopguard finds the .so.
    let dynamic = prefix.join("halt-dynamic");
    run(Command::new("gcc")
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"])
        .args(&cflags)
        .arg(&example)
        .args(flags(&["--libs"]))
        .arg("-o")
        .arg(&dynamic));
    let out = run(Command::new(&dynamic).env("LD_LIBRARY_PATH", prefix.join("lib")));
    assert!(
        out.contains("stopped after") && out.contains("exact loop"),
        "{out}"
    );
    // Static: the archive itself plus the private libraries pkg-config --static lists.
    let mut libs = vec![prefix.join("lib/libloopguard.a").display().to_string()];
    libs.extend(
        flags(&["--static", "--libs"])
            .into_iter()
            .filter(|f| f != "-lloopguard" && !f.starts_with("-L")),
    );
    let fixed = prefix.join("halt-static");
    run(Command::new("gcc")
        .args(["-std=c99"])
        .args(&cflags)
        .arg(&example)
        .args(&libs)
        .arg("-o")
        .arg(&fixed));
    let out = run(&mut Command::new(&fixed));
    assert!(out.contains("stopped after"), "{out}");
}
