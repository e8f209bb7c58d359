//! What a shell command does, read from its text without running anything.
//!
//! Coding agents often have one tool, a shell. To tell progress from a loop the guard needs
//! to know which commands change the files the agent works on (an edit through a heredoc,
//! `sed -i`, `git apply`, a package install) and which only read or run (`cat`, `grep`, a
//! test runner). This module cuts a command line into simple commands the way a POSIX shell
//! does — quotes, escapes, comments, `;` `&&` `||` `|` `&`, redirections and here-documents,
//! `$(…)` and backquotes kept inside their word — and classifies each one by its program
//! and arguments.
//!
//! It is a reader, not a shell: no expansion, no aliases, no functions. A construct it does
//! not understand makes a command count as "runs something", never as a write, so a misread
//! command can only miss progress, not invent it. The lexer is written here rather than taken
//! from a crate: the small, well-kept ones (`shlex`, `shell-words`) split words but know
//! nothing of operators, redirections or here-documents, which are what tell a write from a
//! read; the full shell parsers are far larger than this need.

mod checks;
mod lexer;

use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed};

use self::lexer::split;
use super::edits::{path_hash, whole, TreeOp, TreeOps};

/// What a command line does: the program that does its work, whether it writes files, and
/// whether it searches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ShellEffect {
    /// The command changes files or the environment: a redirection into a file, an editor
    /// command, a file operation, a patch, a package install, a script that writes files.
    pub writes: bool,
    /// A hash of the program that does the command's work (the first simple command that is
    /// not plumbing such as `cd` or `echo`: `cd src && mvn test | tail` is `mvn`), so that a
    /// failing `javac` and a failing `grep` are different tools to the per-tool rules. 0 when
    /// the line has no command.
    pub program: u64,
    /// That program searches (`find`, `grep`, `which`…): its empty output is an answer,
    /// "nothing found", not silence.
    pub searches: bool,
    /// That program installs packages (`apt-get install`, `pip install`, `npm i`, `python -m
    /// pip install`): when it fails, the environment is what stands in the way.
    pub installs: bool,
    /// That program checks the project (`cargo check`, `npm test`, `pytest`, `tsc`, `make`):
    /// answered alike after an edit, it confirms the edit (see `checks`).
    pub checks: bool,
    /// The line only waits (`sleep 30`, `sleep 30 && echo done`, `wait`): it does no work of
    /// its own.
    pub waits: bool,
    /// The line is empty: it sends nothing (OpenHands waits for more output of a command
    /// still running this way).
    pub empty: bool,
    /// What the line does to the working tree, when every write of it is one the guard
    /// follows: a file written whole from a here-document, a file deleted, version control's
    /// stashes and restores (see `edits::TreeOp`).
    pub tree: Option<TreeOps>,
}

/// A shell tool's call: the command line it runs and where.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ShellCall {
    pub line: String,
    /// The working directory member (`workdir`, `cwd`, `directory`, `working_directory`).
    pub dir: Option<String>,
    /// The arguments are the command line and nothing else: a string, or an object with only
    /// a string `command` (or `cmd`). Otherwise (an argv, a working directory, a description,
    /// a timeout beside it) the call is known by its line and directory.
    pub plain: bool,
}

/// A command line as a tool sends it: a string, or a list of words (an argv) or of lines.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Line {
    One(String),
    Many(Vec<String>),
}

/// Reads a shell tool's arguments: the `command` (or `cmd`, Windsurf's `CommandLine`, `script`,
/// `commands`) member of a JSON object, a JSON string, or the arguments themselves when they
/// are not JSON. An array under `command` or `cmd` is an argv, as Codex sends it (`["bash",
/// "-lc", "pytest -q"]` runs the script, `["ls", "-la"]` one program); under `script` or
/// `commands` it is a list of command lines.
pub(crate) fn call_of(args: &[u8]) -> ShellCall {
    #[derive(serde::Deserialize)]
    struct Args {
        // Windsurf's `run_command` sends `CommandLine` and `Cwd`.
        #[serde(alias = "CommandLine", alias = "command_line", alias = "commandLine")]
        command: Option<Line>,
        cmd: Option<Line>,
        script: Option<Line>,
        commands: Option<Line>,
        #[serde(
            alias = "cwd",
            alias = "Cwd",
            alias = "directory",
            alias = "working_directory"
        )]
        workdir: Option<String>,
        #[serde(flatten)]
        rest: std::collections::HashMap<String, serde::de::IgnoredAny>,
    }
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Shape {
        Text(String),
        Object(Args),
    }
    let a = match serde_json::from_slice::<Shape>(args) {
        Ok(Shape::Text(line)) => {
            return ShellCall {
                line,
                dir: None,
                plain: true,
            }
        }
        Ok(Shape::Object(a)) => a,
        Err(_) => {
            return ShellCall {
                line: String::from_utf8_lossy(args).into_owned(),
                dir: None,
                plain: true,
            }
        }
    };
    let mut plain = a.rest.is_empty() && a.workdir.is_none();
    let line = match a.command.or(a.cmd) {
        Some(Line::One(t)) => t,
        Some(Line::Many(argv)) => {
            plain = false;
            command_line(argv)
        }
        None => {
            plain = false;
            match a.script.or(a.commands) {
                Some(Line::One(t)) => t,
                Some(Line::Many(lines)) => lines.join("\n"),
                None => String::new(),
            }
        }
    };
    ShellCall {
        line,
        dir: a.workdir,
        plain,
    }
}

