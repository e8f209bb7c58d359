//! What a shell command's output says about how the call went, when the harness flags no
//! error: nothing at all (an empty success, whatever markup wraps it), a failure named in its
//! first or last lines, or only a non-zero exit status.

use super::diagnostic::first_error;
use super::harness::{at_most_outside_markup, harness_line, markup_line, positions_ignoring_case};
use super::text::trim_ascii;

/// An output that says nothing: no letters outside markup tags and harness lines, or a word of
/// at most three letters (`ok`). Harnesses wrap even an empty output (`<returncode>0</returncode>
/// <output></output>`; OpenHands adds `[The command completed with exit code 0.]` and
/// `[Current working directory: /workspace]`), so the markup does not count. Stops at the
/// first word that says something, so a long output costs a few bytes.
pub(crate) fn says_nothing(output: &[u8]) -> bool {
    at_most_outside_markup(output, 3, |b| b.is_ascii_alphabetic() || b >= 0x80)
}

/// An output that prints nothing at all outside markup tags and harness lines (a number alone
/// between two tags, `<returncode>1</returncode>`, is the harness's status): what a search that
/// found nothing prints.
pub(crate) fn prints_nothing(output: &[u8]) -> bool {
    let mut in_tag = false;
    // What the text since the last tag holds: nothing yet, a number, or more.
    let mut held: Option<bool> = None;
    let mut after_tag = false;
    for line in output.split(|&b| b == b'\n') {
        if harness_line(line) {
            continue;
        }
        for &b in line {
            match b {
                b'<' if !in_tag => {
                    if held.is_some_and(|number| !(number && after_tag)) {
                        return false;
                    }
                    in_tag = true;
                }
                b'>' if in_tag => {
                    in_tag = false;
                    after_tag = true;
                    held = None;
                }
                _ if in_tag || b.is_ascii_whitespace() => {}
                _ => held = Some(held.unwrap_or(true) && b.is_ascii_digit()),
            }
        }
    }
    held.is_none()
}

/// The output's last line that says something is a database's count of no rows: `(0 rows)`
/// (psql), `Empty set` (MySQL), `no rows selected` (SQL*Plus). A query that found nothing,
/// whatever columns its header names: they echo the query's own words, and a query reworded
/// with new aliases finds the same nothing.
pub(crate) fn found_no_rows(output: &[u8]) -> bool {
    output
        .rsplit(|&b| b == b'\n')
        .map(trim_ascii)
        .find(|l| !l.is_empty() && !harness_line(l))
        .is_some_and(|l| {
            l == b"(0 rows)"
                || l.starts_with(b"Empty set")
                || l.eq_ignore_ascii_case(b"no rows selected")
        })
}

/// The output reports a job still running: a status, state, phase or health that says so
/// (Claude Code's `<status>running</status>`, `"status": "pending"`, `Status: in progress`,
/// Docker's `(health: starting)`, Kubernetes' `"phase": "Pending"`), `still running` or `no
/// new output` (OpenHands: "The command has no new output after 30 seconds"), among its first
/// 512 bytes. Its caller is waiting on the world, not repeating itself.
pub(crate) fn reports_running(output: &[u8]) -> bool {
    const STATES: &[&[u8]] = &[
        b"running",
        b"pending",
        b"queued",
        b"in progress",
        b"in_progress",
        b"waiting",
        b"starting",
    ];
    let head = &output[..output.len().min(512)];
    let mut low = [0u8; 512];
    let low = &mut low[..head.len()];
    low.copy_from_slice(head);
    low.make_ascii_lowercase();
    if memchr::memmem::find(low, b"still running").is_some()
        || memchr::memmem::find(low, b"no new output").is_some()
    {
        return true;
    }
    let keys: [&[u8]; 4] = [b"status", b"state", b"phase", b"health"];
    keys.iter().any(|key| {
        memchr::memmem::find_iter(low, key).any(|i| {
            let rest = &low[i + key.len()..];
            // The key, then up to four bytes of markup or punctuation (`>`, `": "`).
            let skip = rest
                .iter()
                .take(4)
                .take_while(|b| b"\"':=> \t".contains(b))
                .count();
            STATES.iter().any(|s| rest[skip..].starts_with(s))
        })
    })
}

