//! Which programs check the project: build it, type-check it, lint it or run its tests. Their
//! answer depends on the files, and once the files are right it is the same after every edit
//! (`Finished`, `41 passed`): run again after an edit and answered alike, such a command
//! confirms the edit. A script the agent wrote itself is no check: the values it prints are
//! what a fix should change.

/// Program `name` (a file name) with arguments `args` checks the project.
pub(super) fn is_check(name: &str, args: &[String]) -> bool {
    let sub = super::subcommand(args);
    match name {
        "cargo" => matches!(
            sub,
            "check" | "c" | "build" | "b" | "test" | "t" | "clippy" | "nextest" | "fmt" | "doc"
        ),
        "go" => matches!(sub, "build" | "test" | "vet"),
        "npm" | "yarn" | "pnpm" | "bun" => match sub {
            "test" | "t" => true,
            "run" | "run-script" => args
                .iter()
                .filter(|a| !a.starts_with('-'))
                .nth(1)
                .is_some_and(|script| names_a_check(script)),
            "exec" | "x" | "dlx" => tool_after(args, 1),
            // `yarn build`, `pnpm lint`: a script run by its name.
            script => name != "npm" && names_a_check(script),
        },
        "npx" | "bunx" => tool_after(args, 0),
        "dotnet" | "swift" => matches!(sub, "build" | "test"),
        "cmake" => args.iter().any(|a| a == "--build"),
        // A request for a service's status alone (`curl -sI URL`, `curl -o /dev/null -w
        // '%{http_code}'`, `wget --spider`) checks the running project: every healthy page
        // answers it alike (`HTTP/2 200`).
        "curl" => args.iter().any(|a| {
            a == "--head"
                || a == "--write-out"
                // Short options, bundled or not (`-sI`, `-fsSw`).
                || (a.starts_with('-') && !a.starts_with("--") && a[1..].contains(['I', 'w']))
        }),
        "wget" => args.iter().any(|a| a == "--spider"),
        _ if super::is_interpreter(name) => {
            matches!(args, [m, module, ..] if m == "-m" && is_check_tool(module))
        }
        _ => is_check_tool(name),
    }
}

/// The tool `npx` or `npm exec` runs (the first word after `skip` others that is not an
/// option) checks the project.
fn tool_after(args: &[String], skip: usize) -> bool {
    (args.iter().filter(|a| !a.starts_with('-')))
        .nth(skip)
        .is_some_and(|t| is_check_tool(t))
}

/// A script named for what checks do (`build`, `test:unit`, `lint`, `typecheck`).
fn names_a_check(script: &str) -> bool {
    ["build", "test", "lint", "check", "type"]
        .iter()
        .any(|k| script.contains(k))
}

/// A program that does nothing but check: a compiler, a type checker, a linter, a test runner,
/// a build tool.
fn is_check_tool(name: &str) -> bool {
    matches!(
        name,
        "tsc"
            | "vue-tsc"
            | "eslint"
            | "prettier"
            | "jest"
            | "vitest"
            | "mocha"
            | "ava"
            | "playwright"
            | "pytest"
            | "py.test"
            | "unittest"
            | "tox"
            | "nox"
            | "mypy"
            | "pyright"
            | "ruff"
            | "flake8"
            | "pylint"
            | "black"
            | "isort"
            | "compileall"
            | "py_compile"
            | "rspec"
            | "rubocop"
            | "phpunit"
            | "phpstan"
            | "make"
            | "ninja"
            | "ctest"
            | "mvn"
            | "mvnw"
            | "gradle"
            | "gradlew"
            | "sbt"
            | "ant"
            | "bazel"
            | "javac"
            | "kotlinc"
            | "gcc"
            | "g++"
            | "cc"
            | "clang"
            | "clang++"
            | "rustc"
            | "golangci-lint"
            | "shellcheck"
            | "hadolint"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(cmd: &str) -> bool {
        let words: Vec<String> = cmd.split_whitespace().map(String::from).collect();
        is_check(&words[0], &words[1..])
    }

    #[test]
    fn builds_type_checks_lints_and_tests_check() {
        for cmd in [
            "cargo check",
            "cargo test -q",
            "cargo clippy --all-targets",
            "go test ./...",
            "go vet ./...",
            "npm test",
            "npm run build",
            "npm run test:unit -- --watch=false",
            "yarn lint",
            "pnpm typecheck",
            "npx tsc --noEmit",
            "npx eslint src",
            "npm exec vitest run",
            "pytest -q tests/test_a.py",
            "python -m pytest -x",
            "python3 -m unittest discover",
            "mypy src",
            "ruff check .",
            "tsc -p tsconfig.build.json",
            "make",
            "make test",
            "mvn -q test",
            "gradlew build",
            "dotnet test",
            "cmake --build build",
            "javac A.java",
            "gcc -c a.c",
            "curl -sI https://staging.example.com/pricing",
            "curl --head http://localhost:3000/",
            "curl -s -o /dev/null -w %{http_code} http://localhost:8000/health",
            "wget --spider -q http://localhost:8080/",
        ] {
            assert!(check(cmd), "{cmd}");
        }
    }

    #[test]
    fn scripts_servers_and_reads_do_not_check() {
        for cmd in [
            "python reproduce.py",
            "python3 -c print(1)",
            "node script.js",
            "cargo run -- --port 8080",
            "go run main.go",
            "npm start",
            "npm run dev",
            "npm install",
            "yarn add react",
            "npx create-react-app x",
            "git status",
            "cat Makefile",
            "ls",
            "python -m http.server",
            "pip install -e .",
            "curl -s https://api.github.com/repos/a/b/issues",
            "curl -fsSL https://sh.rustup.rs -o rustup.sh",
            "wget https://example.com/data.csv",
        ] {
            assert!(!check(cmd), "{cmd}");
        }
    }
}