/// Arguments that send a command line to run, whatever the tool is called: a JSON object with
/// a `command` or `cmd` member (a string with a word in it, or an argv) and no member naming a
/// file, which an editor's `command` (`view`, `str_replace`) comes with. Agents name their
/// shells as they like (`run_in_terminal`, `launch-process`, `builtin_run_terminal_command`,
/// `developer__shell`): the arguments say what the tool does.
pub(crate) fn sends_command_line(args: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Args {
        #[serde(
            alias = "cmd",
            alias = "CommandLine",
            alias = "command_line",
            alias = "commandLine"
        )]
        command: Option<Line>,
        #[serde(
            alias = "file_path",
            alias = "filePath",
            alias = "filepath",
            alias = "target_file",
            alias = "file",
            alias = "files"
        )]
        path: Option<serde::de::IgnoredAny>,
    }
    let finder = |key: &[u8]| memchr::memmem::find(args, key).is_some();
    let keys: [&[u8]; 4] = [
        b"\"command\"",
        b"\"cmd\"",
        b"ommandLine\"",
        b"\"command_line\"",
    ];
    if !keys.iter().any(|k| finder(k)) {
        return false;
    }
    match serde_json::from_slice::<Args>(args) {
        Ok(Args {
            command: Some(line),
            path: None,
        }) => match line {
            Line::One(t) => t.trim().chars().any(char::is_alphanumeric),
            Line::Many(argv) => !argv.is_empty(),
        },
        _ => false,
    }
}

/// The command line an argv runs: the script of a shell started with `-c` (`bash -lc
/// SCRIPT`), or else the words quoted so that the reader sees each as one word.
fn command_line(mut argv: Vec<String>) -> String {
    let shell = argv
        .first()
        .is_some_and(|p| matches!(basename(p), "bash" | "sh" | "zsh" | "dash" | "ksh"));
    if shell {
        // The script follows the first option cluster that holds `c` (`-c`, `-lc`, `-euc`).
        let flag = argv.iter().skip(1).position(|a| {
            a.len() > 1 && a.starts_with('-') && !a.starts_with("--") && a[1..].contains('c')
        });
        if let Some(script) = flag.map(|k| k + 2).filter(|&k| k < argv.len()) {
            return argv.swap_remove(script);
        }
    }
    let mut line = String::new();
    for (i, word) in argv.iter().enumerate() {
        if i > 0 {
            line.push(' ');
        }
        let plain = !word.is_empty()
            && word
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
        if plain {
            line.push_str(word);
        } else {
            line.push('\'');
            line.push_str(&word.replace('\'', "'\\''"));
            line.push('\'');
        }
    }
    line
}

/// Reads `command` and says what it does.
pub(crate) fn effect(command: &str) -> ShellEffect {
    let mut out = ShellEffect::default();
    let mut program_set = false;
    let (mut sleeps, mut works) = (false, false);
    // Whether every command that does work is a package manager's, and one installs.
    let (mut managers, mut installs) = (true, false);
    // What the writes do to the tree, and whether one does something not followed.
    let (mut tree, mut other_writes) = (TreeOps::default(), false);
    for simple in split(command) {
        let words = program_words(&simple.words);
        let Some(program) = words.first() else {
            out.writes |= simple.writes_file;
            other_writes |= simple.writes_file;
            continue;
        };
        let name = basename(program);
        let writes = simple.writes_file || writes(name, &words[1..], &simple.stdin);
        out.writes |= writes;
        if writes {
            let ops = match name {
                "git" if !simple.writes_file => git_ops(&words[1..]),
                _ => file_ops(name, &words[1..], &simple),
            };
            other_writes |= !ops.is_some_and(|ops| ops.iter().all(|&op| tree.push(op)));
        }
        // `cat <<EOF > f.py && python f.py`: the file is written by plumbing, the work is
        // done by what runs it.
        let plumbing = is_plumbing(name) || (simple.writes_file && matches!(name, "cat" | "tee"));
        sleeps |= matches!(name, "sleep" | "wait");
        works |= !plumbing || simple.writes_file;
        if out.program == 0 || (!program_set && !plumbing) {
            out.program = program_hash(name, &words[1..]);
            out.searches = is_search(name, &words[1..]);
            out.checks = checks::is_check(name, &words[1..]);
            program_set = !plumbing;
        }
        if !plumbing {
            managers &= is_package_manager(name, &words[1..]);
            installs |= is_install(name, &words[1..]);
        }
    }
    // `apt-get update && apt-get install x` is an install; `pip install -e . && pytest` fails
    // as the tests do, not as an install.
    out.installs = managers && installs;
    out.waits = sleeps && !works;
    out.empty = command.trim().is_empty();
    out.tree = (!tree.is_empty() && !other_writes).then_some(tree);
    out
}

/// What a command that writes files does to them, when the guard follows it: `cat` writing
/// its here-document whole into one file (`cat > F <<'EOF'`), `rm` of files (not of
/// directories, not of a glob).
fn file_ops(name: &str, args: &[String], simple: &lexer::Simple) -> Option<Vec<TreeOp>> {
    match name {
        "cat"
            if args.iter().all(|a| a == "-")
                && !simple.stdin.is_empty()
                && !simple.other_outputs =>
        {
            match simple.outputs.as_slice() {
                [(path, false)] => Some(vec![whole(path.trim_start_matches("./"), &simple.stdin)]),
                _ => None,
            }
        }
        "rm" if !simple.writes_file => {
            let recursive = args.iter().any(|a| {
                a == "--recursive"
                    || (a.starts_with('-') && !a.starts_with("--") && a.contains(['r', 'R']))
            });
            let paths: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
            if recursive || paths.is_empty() || paths.iter().any(|p| p.contains(['*', '?', '['])) {
                return None;
            }
            Some(
                paths
                    .iter()
                    .map(|p| TreeOp::Delete(path_hash(p.trim_start_matches("./"))))
                    .collect(),
            )
        }
        _ => None,
    }
}