/// The output says no: a word of denial or absence among the first 256 bytes of what the
/// command printed (`No files found`, `not found`, `0 matches`, `cannot`, `unable`, `missing`,
/// `error`…), its harness's markup and lines left out (mini-swe-agent's
/// `<returncode>0</returncode>` is the status of a command that succeeded, not a count of
/// nothing). A brief answer that denies answers a question, nothing found; it is no
/// acknowledgment.
pub(crate) fn denies(output: &[u8]) -> bool {
    let mut budget = 256;
    for line in output.split(|&b| b == b'\n') {
        if budget == 0 {
            break;
        }
        if markup_line(trim_ascii(line)) || harness_line(line) {
            continue;
        }
        let head = &line[..line.len().min(budget)];
        budget -= head.len();
        if says_no(head) {
            return true;
        }
    }
    false
}

/// A word of denial or absence in `head` (see [`denies`]).
fn says_no(head: &[u8]) -> bool {
    const NO: &[&[u8]] = &[
        b"no",
        b"not",
        b"nothing",
        b"none",
        b"never",
        b"cannot",
        b"can't",
        b"couldn't",
        b"unable",
        b"missing",
        b"empty",
        b"fail",
        b"failed",
        b"failure",
        b"error",
        b"denied",
        b"invalid",
        b"unknown",
        // A program's usage line, answered to a call that was not a request for help: the
        // call was malformed and did nothing (SWE-agent's `Usage: edit <start_line>:<end_line>`).
        b"usage",
        b"0",
    ];
    head.split(|b| !(b.is_ascii_alphanumeric() || *b == b'\''))
        .filter(|w| !w.is_empty() && w.len() <= 8)
        .any(|w| {
            let mut low = [0u8; 8];
            low[..w.len()].copy_from_slice(w);
            low.make_ascii_lowercase();
            NO.contains(&&low[..w.len()])
        })
}

/// The error message names nothing but an exit status (`returncode 1`, `exit status 2`,
/// `Command failed with exit code 1`).
pub(crate) fn says_only_status(error: &[u8]) -> bool {
    const STATUS_WORDS: &[&str] = &[
        "code",
        "command",
        "error",
        "exit",
        "exited",
        "failed",
        "non-zero",
        "nonzero",
        "return",
        "returncode",
        "returned",
        "status",
        "with",
    ];
    let mut words = 0;
    for w in error.split(|b| !b.is_ascii_alphanumeric() && *b != b'-') {
        if w.is_empty() || w.iter().all(u8::is_ascii_digit) {
            continue;
        }
        words += 1;
        let lower: Vec<u8> = w.iter().map(u8::to_ascii_lowercase).collect();
        if !STATUS_WORDS.iter().any(|s| s.as_bytes() == lower) {
            return false;
        }
    }
    words > 0
}

/// The line of a shell command's output that reports a failure, when the harness flagged no
/// error: its first or last line names one (`E: Unable to locate package x`, `error: …`,
/// `fatal: …`, `…: command not found`, `…: No such file or directory`, `Permission denied`,
/// a traceback's exception, the shell's own diagnostics, a timeout), or its first line or one
/// of its last three states a non-zero exit status, as harnesses print it
/// (`<returncode>1</returncode>`, `[The command completed with exit code 1.]`,
/// `"exit_code": 2`), or, with no status printed, one of its last three lines is a test
/// runner's or build tool's verdict of failure (`5 failed, 2 passed`, `BUILD FAILURE`: see
/// `tests_failed`). A status alone is reported as [`EXIT_STATUS`], which
/// [`failure_fingerprint`](super::text::failure_fingerprint) tells apart by the output's ends.
pub(crate) fn reported_failure(output: &[u8]) -> Option<&[u8]> {
    let diagnostic = first_error(output);
    match failure_line(output) {
        // A build's first error diagnostic is its cause (see `diagnostic`).
        Some(line) => Some(diagnostic.map_or(line, |(d, _)| d)),
        // A compiler that stopped failed the build, whatever the lines after it say.
        None => diagnostic.filter(|&(_, fatal)| fatal).map(|(d, _)| d),
    }
}

