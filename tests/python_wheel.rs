//! The Python package as a user installs it: a wheel built with setuptools-rust (which compiles
//! the library into the package), installed into a fresh virtual environment, imported and
//! tested from outside the checkout with no Rust toolchain on the PATH and no `LOOPGUARD_LIB`.
//! The package's own tests run against the installed copy (laid out next to a copy of the
//! header and the test data they read, with no package source beside them).
//!
//! Needs python3 with venv, setuptools-rust, wheel, pytest and numpy; skipped without
//! them unless `LOOPGUARD_REQUIRE_TOOLS=1` (set by `.ci/run`).

use std::path::Path;
use std::process::Command;

mod tools;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        if path.is_dir() {
            if entry.file_name() != "__pycache__" {
                copy_dir(&path, &to.join(entry.file_name()));
            }
        } else {
            std::fs::copy(&path, to.join(entry.file_name())).unwrap();
        }
    }
}

#[test]
fn python_wheel() {
    let probe = Command::new("python3")
        .args(["-c", "import setuptools_rust, wheel, venv, pytest, numpy"])
        .output();
    let why = "python3 with venv, setuptools-rust, wheel, pytest and numpy is not \
               installed: pip install setuptools-rust wheel pytest numpy";
    if !tools::available(probe.is_ok_and(|o| o.status.success()), why) {
        return;
    }
    let root = tools::root();
    let scratch = tools::target_dir().join("python-wheel");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();

    // The wheel, built from the package's pyproject.toml as pip does (without build isolation:
    // the build requirements are installed, and nothing is downloaded). Its own target
    // directory keeps cargo from rebuilding the library the other tests load.
    let dist = scratch.join("dist");
    tools::succeed(
        Command::new("python3")
            .args([
                "-m",
                "pip",
                "wheel",
                "--quiet",
                "--no-build-isolation",
                "--no-deps",
            ])
            .arg("-w")
            .arg(&dist)
            .arg(root.join("bindings/python"))
            .env("CARGO_TARGET_DIR", scratch.join("cargo-target")),
    );
    let wheel = std::fs::read_dir(&dist)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .expect("pip wheel wrote no .whl");
    let size = std::fs::metadata(&wheel).unwrap().len();

    // A fresh environment (pytest, numpy and llama-cpp-python come from the system's
    // site-packages), the wheel installed from the file alone.
    let venv = scratch.join("venv");
    tools::succeed(
        Command::new("python3")
            .args(["-m", "venv", "--system-site-packages"])
            .arg(&venv),
    );
    let python = venv.join("bin/python");
    tools::succeed(
        Command::new(&python)
            .args(["-m", "pip", "install", "--quiet", "--no-deps", "--no-index"])
            .arg(&wheel),
    );

    // The tests, laid out as in the repository but without the package's source, so that
    // `import loopguard` can only find the installed copy.
    let layout = scratch.join("outside");
    copy_dir(
        &root.join("bindings/python/tests"),
        &layout.join("bindings/python/tests"),
    );
    copy_dir(&root.join("tests/data"), &layout.join("tests/data"));
    std::fs::create_dir_all(layout.join("include")).unwrap();
    std::fs::copy(
        root.join("include/loopguard.h"),
        layout.join("include/loopguard.h"),
    )
    .unwrap();
    // No cargo, rustc or checkout on the way: only the environment and the system's tools.
    let path = format!(
        "{}:/usr/local/bin:/usr/bin:/bin",
        venv.join("bin").display()
    );
    let run = |cmd: &mut Command| {
        cmd.current_dir(&layout)
            .env_remove("LOOPGUARD_LIB")
            .env_remove("PYTHONPATH")
            .env("PATH", &path);
        tools::succeed(cmd)
    };
    let out = run(Command::new(&python).args([
        "-c",
        "import shutil, loopguard; print(loopguard.__file__); print(loopguard.lib()._name); \
         print(shutil.which('cargo'))",
    ]));
    let where_ = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines: Vec<&str> = where_.lines().collect();
    assert!(
        lines.len() == 3
            && lines[..2]
                .iter()
                .all(|l| l.starts_with(venv.to_str().unwrap())),
        "the package or its library was not the installed one:\n{where_}"
    );
    assert!(
        lines[1].contains("_libloopguard"),
        "not the bundled library: {}",
        lines[1]
    );
    assert_eq!(lines[2], "None", "cargo is reachable: {}", lines[2]);
    let out = run(Command::new(&python).args([
        "-m",
        "pytest",
        "-q",
        "-rs",
        "-p",
        "no:cacheprovider",
        "bindings/python/tests",
    ]));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    tools::note(&format!(
        "wheel {} ({} KiB): {}",
        wheel.file_name().unwrap().to_string_lossy(),
        size / 1024,
        text.lines().last().unwrap_or("")
    ));
}