/// What a `git` command that writes does to the working tree, when the guard follows it:
/// stashes, restores of files or of the whole tree, commits. `None` for the rest (a branch
/// switched, a partial stash, a restore from another commit): their effect is unknown.
fn git_ops(args: &[String]) -> Option<Vec<TreeOp>> {
    let (sub, rest) = git_subcommand(args);
    let words: Vec<&str> = rest
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let has = |flag: &str| rest.iter().any(|a| a == flag);
    // The paths after `--` (all of them must be), or every word when there is no `--`.
    let restore = |paths: &[String]| -> Option<Vec<TreeOp>> {
        if paths.is_empty() || paths.iter().any(|p| p.starts_with('-') || p.contains('*')) {
            return None;
        }
        if paths.iter().any(|p| p == "." || p == "./" || p == ":/") {
            return Some(vec![TreeOp::RestoreAll]);
        }
        let path = |p: &String| path_hash(p.trim_start_matches("./"));
        Some(paths.iter().map(|p| TreeOp::Restore(path(p))).collect())
    };
    match sub {
        "stash" => match words.first().copied() {
            None | Some("push" | "save")
                if !has("--") && !has("-p") && !has("--patch") && !has("--staged") =>
            {
                Some(vec![TreeOp::Stash])
            }
            Some("pop") => Some(vec![TreeOp::Unstash { drop: true }]),
            Some("apply") => Some(vec![TreeOp::Unstash { drop: false }]),
            Some("drop") => Some(vec![TreeOp::Drop]),
            _ => None,
        },
        "checkout" => {
            let dash = rest.iter().position(|a| a == "--")?;
            // `git checkout -- F` or `git checkout HEAD -- F`: from the commit.
            let before: Vec<&String> = rest[..dash]
                .iter()
                .filter(|a| !a.starts_with('-'))
                .collect();
            match before.as_slice() {
                [] => restore(&rest[dash + 1..]),
                [r] if r.as_str() == "HEAD" => restore(&rest[dash + 1..]),
                _ => None,
            }
        }
        "restore"
            if !has("--staged")
                && !has("-S")
                && !rest.iter().any(|a| a.starts_with("--source") || a == "-s") =>
        {
            let paths: Vec<String> = rest
                .iter()
                .filter(|a| *a != "--" && *a != "--worktree" && *a != "-W")
                .cloned()
                .collect();
            restore(&paths)
        }
        "reset" if has("--hard") && words.iter().all(|w| *w == "HEAD") => {
            Some(vec![TreeOp::RestoreAll])
        }
        "commit" => Some(vec![TreeOp::Commit]),
        _ => None,
    }
}

/// The name of the program that does `command`'s work (as [`effect`] picks it: `cd src &&
/// sudo apt-get install x` is `apt-get`), for descriptions that name it; `None` when the line
/// has no command or its name is not a plain file name (a preview cut inside JSON).
pub(crate) fn program_name(command: &str) -> Option<String> {
    let mut chosen: Option<String> = None;
    for simple in split(command) {
        let words = program_words(&simple.words);
        let Some(program) = words.first() else {
            continue;
        };
        let name = basename(program);
        let plumbing = is_plumbing(name) || (simple.writes_file && matches!(name, "cat" | "tee"));
        if chosen.is_none() || !plumbing {
            chosen = Some(name.to_string());
        }
        if !plumbing {
            break;
        }
    }
    chosen.filter(|n| {
        !n.is_empty()
            && n.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'+'))
    })
}

/// The words that name the program and its arguments, past variable assignments and the
/// wrappers that run another command (`sudo`, `env`, `timeout 10`, `nohup`, `time`).
fn program_words(words: &[String]) -> &[String] {
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        let assignment = w
            .split_once('=')
            .is_some_and(|(name, _)| !name.is_empty() && name.bytes().all(is_name_byte));
        if assignment {
            i += 1;
            continue;
        }
        match basename(w) {
            "sudo" | "env" | "nohup" | "time" | "command" | "exec" | "nice" | "stdbuf" => {
                i += 1;
                // Their own options (`sudo -u x`, `env -i`, `nice -n 5`), with the values of
                // those that take one.
                while i < words.len() && words[i].starts_with('-') {
                    let takes_value = matches!(words[i].as_str(), "-u" | "-g" | "-C" | "-D" | "-n");
                    i += 1 + takes_value as usize;
                }
            }
            "timeout" => {
                i += 1;
                while i < words.len() && words[i].starts_with('-') {
                    i += 1;
                }
                i += 1; // the duration
            }
            _ => break,
        }
    }
    &words[i.min(words.len())..]
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Program `name` with arguments `args` installs packages through a package manager: its
/// subcommand, the first argument that is not an option, is `install`, `add` or `i`
/// (`apt-get -y install x`, `npm i x`, `python -m pip install x`; not `cargo test add`).
fn is_install(name: &str, args: &[String]) -> bool {
    // `python -m pip install`: the subcommand comes after `-m pip`.
    let rest = if is_interpreter(name) {
        args.get(2..).unwrap_or_default()
    } else {
        args
    };
    is_package_manager(name, args)
        && (rest.iter().find(|a| !a.starts_with('-')))
            .is_some_and(|a| matches!(a.as_str(), "install" | "add" | "i"))
}