/// The line that reports a failure, as [`reported_failure`] reads it but for diagnostics.
fn failure_line(output: &[u8]) -> Option<&[u8]> {
    let t = trim_ascii(output);
    let first = t.split(|&b| b == b'\n').next().unwrap_or_default();
    let last = t.rsplit(|&b| b == b'\n').next().unwrap_or_default();
    if let Some(named) = [first, last]
        .into_iter()
        .map(trim_ascii)
        .find(|l| names_failure(l))
    {
        return Some(named);
    }
    let mut tail = t.rsplit(|&b| b == b'\n');
    let last3 = [tail.next(), tail.next(), tail.next()];
    if std::iter::once(first)
        .chain(last3.into_iter().flatten())
        .any(states_failed_exit)
    {
        return Some(EXIT_STATUS);
    }
    // With no status printed (SWE-agent prints none), a test runner's own verdict.
    if let Some(verdict) = last3
        .into_iter()
        .flatten()
        .map(trim_ascii)
        .find(|l| tests_failed(l))
    {
        return Some(verdict);
    }
    // What the command printed is inside the harness's markup, whose exit status is the last
    // command's of a pipe (`make 2>&1 | tail`: `tail`'s 0): the command's own first and last
    // lines name a failure, and its last three give a test runner's verdict, as they would
    // with no markup around them.
    let mut printed = t
        .split(|&b| b == b'\n')
        .map(trim_ascii)
        .filter(|l| !l.is_empty() && !markup_line(l) && !harness_line(l));
    let printed_first = printed.next().unwrap_or_default();
    let mut tail = printed.rev();
    let printed_last3 = [tail.next(), tail.next(), tail.next()];
    let printed_last = printed_last3[0].unwrap_or(printed_first);
    [printed_first, printed_last]
        .into_iter()
        .find(|l| names_failure(l))
        .or_else(|| {
            printed_last3
                .into_iter()
                .flatten()
                .find(|l| tests_failed(l))
        })
}

/// The line (trimmed) names a failure: `E: …`, `error: …`, `fatal: …`, a traceback, the
/// shell's own diagnostics, `…: command not found`, `…: No such file or directory`, `Permission
/// denied`, a timeout, or an exception's name before a colon (`ValueError: bad`).
fn names_failure(line: &[u8]) -> bool {
    const LEADS: &[&[u8]] = &[
        b"E: ",
        b"error:",
        b"Error:",
        b"ERROR:",
        b"error[",
        b"fatal:",
        b"FATAL:",
        // A log level of error in brackets: Maven's, which prints only these with `-q`.
        b"[ERROR] ",
        b"Traceback",
        // The shell's own diagnostics (`/bin/bash: line 2: unexpected EOF …`).
        b"bash: ",
        b"/bin/bash: ",
        b"sh: ",
        b"/bin/sh: ",
        b"zsh: ",
    ];
    const MARKS: &[&[u8]] = &[
        b": command not found",
        b": No such file or directory",
        b"Permission denied",
        b"Unable to locate package",
        b"timed out",
        b"TIMED OUT",
    ];
    LEADS.iter().any(|l| line.starts_with(l))
        || MARKS
            .iter()
            .any(|m| memchr::memmem::find(line, m).is_some())
        || (line.ends_with(b"Error") || line.contains(&b':'))
            && line
                .split(|&b| b == b':')
                .next()
                .is_some_and(|h| h.ends_with(b"Error") || h.ends_with(b"Exception"))
}