/// Program `name` with arguments `args` is a package manager (`apt-get`, `pip`, `npm`, …, or
/// `python -m pip`).
fn is_package_manager(name: &str, args: &[String]) -> bool {
    match name {
        "pip" | "pip3" | "uv" | "poetry" | "conda" | "mamba" | "gem" | "npm" | "yarn" | "pnpm"
        | "apt" | "apt-get" | "aptitude" | "yum" | "dnf" | "zypper" | "apk" | "brew" | "cargo" => {
            true
        }
        _ if is_interpreter(name) => {
            matches!(args, [m, pip, ..] if m == "-m" && matches!(pip.as_str(), "pip" | "pip3"))
        }
        _ => false,
    }
}

/// The command searches: what it prints is what it found, so printing nothing says "nothing
/// found". Not when it is told to print nothing (`grep -q`) or to act on what it finds
/// (`find -delete`, `-exec`).
fn is_search(name: &str, args: &[String]) -> bool {
    let quiet = matches!(name, "grep" | "egrep" | "fgrep" | "rg" | "fd" | "fdfind")
        && args.iter().any(|a| {
            a == "--quiet"
                || a == "--silent"
                || (a.starts_with('-') && !a.starts_with("--") && a.contains('q'))
        });
    let acts = name == "find"
        && args.iter().any(|a| {
            matches!(
                a.as_str(),
                "-delete" | "-exec" | "-execdir" | "-ok" | "-okdir" | "-fprint" | "-fls"
            )
        });
    !quiet && !acts && is_search_program(name)
}

fn is_search_program(name: &str) -> bool {
    matches!(
        name,
        "find"
            | "fd"
            | "fdfind"
            | "grep"
            | "egrep"
            | "fgrep"
            | "rg"
            | "ag"
            | "ack"
            | "locate"
            | "which"
            | "whereis"
            // SWE-agent's commands.
            | "search_dir"
            | "search_file"
            | "find_file"
    )
}

/// The directory a command line moves a long-lived shell to, when the line is one `cd` (or
/// `pushd`) and nothing else: `cd src/` gives `src/`, a bare `cd` gives `~`. A `cd` joined to
/// other commands (`cd /repo && make`) is left alone: a harness that starts a shell for each
/// command forgets it, and the line names its directory itself.
pub(crate) fn cd_target(line: &str) -> Option<String> {
    let t = line.trim_start();
    if !(t.starts_with("cd") || t.starts_with("pushd")) {
        return None;
    }
    let commands = split(line);
    let [simple] = &commands[..] else {
        return None;
    };
    match &simple.words[..] {
        [cd] if cd == "cd" || cd == "pushd" => Some("~".into()),
        [cd, dir] if (cd == "cd" || cd == "pushd") && dir != "-" => Some(dir.clone()),
        _ => None,
    }
}

/// Bytes of a working directory kept: a deeper one keeps its last bytes.
const CWD_MAX: usize = 512;

/// Where `cd target` from `cwd` leads, `.` and `..` resolved. A directory is absolute (`/…`),
/// under the home directory (`~…`) or relative to wherever the shell started (`""` is that
/// place, known to nobody, so `..` from it stays `..`).
pub(crate) fn moved(cwd: &str, target: &str) -> String {
    let joined;
    let path = if target.starts_with('/') || target.starts_with('~') || cwd.is_empty() {
        target
    } else {
        joined = format!("{cwd}/{target}");
        &joined
    };
    let (prefix, rest) = match path.as_bytes().first() {
        Some(b'/') => ("/", &path[1..]),
        Some(b'~') => ("~", &path[1..]),
        _ => ("", path),
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in rest.split('/').filter(|p| !p.is_empty() && *p != ".") {
        match (part, parts.last()) {
            ("..", Some(&last)) if last != ".." => {
                parts.pop();
            }
            ("..", _) if prefix == "/" => {}
            _ => parts.push(part),
        }
    }
    let mut out = match prefix {
        "/" => format!("/{}", parts.join("/")),
        "~" if parts.is_empty() => "~".to_owned(),
        "~" => format!("~/{}", parts.join("/")),
        _ => parts.join("/"),
    };
    if out.len() > CWD_MAX {
        let mut cut = out.len() - CWD_MAX;
        while !out.is_char_boundary(cut) {
            cut += 1;
        }
        out.drain(..cut);
    }
    out
}

/// Commands that move around or print rather than do the work: a line's program is the first
/// command that is not one of these (`cd src && cargo test`: `cargo`).
fn is_plumbing(name: &str) -> bool {
    matches!(
        name,
        "cd" | "pushd"
            | "popd"
            | "echo"
            | "printf"
            | "true"
            | "false"
            | ":"
            | "export"
            | "set"
            | "source"
            | "."
            | "sleep"
            | "clear"
            | "wait"
    )
}

/// Whether program `name` with arguments `args` (and `stdin` from here-documents) changes
/// files or the environment.
fn writes(name: &str, args: &[String], stdin: &str) -> bool {
    let arg = |k: usize| args.get(k).map(String::as_str).unwrap_or("");
    let has = |flag: &str| args.iter().any(|a| a == flag);
    match name {
        // File operations.
        "mv" | "cp" | "rm" | "rmdir" | "mkdir" | "touch" | "ln" | "chmod" | "chown" | "install"
        | "truncate" | "rsync" | "unzip" | "patch" | "dd" => true,
        "tee" => args.iter().any(|a| !a.starts_with('-')),
        // `find … -delete` removes what it finds.
        "find" => has("-delete"),
        "tar" => args
            .first()
            .is_some_and(|a| a.trim_start_matches('-').contains(['x', 'c'])),
        // In-place editors.
        "sed" | "perl" | "ruby" => args.iter().any(|a| {
            a == "--in-place"
                || a.starts_with("--in-place=")
                || (a.starts_with('-') && !a.starts_with("--") && a[1..].contains('i'))
        }),
        // Version control that changes the working tree or the history.
        "git" => match git_subcommand(args) {
            // `git stash list` and `show` read.
            ("stash", rest) => !matches!(subcommand(rest), "list" | "show"),
            // A bisect's `start`, `good`, `bad`, `skip` and `reset` check out another commit;
            // `log`, `view` and `terms` read.
            ("bisect", rest) => !matches!(
                subcommand(rest),
                "log" | "view" | "visualize" | "terms" | "help"
            ),
            (sub, _) => matches!(
                sub,
                "apply"
                    | "checkout"
                    | "restore"
                    | "reset"
                    | "stash"
                    | "commit"
                    | "am"
                    | "cherry-pick"
                    | "revert"
                    | "merge"
                    | "rebase"
                    | "rm"
                    | "mv"
                    | "switch"
                    | "clean"
                    | "add"
                    | "pull"
                    | "clone"
                    | "init"
            ),
        },
        // Package managers (and `go get`).
        _ if name == "go" || is_package_manager(name, args) => args.iter().any(|a| {
            matches!(
                a.as_str(),
                "install" | "add" | "i" | "uninstall" | "remove" | "get" | "update" | "upgrade"
            )
        }),
        // Editor commands of agent harnesses (SWE-agent's ACI, Anthropic's and OpenHands'
        // `str_replace_editor`, Codex's `apply_patch`).
        "edit" | "create" | "insert" | "append" | "apply_patch" | "applypatch" => true,
        "str_replace_editor" | "str_replace_based_edit_tool" | "file_editor" => {
            matches!(arg(0), "create" | "str_replace" | "insert" | "undo_edit")
        }
        // Interpreters: a script given inline or on stdin that writes files; `-m pip install`.
        _ if is_interpreter(name) => {
            if arg(0) == "-m" && matches!(arg(1), "pip" | "pip3") {
                return writes("pip", &args[2..], stdin);
            }
            let inline = args
                .iter()
                .position(|a| a == "-c" || a == "-e")
                .and_then(|k| args.get(k + 1));
            inline.is_some_and(|code| script_writes(code))
                || (args.iter().all(|a| a == "-" || a.starts_with('-')) && script_writes(stdin))
                || has("-i") && name == "perl"
        }
        _ => false,
    }
}

fn is_interpreter(name: &str) -> bool {
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    matches!(
        stem,
        "python" | "node" | "perl" | "ruby" | "php" | "bash" | "sh"
    )
}

/// The first argument that is not an option: a program's subcommand ("" for none).
fn subcommand(args: &[String]) -> &str {
    args.iter()
        .find(|a| !a.starts_with('-'))
        .map_or("", String::as_str)
}

/// The program an interpreter runs: its script (`reproduce.py`, by its name), the module after
/// `-m` (`pytest`), or `-c` / `-e` for code given inline; empty for none (a shell reading
/// its input).
fn script(args: &[String]) -> &str {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        match a {
            "-c" | "-e" | "--eval" => return if i + 1 < args.len() { a } else { "" },
            "-" => return a,
            "-m" => return args.get(i + 1).map_or("", String::as_str),
            // Options that take a value (`python -W ignore`, `node -r ts-node/register`).
            "-W" | "-X" | "-r" | "--require" | "-I" => i += 2,
            _ if a.starts_with('-') => i += 1,
            _ => return basename(a),
        }
    }
    ""
}

/// The tool a program is: its name, and for a program whose first word says what it does
/// (`git push`, `docker build`, `kubectl get`, `npm test`) that word too: `git fetch`
/// working says nothing of `git push`. An interpreter is the script it runs: `python -c …`
/// printing a signature says nothing of `python reproduce.py`.
fn program_hash(name: &str, args: &[String]) -> u64 {
    let sub = match name {
        "git" => git_subcommand(args).0,
        "docker" | "podman" | "kubectl" | "helm" | "gh" | "npm" | "pnpm" | "yarn" | "cargo"
        | "go" | "dotnet" | "terraform" | "systemctl" | "poetry" | "uv" | "conda" | "brew" => {
            subcommand(args)
        }
        _ if is_interpreter(name) => script(args),
        _ => "",
    };
    let program = xxh3_64(name.as_bytes());
    if sub.is_empty() {
        program
    } else {
        xxh3_64_with_seed(sub.as_bytes(), program)
    }
}

/// The first word of `git`'s arguments that is not an option (or an option's value), and the
/// arguments after it.
fn git_subcommand(args: &[String]) -> (&str, &[String]) {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if matches!(a, "-C" | "-c" | "--git-dir" | "--work-tree") {
            i += 2;
        } else if a.starts_with('-') {
            i += 1;
        } else {
            return (a, &args[i + 1..]);
        }
    }
    ("", &[])
}