/// The line is a test runner's or build tool's verdict of failure, as it ends its output: a
/// count of failures other than 0 (`5 failed, 2 passed in 0.05s`, `Tests: 2 failed, 9 total`,
/// `FAILED (failures=1)`, `1 error`), or a failing verdict (`test result: FAILED.`, `FAIL
/// example.com/pkg`, `--- FAIL: TestX`, `BUILD FAILURE`, `BUILD FAILED`). `0 failed` is a
/// pass.
fn tests_failed(line: &[u8]) -> bool {
    const VERDICTS: &[&[u8]] = &[
        b"FAILED",
        b"FAIL\t",
        b"FAIL ",
        b"--- FAIL",
        b"BUILD FAILURE",
        b"BUILD FAILED",
        b"test result: FAILED",
    ];
    // Past a log level in brackets (Maven's `[INFO] BUILD FAILURE`).
    let bare = match line
        .strip_prefix(b"[")
        .and_then(|l| l.iter().position(|&b| b == b']'))
    {
        Some(end) => trim_ascii(&line[end + 2..]),
        None => line,
    };
    if VERDICTS.iter().any(|v| bare.starts_with(v)) {
        return true;
    }
    // A word of failure next to a number other than 0, either side (`5 failed`,
    // `failures=1`).
    let words: Vec<&[u8]> = line
        .split(|b| !b.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let failure = |w: &[u8]| {
        [
            &b"failed"[..],
            b"failures",
            b"failure",
            b"errors",
            b"error",
            b"failing",
        ]
        .iter()
        .any(|f| w.eq_ignore_ascii_case(f))
    };
    let nonzero = |w: &[u8]| w.iter().all(u8::is_ascii_digit) && w.iter().any(|&d| d != b'0');
    words
        .windows(2)
        .any(|p| (nonzero(p[0]) && failure(p[1])) || (failure(p[0]) && nonzero(p[1])))
}

/// Printed lines at the end of an output read for a test runner's or build tool's verdicts.
const TALLY_LINES: usize = 12;

/// The counts of the verdicts of failure among the last [`TALLY_LINES`] lines a command
/// printed (see [`tests_failed`]: `3 failed, 47 passed`, `Tests run: 12, Failures: 1`, `2
/// errors generated`), hashed from the last; durations (`in 0.09s`, `2s`) left out. 0: none. Fewer
/// failures after an edit is progress even when the failure reads alike with its numbers
/// folded; the same counts are the same verdict.
pub(crate) fn tally(output: &[u8]) -> u32 {
    let mut h = 0u32;
    let lines = output
        .rsplit(|&b| b == b'\n')
        .map(trim_ascii)
        .filter(|l| !l.is_empty() && !markup_line(l) && !harness_line(l))
        .take(TALLY_LINES);
    for line in lines.filter(|l| tests_failed(l)) {
        let mut i = 0;
        while i < line.len() {
            if !line[i].is_ascii_digit() {
                i += 1;
                continue;
            }
            let start = i;
            while i < line.len() && line[i].is_ascii_digit() {
                i += 1;
            }
            let decimal = (start > 0 && line[start - 1] == b'.') || line.get(i) == Some(&b'.');
            let timed = (matches!(line.get(i), Some(b's' | b'm'))
                && !line.get(i + 1).is_some_and(u8::is_ascii_alphabetic))
                || line[i..].starts_with(b"ms");
            if !decimal && !timed {
                for &b in &line[start..i] {
                    h = (h ^ b as u32).wrapping_mul(0x0100_0193);
                }
                h = (h ^ b',' as u32).wrapping_mul(0x0100_0193);
            }
        }
        h = (h ^ b'\n' as u32).wrapping_mul(0x0100_0193);
    }
    h
}

/// The error a failure carries when its output states only a non-zero exit status.
pub(crate) const EXIT_STATUS: &[u8] = b"exit status";

/// The line states a non-zero exit status: a status word (`exit code`, `exit status`,
/// `exit_code`, `returncode`, `return code`, `exited with code`), at most four bytes of
/// punctuation or space, then a number other than 0 that no word follows.
fn states_failed_exit(line: &[u8]) -> bool {
    const KEYS: &[&[u8]] = &[
        b"exit code",
        b"exit status",
        b"exit_code",
        b"exitcode",
        b"returncode",
        b"return code",
        b"exited with code",
    ];
    KEYS.iter().any(|key| {
        positions_ignoring_case(line, key).any(|at| {
            let rest = &line[at + key.len()..];
            let skip = rest
                .iter()
                .take(4)
                .take_while(|b| {
                    matches!(b, b' ' | b'\t' | b':' | b'=' | b'"' | b'\'' | b'>' | b'-')
                })
                .count();
            let number = &rest[skip..];
            let n = number.iter().take_while(|b| b.is_ascii_digit()).count();
            // A status, not a sentence about one ("exit code 1 means …").
            let sentence = number.get(n) == Some(&b' ')
                && number.get(n + 1).is_some_and(u8::is_ascii_alphabetic);
            n > 0 && number[..n].iter().any(|&d| d != b'0') && !sentence
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_answered_no_rows_found_nothing() {
        for out in [
            " id | total\n----+-------\n(0 rows)\n\n",
            "Output:\n n\n---\n(0 rows)\n[The command completed with exit code 0.]",
            "Empty set (0.00 sec)",
            "no rows selected",
        ] {
            assert!(found_no_rows(out.as_bytes()), "{out:?}");
        }
        for out in [
            " n\n---\n 0\n(1 row)",
            "(10 rows)",
            "",
            "0 rows were deleted, see (0 rows) above\ndone",
        ] {
            assert!(!found_no_rows(out.as_bytes()), "{out:?}");
        }
    }

    #[test]
    fn failures_are_read_from_the_first_and_last_lines() {
        assert_eq!(
            reported_failure(b"Reading package lists...\nE: Unable to locate package x"),
            Some(&b"E: Unable to locate package x"[..])
        );
        assert!(
            reported_failure(b"Traceback (most recent call last):\n  ...\nValueError: bad")
                .is_some()
        );
        assert!(reported_failure(b"1 passed in 0.2s").is_none());
        // Test runners' and build tools' verdicts, as they end their output.
        for failed in [
            &b"..F.\nFAILED tests/test_a.py::test_x - assert 3 == 2\n5 failed, 2 passed in 0.05s"[..],
            b"Tests:       2 failed, 10 passed, 12 total",
            b"Ran 3 tests in 0.001s\n\nFAILED (failures=1)",
            b"test result: FAILED. 2 passed; 1 failed; 0 ignored",
            b"--- FAIL: TestParse (0.00s)\nFAIL\nFAIL\texample.com/app\t0.012s",
            b"[INFO] BUILD FAILURE\n[INFO] Total time: 2.1 s",
            b"3 errors",
        ] {
            assert!(
                reported_failure(failed).is_some(),
                "{}",
                String::from_utf8_lossy(failed)
            );
        }
        for passed in [
            &b"test result: ok. 3 passed; 0 failed; 0 ignored"[..],
            b"Tests:       12 passed, 12 total",
            b"ok  \texample.com/app\t0.012s",
            b"[INFO] BUILD SUCCESS",
            b"7 passed in 0.03s",
            b"Found 0 errors. Watching for file changes.",
            b"the failed login is handled",
        ] {
            assert!(
                reported_failure(passed).is_none(),
                "{}",
                String::from_utf8_lossy(passed)
            );
        }
        assert!(reported_failure(b"the error: is in the docs").is_none());
        for named in [
            &b"/bin/bash: line 2: unexpected EOF while looking for matching `''"[..],
            b"sh: 1: mvn: not found",
            b"Running tests...\nCommand timed out after 120 seconds",
        ] {
            assert!(
                reported_failure(named).is_some(),
                "{}",
                String::from_utf8_lossy(named)
            );
        }
        // `--help` succeeds: a usage message is not a failure.
        assert!(reported_failure(b"Usage: mvn [options] [<goal(s)>]\n\nOptions:").is_none());
        // A non-zero exit status, as harnesses print it, first or among the last three lines.
        for failed in [
            &b"<returncode>1</returncode>\n<output>\n2 failed, 3 passed\n</output>"[..],
            b"2 failed, 3 passed\n[The command completed with exit code 1.]\n[Current working \
              directory: /workspace]\n[Python interpreter: /usr/bin/python]",
            br#"{"output":"2 failed","metadata":{"exit_code":2,"duration_seconds":0.4}}"#,
            b"make: *** [all] Killed\nProcess exited with code -9",
            b"Exit status: 127",
        ] {
            let got = reported_failure(failed);
            assert_eq!(
                got,
                Some(EXIT_STATUS),
                "{}",
                String::from_utf8_lossy(failed)
            );
            assert!(says_only_status(EXIT_STATUS));
        }
        // Inside a harness's markup whose status is a pipe's last command's (`| tail`: 0), the
        // command's own lines: a named failure, a test runner's verdict.
        for piped in [
            &b"<returncode>0</returncode>\n<output>\nbuilding\nERROR: Failed to build x\n</output>"
                [..],
            b"..F\n===== 1 failed, 8 passed in 0.08s =====\n[The command completed with exit code \
              0.]\n[Current working directory: /workspace]\n[Python interpreter: /usr/bin/python]",
            // Maven with `-q` prints its error lines only, the verdict far from the end.
            b"<returncode>0</returncode>\n<output>\n[ERROR] Tests run: 9, Failures: 1, Errors: 0\n\
              junit.framework.ComparisonFailure: expected:<1> but was:<2>\n[ERROR] Failed to \
              execute goal org.apache.maven.plugins:maven-surefire-plugin:3.0.0-M7:test\n[ERROR] \
              \n[ERROR] Please refer to /testbed/gson/target/surefire-reports for the individual \
              test results.\n</output>",
        ] {
            assert!(
                reported_failure(piped).is_some(),
                "{}",
                String::from_utf8_lossy(piped)
            );
        }
        for fine in [
            &b"<returncode>0</returncode>\n<output>\n5 passed\n</output>"[..],
            b"5 passed\n[The command completed with exit code 0.]",
            br#"{"output":"ok","metadata":{"exit_code":0}}"#,
            b"exit code 1 means a test failed (docs, first line)\n\nmore\nmore\nmore\nend",
            b"the returncode of a process",
        ] {
            let got = reported_failure(fine);
            assert_eq!(got, None, "{}", String::from_utf8_lossy(fine));
        }
    }

    #[test]
    fn status_only_errors() {
        assert!(says_only_status(b"Command failed with exit code 1"));
        assert!(!says_only_status(b"No such file or directory"));
        assert!(!says_only_status(b"7"));
    }

    #[test]
    fn a_tally_is_the_counts_of_the_verdicts_of_failure() {
        let pytest = |n: u32, secs: &str| {
            format!("FAILED tests/t.py::test_a - assert 1 == 2\n{n} failed, 9 passed in {secs}")
        };
        assert_eq!(
            tally(pytest(2, "0.04s").as_bytes()),
            tally(pytest(2, "1.51s").as_bytes())
        );
        assert_ne!(
            tally(pytest(2, "0.04s").as_bytes()),
            tally(pytest(1, "0.04s").as_bytes())
        );
        let maven =
            "[ERROR] Tests run: 12, Failures: 1, Errors: 0, Skipped: 0\n[INFO] BUILD FAILURE\n\
                     [INFO] Total time:  4.1 s";
        assert_ne!(tally(maven.as_bytes()), 0);
        assert_ne!(
            tally(maven.as_bytes()),
            tally(maven.replace("Failures: 1", "Failures: 2").as_bytes())
        );
        // Inside a harness's markup, as without it; no verdict, no tally.
        assert_eq!(
            tally(
                format!(
                    "<returncode>1</returncode>\n<output>\n{}\n</output>",
                    pytest(2, "3s")
                )
                .as_bytes()
            ),
            tally(pytest(2, "0.5s").as_bytes())
        );
        assert_eq!(
            tally(b"Traceback (most recent call last):\nKeyError: 'x'"),
            0
        );
    }

    #[test]
    fn an_answer_that_says_no_denies() {
        for no in [
            "No files found",
            "grep: x: No such file or directory",
            "0 matches",
            "Usage: edit <start_line>:<end_line>",
            "Your proposed edit has introduced new syntax error(s).",
        ] {
            assert!(denies(no.as_bytes()), "{no:?}");
        }
        for yes in [
            "Successfully modified file: /repo/src/Slug.java (1 replacements).",
            "Todos have been modified successfully.",
            "File created successfully at: /repo/a.py",
            // A harness's status of a command that succeeded counts nothing.
            "<returncode>0</returncode>\n<output>\nAll checks passed!\n</output>",
            "All checks passed!\n\n[The command completed with exit code 0.]",
        ] {
            assert!(!denies(yes.as_bytes()), "{yes:?}");
        }
        assert!(denies(
            b"<returncode>0</returncode>\n<output>\n0 files reformatted\n</output>"
        ));
    }

    #[test]
    fn a_job_still_going_is_read_from_its_status() {
        for going in [
            "<status>running</status>",
            r#"{"status": "pending"}"#,
            "Status: in progress",
            "app-db-1  postgres:16  Up 11 seconds (health: starting)  5432/tcp",
            r#"{"phase": "Pending"}"#,
            "State: queued",
            "The command has no new output after 30 seconds.",
        ] {
            assert!(reports_running(going.as_bytes()), "{going:?}");
        }
        for done in [
            "<status>completed</status>",
            "app-db-1  postgres:16  Up 40 seconds (healthy)  5432/tcp",
            r#"{"phase": "Succeeded"}"#,
            "state: done",
            "the health of the code base",
            "5 passed",
        ] {
            assert!(!reports_running(done.as_bytes()), "{done:?}");
        }
    }

    #[test]
    fn empty_outputs_say_nothing() {
        for quiet in [
            "",
            "  \n",
            "ok",
            "<returncode>0</returncode>\n<output>\n</output>",
            "0",
            "\n[The command completed with exit code 0.]\n[Current working directory: /workspace]\n\
             [Python interpreter: /usr/bin/python]",
            // Cline, with nothing captured and with an empty output.
            "Command executed.",
            "Command executed.\nOutput:\n",
            // Cline's browser, an action that printed nothing, and its closing.
            "The browser action has been executed. The console logs and screenshot have been \
             captured for your analysis.\n\nConsole logs:\n(No new logs)",
            "The browser has been closed. You may now proceed to using other tools.",
            // Cursor's wrapping of an empty output.
            "Command output:\n\n```\n\n```\n\nCommand completed.\n\nThe previous shell command \
             ended, so on the next invocation of this tool, you will be reusing the shell.\n\nOn \
             the next invocation of this tool, the current working directory of the shell will be \
             /home/dev/shop.",
        ] {
            assert!(says_nothing(quiet.as_bytes()), "{quiet:?}");
        }
        for said in [
            "clean",
            "<output>hello</output>",
            "1 passed",
            "[File: a.py (1 lines total)]",
            "['alice', 'bob']",
            "done\n[The command completed with exit code 0.]",
            "Command executed.\nOutput:\n 9 passed (9)",
            "Command executed successfully: 3 rows",
            "Output: 42 files",
            "The browser action has been executed. The console logs and screenshot have been \
             captured for your analysis.\n\nConsole logs:\n[warn] Form submission blocked",
        ] {
            assert!(!says_nothing(said.as_bytes()), "{said:?}");
        }
        // A search prints what it found: `ok` or a path of three letters is something.
        for nothing in [
            "",
            "<returncode>1</returncode>\n<output>\n</output>",
            " \n ",
            "Command executed.",
        ] {
            assert!(prints_nothing(nothing.as_bytes()), "{nothing:?}");
        }
        for found in [
            "./a",
            "ok",
            "<output>a.c</output>",
            "0",
            "<output>\n3\n",
            "x <b>",
        ] {
            assert!(!prints_nothing(found.as_bytes()), "{found:?}");
        }
    }
}