/// A script (Python, JavaScript, shell) that writes files, by the calls that do it.
fn script_writes(code: &str) -> bool {
    const WRITERS: &[&str] = &[
        ".write(",
        ".write_text(",
        ".write_bytes(",
        "writeFile",
        "writeFileSync",
        "shutil.",
        "os.remove(",
        "os.unlink(",
        "os.rename(",
        "os.replace(",
        "os.makedirs(",
        "os.mkdir(",
        ".unlink(",
        ".mkdir(",
        ".rename(",
        "fs.rm",
        "fs.mkdir",
        "subprocess.",
    ];
    if WRITERS.iter().any(|w| code.contains(w)) {
        return true;
    }
    // open(path, "w") and friends: a mode argument with w, a or x.
    code.match_indices("open(").any(|(at, _)| {
        let call = &code[at..code.len().min(at + 240)];
        let call = call.split(')').next().unwrap_or(call);
        call.split(',').skip(1).any(|arg| {
            let arg = arg.trim().trim_start_matches("mode=").trim();
            let quoted = arg
                .strip_prefix(['"', '\''])
                .and_then(|a| a.split(['"', '\'']).next());
            quoted.is_some_and(|m| m.len() <= 3 && m.contains(['w', 'a', 'x']))
        })
    }) || (code.contains('>') && split(code).iter().any(|s| s.writes_file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_cd_moves_the_shell() {
        assert_eq!(cd_target("cd src/").as_deref(), Some("src/"));
        assert_eq!(cd_target("  cd \"my dir\" ").as_deref(), Some("my dir"));
        assert_eq!(cd_target("cd").as_deref(), Some("~"));
        assert_eq!(cd_target("cd src && ls"), None);
        assert_eq!(cd_target("cd -"), None);
        assert_eq!(cd_target("ls"), None);
        assert_eq!(moved("", "src/"), "src");
        assert_eq!(moved("src", "main/java"), "src/main/java");
        assert_eq!(moved("src/main", ".."), "src");
        assert_eq!(moved("src", "../.."), "..");
        assert_eq!(moved("src", "./main/./java/"), "src/main/java");
        assert_eq!(moved("src", "/repo/x"), "/repo/x");
        assert_eq!(moved("/repo/x", "../../../y"), "/y");
        assert_eq!(moved("/repo", "~"), "~");
        assert_eq!(moved("~", "proj/.."), "~");
        assert_eq!(moved("~/a", "b"), "~/a/b");
        let deep = moved("", &"abcdefgh/".repeat(200));
        assert!(
            deep.len() <= CWD_MAX && deep.ends_with("abcdefgh"),
            "{deep}"
        );
        let wide = moved("", &"é".repeat(400));
        assert!(wide.len() <= CWD_MAX, "{}", wide.len());
    }

    fn writes(cmd: &str) -> bool {
        effect(cmd).writes
    }

    fn program(cmd: &str) -> u64 {
        effect(cmd).program
    }

    #[test]
    fn writes_are_told_from_reads() {
        for w in [
            "cat <<'EOF' > src/app.py\nimport os\nprint(1 > 0)\nEOF",
            "cat > notes.txt <<EOF\nhello\nEOF\n",
            "echo 'x = 1' >> config.py",
            "sed -i 's/foo/bar/g' src/lib.rs",
            "sed -i.bak -e 's/a/b/' f",
            "perl -pi -e 's/a/b/' f",
            "git apply fix.patch",
            "git checkout -- src/main.rs",
            "git -C repo stash",
            "patch -p1 < fix.diff",
            "mv a.py b.py",
            "cp -r src dst && ls dst",
            "rm -f build/out.o",
            "mkdir -p tests/data",
            "touch __init__.py",
            "ls | tee listing.txt",
            "pip install -e .",
            "python -m pip install requests",
            "cd /repo && npm install lodash",
            "sudo apt-get install -y openjdk-17-jdk",
            "python - <<'PY'\nfrom pathlib import Path\nPath('a.py').write_text('x')\nPY",
            "python3 -c \"open('out.txt', 'w').write('hi')\"",
            "python3 - <<EOF\nwith open(\"f.py\", mode=\"a\") as f:\n    f.write(\"x\")\nEOF",
            "bash -c 'echo hi > f'",
            "edit 12:14\n    return a > b;\nend_of_edit",
            "create Reproduce.java",
            "str_replace_editor str_replace /repo/a.py --old_str x --new_str y",
            "timeout 60 env A=1 sed -i 's/x/y/' f",
            "> empty.txt",
            "git bisect good",
            "git bisect start && git bisect bad HEAD && git bisect good v1.4.0",
        ] {
            assert!(writes(w), "{w:?}");
        }
        for r in [
            "cat src/app.py",
            "grep -rn 'fn main' src/ | head -20",
            "ls -la && pwd",
            "find . -name '*.py' -newer setup.py",
            "git diff HEAD~1 -- src/",
            "git log --oneline | head",
            "python -m pytest tests/test_app.py -x -q 2>&1 | tail -20",
            "python reproduce.py 2>/dev/null",
            "cargo test --release > /dev/null 2>&1",
            "npm test",
            "sed -n '1,40p' src/lib.rs",
            "echo 'a > b' | grep '>'",
            "python3 - <<'PY'\nimport json\nprint(json.dumps({'a': 1}))\nPY",
            "open src/Main.java 120",
            "search_dir \"getValue(\" src",
            "javac -cp gson.jar Repro.java && java -cp .:gson.jar Repro",
            "cat <<EOF\nnot a file > x\nEOF",
            "# rm -rf /\nls",
            "grep -c x f 2>&1",
            "git bisect log",
        ] {
            assert!(!writes(r), "{r:?}");
        }
    }

    #[test]
    fn searches_are_told_by_the_program_that_does_the_work() {
        for cmd in [
            "find / -name 'jdk*' -type d 2>/dev/null",
            "cd src && grep -rn Parser .",
            "sudo which javac",
            "rg -n TODO | head",
            "locate libjvm.so",
        ] {
            assert!(effect(cmd).searches, "{cmd}");
        }
        for cmd in [
            "ls src",
            "cat a.py | grep x",
            "mvn test",
            "echo find",
            "python find.py",
            "grep -q TODO a.py",
            "grep -rqs TODO .",
            "rg --quiet TODO",
            "find . -name '*.pyc' -delete",
            "find . -name '*.orig' -exec rm {} +",
        ] {
            assert!(!effect(cmd).searches, "{cmd}");
        }
        // Options that do not silence the output.
        for cmd in [
            "grep -rns Parser src",
            "find . -name x -quit",
            "rg -s Parser",
        ] {
            assert!(effect(cmd).searches, "{cmd}");
        }
        assert!(effect("find . -name '*.pyc' -delete").writes);
    }

    #[test]
    fn the_program_is_named_as_it_is_picked() {
        let name = |c: &str| program_name(c);
        assert_eq!(
            name("cd /repo && sudo apt-get install -y jdk").as_deref(),
            Some("apt-get")
        );
        assert_eq!(
            name("LANG=C timeout 30 mvn -q test | tail").as_deref(),
            Some("mvn")
        );
        assert_eq!(
            name("cat <<'PY' > t.py && python3 t.py\nprint(1)\nPY").as_deref(),
            Some("python3")
        );
        assert_eq!(name("cd src").as_deref(), Some("cd"));
        assert_eq!(name("/usr/bin/javac A.java").as_deref(), Some("javac"));
        assert_eq!(name(""), None);
        assert_eq!(name(r#"{"command": "ls""#), None);
    }

    #[test]
    fn package_installs_are_told_from_other_package_commands() {
        for cmd in [
            "sudo apt-get install -y openjdk-17-jdk",
            "apt install default-jdk",
            "cd /repo && pip install -e .",
            "python3 -m pip install requests",
            "npm i lodash",
            "yarn add react",
            "sudo yum install curl",
        ] {
            assert!(effect(cmd).installs, "{cmd}");
        }
        for cmd in [
            "sudo apt-get update",
            "pip list",
            "pip show requests",
            "npm test",
            "python3 -m pytest",
            "install -m 755 a /usr/bin/a",
            "echo apt-get install x",
            "cargo test add",
            "cargo run -- add 1 2",
            "uv run pytest -k install",
            "npm run build -- i",
            "pip download install",
            "pip install -e . && pytest -q",
            "apt-get update && apt-get install -y jdk && javac A.java",
        ] {
            assert!(!effect(cmd).installs, "{cmd}");
        }
        assert!(effect("sudo apt-get -y install jdk").installs);
        assert!(effect("sudo apt-get update\nsudo apt-get install -y jdk").installs);
    }

    #[test]
    fn the_program_is_the_command_that_does_the_work() {
        let h = |s: &str| xxh3_64(s.as_bytes());
        let run = |p: &str, script: &str| xxh3_64_with_seed(script.as_bytes(), h(p));
        assert_eq!(
            program("cd /repo && python -m pytest -q"),
            run("python", "pytest")
        );
        assert_eq!(program("sudo -u app /usr/bin/javac Main.java"), h("javac"));
        assert_eq!(
            program("LANG=C timeout 30 mvn -q test 2>&1 | tail"),
            h("mvn")
        );
        assert_eq!(program("cd src"), h("cd"));
        assert_eq!(
            program("cat <<'PY' > /tmp/t.py && python3 /tmp/t.py\nprint(1)\nPY"),
            run("python3", "t.py")
        );
        assert_eq!(program("echo done"), h("echo"));
        assert_eq!(program(""), 0);
        assert_ne!(program("javac A.java"), program("mvn compile"));
        // An interpreter is the script it runs: a check printed inline says nothing of the
        // reproduction script's failure.
        assert_eq!(
            program("python -B reproduce.py"),
            program("python reproduce.py")
        );
        assert_eq!(
            program("python -c 'import a'"),
            program("python -c 'import b'")
        );
        assert_ne!(
            program("python -c 'import a'"),
            program("python reproduce.py")
        );
        assert_ne!(program("node scripts/build.js"), program("node -e 'x'"));
        assert_eq!(program("bash ./run_tests.sh"), run("bash", "run_tests.sh"));
    }

    #[test]
    fn what_a_line_does_to_the_tree_is_read() {
        let ops = |line: &str| effect(line).tree;
        let one = |op: TreeOp| {
            let mut o = TreeOps::default();
            o.push(op);
            Some(o)
        };
        assert_eq!(ops("git stash"), one(TreeOp::Stash));
        assert_eq!(ops("git stash push -m wip"), one(TreeOp::Stash));
        assert_eq!(ops("git stash pop"), one(TreeOp::Unstash { drop: true }));
        assert_eq!(ops("git stash apply"), one(TreeOp::Unstash { drop: false }));
        assert_eq!(
            ops("git checkout -- src/a.py"),
            one(TreeOp::Restore(path_hash("src/a.py")))
        );
        assert_eq!(
            ops("git restore ./src/a.py"),
            one(TreeOp::Restore(path_hash("src/a.py")))
        );
        assert_eq!(ops("git checkout HEAD -- ."), one(TreeOp::RestoreAll));
        assert_eq!(ops("git reset --hard"), one(TreeOp::RestoreAll));
        assert_eq!(
            ops("cd /repo && git stash && git status --short").map(|o| o.is_empty()),
            Some(false)
        );
        // Stash then pop in one line: both, in order.
        let mut both = TreeOps::default();
        both.push(TreeOp::Stash);
        both.push(TreeOp::Unstash { drop: true });
        assert_eq!(ops("git stash && npm test; git stash pop"), Some(both));
        // Not followed: a branch switched, a partial stash, a restore from elsewhere, any
        // other write beside; and reads are no writes at all.
        for line in [
            "git checkout main",
            "git checkout -b fix",
            "git stash push -- src/a.py",
            "git restore --source=HEAD~2 a.py",
            "git restore --staged a.py",
            "git reset --soft HEAD~1",
            "git stash && sed -i s/a/b/ x.py",
            "git checkout -- 'src/*.py'",
        ] {
            assert_eq!(ops(line), None, "{line}");
        }
        // A here-document written whole into one file, and files deleted.
        assert_eq!(
            ops("cat > ./src/a.py <<'EOF'\nx = 1\nEOF"),
            one(whole("src/a.py", "x = 1\n"))
        );
        assert_eq!(
            ops("cat <<EOF > src/a.py\nx = 1\nEOF\npython src/a.py"),
            one(whole("src/a.py", "x = 1\n"))
        );
        assert_eq!(
            ops("rm -f src/a.py"),
            one(TreeOp::Delete(path_hash("src/a.py")))
        );
        for line in [
            "cat >> src/a.py <<'EOF'\nx = 1\nEOF",
            "cat > a.py > b.py <<'EOF'\nx\nEOF",
            "cat part1 > a.py",
            "rm -rf build",
            "rm *.pyc",
            "> a.py",
        ] {
            assert_eq!(ops(line), None, "{line}");
        }
        for line in ["git stash list", "git stash show -p", "git status"] {
            assert!(!effect(line).writes, "{line}");
        }
        assert!(effect("git stash").writes);
    }

    #[test]
    fn malformed_lines_never_panic() {
        for bad in [
            "'unclosed",
            "\"unclosed \\",
            "$(unclosed",
            "`unclosed",
            "cat <<",
            "echo >",
            "2>&",
            "a\\",
            "cat <<EOF",
            "(((",
            ")))",
            "&&&|||;;;",
            "é\"ü'ñ`$(ß",
            "x <<< ",
            "\u{0}\u{1b}[2J",
        ] {
            let _ = effect(bad);
        }
    }

    #[test]
    fn argv_arrays_are_read_as_codex_sends_them() {
        let of = |args: &str| effect(&call_of(args.as_bytes()).line);
        let h = |p: &str| xxh3_64(p.as_bytes());
        // A shell started with `-c` runs its script.
        let heredoc =
            of(r#"{"command":["bash","-lc","cat > a.py <<'EOF'\nx = 1\nEOF"],"workdir":"/r"}"#);
        assert!(heredoc.writes);
        assert_eq!(
            of(r#"{"command":["/bin/sh","-c","pytest -q"]}"#).program,
            h("pytest")
        );
        assert_eq!(
            of(r#"{"command":["zsh","-euc","sed -i s/a/b/ f.py"]}"#).program,
            h("sed")
        );
        // Any other argv is one program and its words, each one word whatever it holds.
        let ls = of(r#"{"command":["ls","-la"]}"#);
        assert!(!ls.writes);
        assert_eq!(ls.program, h("ls"));
        let grep = of(r#"{"command":["grep","-n","it's; rm -rf x","src"]}"#);
        assert!(!grep.writes, "a pattern is not a command");
        assert_eq!(grep.program, h("grep"));
        assert!(
            of(r#"{"command":["apply_patch","*** Begin Patch\n*** Update File: a.py\n"]}"#).writes
        );
        assert!(of(r#"{"cmd":["python3","-c","open('f', 'w').write('x')"]}"#).writes);
        // A shell with no script left is read as its words; nothing is lost or invented.
        assert_eq!(of(r#"{"command":["bash","-c"]}"#).program, h("bash"));
        assert_eq!(of(r#"{"command":[]}"#).program, 0);
        // `script` and `commands` arrays are command lines.
        assert!(of(r#"{"commands":["cd src","sed -i s/a/b/ f.py"]}"#).writes);
        // Windsurf's `run_command` names its line `CommandLine` and its directory `Cwd`.
        let windsurf = call_of(
            br#"{"CommandLine":"cargo build 2>&1 | tail -30","Cwd":"/r","Blocking":false}"#,
        );
        assert_eq!(windsurf.line, "cargo build 2>&1 | tail -30");
        assert_eq!(windsurf.dir.as_deref(), Some("/r"));
        assert!(sends_command_line(br#"{"CommandLine":"make","Cwd":"/r"}"#));
    }
}
