//! Fingerprints of what tools return: results with environment chatter folded, errors with
//! the words the call itself gave folded.
//!
//! Results are compared by fingerprint and never stored: a 10 MB output costs one pass.

use xxhash_rust::xxh3::{xxh3_64_with_seed, Xxh3};

use super::diagnostic::first_error;
use super::failure::says_only_status;
use super::harness::harness_state_line;

/// Normalised bytes of an error kept for its fingerprint: the start says what went wrong.
const ERROR_PREFIX: usize = 512;
/// Quoted spans up to this long are folded to `""` in error fingerprints.
const QUOTE_MAX: usize = 160;
/// Bracketed spans up to this long (nesting counted) are folded to `[]`.
const BRACKET_MAX: usize = 4096;

/// The length of the bracketed span `s` begins with (`s[0]` is `open`), nesting counted, if
/// it closes within `max` bytes.
fn closing(s: &[u8], open: u8, close: u8, max: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, &b) in s.iter().enumerate().take(max) {
        if b == open {
            depth += 1;
        } else if b == close {
            depth -= 1;
            if depth == 0 {
                return Some(k + 1);
            }
        }
    }
    None
}

pub(crate) use crate::text::trim_ascii;

/// The fingerprint of a result, normalised for layout and environment chatter: surrounding
/// whitespace trimmed, every whitespace run read as one space, and words that vary from run to
/// run whatever the agent does — durations (`0.53s`, `12 ms`), times and dates, memory
/// addresses, long hex ids, process ids, temporary paths — read as `#`. A changed result (a new
/// page, a different test failure, another line number) is progress, so nothing else is
/// folded. One pass, constant memory, whatever the size.
///
/// The second fingerprint, made in the same pass, also reads positions in files as `#`
/// (`line 12`, `app.py:12:`, `Repro.java:40`) and leaves out the source a failure quotes
/// around its position (`  10 |     expect(total).toBe(5);` and the caret line under it, as
/// rustc, gcc, clang, jest and tsc print them): an edit moves the lines after it and changes
/// the lines it touched, so a failure reported two lines lower, or under a reworded line, after
/// an edit is the same failure. Only the same command's failures are compared this way.
/// Returns both and the trimmed length.
pub(crate) fn result_fingerprints(output: &[u8]) -> (u64, u64, usize) {
    let t = trim_ascii(output);
    let mut hasher = Xxh3::new();
    let mut placeless = Xxh3::new();
    let (mut before, mut prev): (&[u8], &[u8]) = (&[], &[]);
    // A number is held back one word: "1.25 seconds" folds it, "384 kB" is a size; held with
    // whether it is a position already (after `line`, or a fraction that opened its line) and
    // whether its line quotes source.
    let mut held: Option<(&[u8], bool, bool)> = None;
    let (mut first, mut first_placed) = (true, true);
    let mut emit = |w: &[u8], place: Place| {
        if !first {
            hasher.update(b" ");
        }
        first = false;
        hasher.update(w);
        if place == Place::Quoted {
            return;
        }
        if !first_placed {
            placeless.update(b" ");
        }
        first_placed = false;
        placeless.update(if place == Place::Position { b"#" } else { w });
    };
    // The harness's statement of where the session stands (SWE-agent's `(Open file: …)`)
    // is no part of what the command answered.
    for line in t
        .split(|&b| b == b'\n')
        .filter(|l| !harness_state_line(trim_ascii(l)))
    {
        let quoted = is_quoted_source(line);
        let mut words = line
            .split(u8::is_ascii_whitespace)
            .filter(|w| !w.is_empty())
            .peekable();
        // A build step's tag (`#7`) before the line's first word proper.
        let tagged = words.peek().is_some_and(|w| is_step_tag(w));
        for (k, w) in words.enumerate() {
            let core = strip_punct(w);
            if let Some((n, position, in_quote)) = held.take() {
                let n = if is_time_unit(core) { &b"#"[..] } else { n };
                emit(n, Place::of(in_quote, position || is_size_unit(core)));
            }
            let counter = names_handle(prev) || shell_counter(before, prev);
            if is_number(core) && !counter {
                // A fraction that opens a log line is the time since its start (BuildKit's
                // `#7 1.874 Collecting …`, a kernel log's `[  3.421]`).
                let elapsed = k == tagged as usize && core.contains(&b'.');
                let after_line = strip_punct(prev).eq_ignore_ascii_case(b"line");
                held = Some((w, after_line || elapsed, quoted));
            } else if is_volatile(core) || (counter && (is_number(core) || is_handle(core))) {
                emit(b"#", Place::of(quoted, false));
            } else {
                emit(
                    w,
                    Place::of(quoted, is_file_position(core) || is_size(core)),
                );
            }
            before = prev;
            prev = w;
        }
    }
    if let Some((n, position, in_quote)) = held {
        emit(n, Place::of(in_quote, position));
    }
    (hasher.digest(), placeless.digest(), t.len())
}

/// The hash of one short line with its chatter folded as [`result_fingerprints`] folds it:
/// durations (a number before a time unit, `0.53s`), times, dates, addresses, long hex ids and
/// temporary paths read as `#`, white space runs as one space. Lighter than the results'
/// fingerprint (one hash, no positions), for the lines of a search (see `shown`).
pub(crate) fn line_fingerprint(line: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut mix = |w: &[u8]| {
        for &b in w.iter().chain(b" ") {
            h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    };
    let mut words = line
        .split(u8::is_ascii_whitespace)
        .filter(|w| !w.is_empty())
        .peekable();
    while let Some(w) = words.next() {
        let core = strip_punct(w);
        let timed = is_number(core) && words.peek().is_some_and(|n| is_time_unit(strip_punct(n)));
        mix(if timed || is_volatile(core) { b"#" } else { w });
    }
    xxh3_64_with_seed(&h.to_le_bytes(), 0)
}

/// A build step's tag: `#` and its number (BuildKit's `#7`).
fn is_step_tag(w: &[u8]) -> bool {
    w.len() >= 2 && w[0] == b'#' && w[1..].iter().all(u8::is_ascii_digit)
}

/// Units of data sizes, as build and download logs print them (`384 kB`, `2.31kB`, `512B`).
const SIZE_UNITS: &[&[u8]] = &[b"b", b"bytes", b"kb", b"kib", b"mb", b"mib", b"gb", b"gib"];

fn is_size_unit(w: &[u8]) -> bool {
    SIZE_UNITS.iter().any(|u| w.eq_ignore_ascii_case(u))
}

/// A number with a data size's unit, in one word (`512B`, `2.31kB`).
fn is_size(w: &[u8]) -> bool {
    let digits = w
        .iter()
        .take_while(|b| b.is_ascii_digit() || **b == b'.')
        .count();
    digits > 0 && w[0].is_ascii_digit() && is_size_unit(&w[digits..])
}

/// How a word of a result counts towards its placeless fingerprint.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Word,
    /// A position in a file: read as `#`.
    Position,
    /// Part of the source a failure quotes: left out.
    Quoted,
}

impl Place {
    /// A word of a line that quotes source or not, that is a position or not.
    fn of(quoted: bool, position: bool) -> Place {
        match (quoted, position) {
            (true, _) => Place::Quoted,
            (false, true) => Place::Position,
            (false, false) => Place::Word,
        }
    }
}

/// The line quotes source around a failure's position, as compilers and test runners print
/// it: a line number and a bar before the code (`  10 |     foo();`, `> 12 |`, `12 │`), or
/// the bar alone with carets, tildes or dashes under it (`   |     ^~~~`, `      |  ^`).
fn is_quoted_source(line: &[u8]) -> bool {
    let l = trim_ascii(line);
    let l = l.strip_prefix(b">").map_or(l, trim_ascii);
    let digits = l.iter().take_while(|b| b.is_ascii_digit()).count();
    let rest = trim_ascii(&l[digits..]);
    let bar = rest.starts_with(b"|") || rest.starts_with("\u{2502}".as_bytes());
    if !bar {
        return false;
    }
    if digits > 0 {
        return true;
    }
    let after = &rest[if rest[0] == b'|' { 1 } else { 3 }..];
    let marks = trim_ascii(after);
    !marks.is_empty()
        && marks
            .iter()
            .all(|b| matches!(b, b'^' | b'~' | b'-' | b'+' | b' '))
}

/// A file and a place in it, as compilers and test runners print them: a name with an
/// extension, then `:` and a line number (`app.py:12`, `Repro.java:40:7`).
fn is_file_position(w: &[u8]) -> bool {
    let Some(colon) = memchr::memchr(b':', w) else {
        return false;
    };
    let (file, place) = (&w[..colon], &w[colon + 1..]);
    let name = file.rsplit(|b| *b == b'/').next().unwrap_or_default();
    let named = match memchr::memrchr(b'.', name) {
        Some(dot) if dot > 0 => {
            let extension = &name[dot + 1..];
            !extension.is_empty()
                && extension.iter().all(u8::is_ascii_alphanumeric)
                && extension.iter().any(u8::is_ascii_alphabetic)
        }
        // A build file named without an extension (`Dockerfile:10`, `Makefile:23`,
        // `Jenkinsfile`, `Gemfile`).
        _ => {
            name.len() > 4
                && name[0].is_ascii_uppercase()
                && name[name.len() - 4..].eq_ignore_ascii_case(b"file")
        }
    };
    named
        && place.first().is_some_and(u8::is_ascii_digit)
        && place.iter().all(|b| b.is_ascii_digit() || *b == b':')
}

/// Punctuation that wraps words in prose and logs.
static WRAP: [bool; 256] = {
    let mut t = [false; 256];
    let wrap = b"()[]{}<>,;:\"'`";
    let mut i = 0;
    while i < wrap.len() {
        t[wrap[i] as usize] = true;
        i += 1;
    }
    t
};

/// `w` without the punctuation that wraps words in prose and logs.
fn strip_punct(w: &[u8]) -> &[u8] {
    let wrap = |b: &u8| WRAP[*b as usize];
    let start = w.iter().position(|b| !wrap(b)).unwrap_or(w.len());
    let end = w
        .iter()
        .rposition(|b| !wrap(b) && *b != b'.')
        .map_or(start, |e| e + 1);
    &w[start..end.max(start)]
}

fn is_number(w: &[u8]) -> bool {
    !w.is_empty()
        && w[0].is_ascii_digit()
        && w.iter()
            .all(|b| b.is_ascii_digit() || *b == b'.' || *b == b',')
}

const TIME_UNITS: &[&[u8]] = &[
    b"ns",
    b"us",
    b"\xc2\xb5s",
    b"ms",
    b"s",
    b"sec",
    b"secs",
    b"second",
    b"seconds",
    b"min",
    b"mins",
    b"minute",
    b"minutes",
    b"h",
    b"hour",
    b"hours",
];

fn is_time_unit(w: &[u8]) -> bool {
    TIME_UNITS.iter().any(|u| w.eq_ignore_ascii_case(u))
}

/// The word before names a handle the environment gives out: a process id (`pid 4242`, `PID:
/// 4242`, `process 4242`, Gemini CLI's `Process Group PGID: 40348`), a terminal, job, session
/// or shell (`terminal 7`, `job 3`, `shell id: bash_2`), an `ID` (`Process launched with
/// terminal ID 8`). It changes each time the agent starts something, whatever the agent does.
fn names_handle(prev: &[u8]) -> bool {
    let p = strip_punct(prev);
    [
        &b"pid"[..],
        b"pgid",
        b"process",
        b"id",
        b"terminal",
        b"job",
        b"session",
        b"shell",
    ]
    .iter()
    .any(|k| p.eq_ignore_ascii_case(k))
}

/// A word that can be a handle: a number, or letters, digits, `_` and `-` with a digit among
/// them (`bash_3`, `a1b2c3`).
fn is_handle(w: &[u8]) -> bool {
    !w.is_empty()
        && w.len() <= 40
        && w.iter().any(u8::is_ascii_digit)
        && w.iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
}

/// The handles an answer names (see `names_handle`), among its first 512 bytes: each one's
/// [`handle_hash`](super::args::handle_hash) to `f`.
pub(crate) fn handles_in(output: &[u8], mut f: impl FnMut(u64)) {
    let head = &output[..output.len().min(512)];
    let mut prev: &[u8] = &[];
    for w in head
        .split(u8::is_ascii_whitespace)
        .filter(|w| !w.is_empty())
    {
        let core = strip_punct(w);
        if names_handle(prev) && is_handle(core) {
            f(super::args::handle_hash(core));
        }
        prev = w;
    }
}

/// The words before name a shell's own line counter (`bash: line 27424:`, `sh: 3:`): in a
/// session that keeps one shell, it counts the commands run so far, not anything the agent did.
fn shell_counter(before: &[u8], prev: &[u8]) -> bool {
    let shell = |w: &[u8]| {
        let name = w.strip_suffix(b":").unwrap_or_default();
        let name = name.rsplit(|b| *b == b'/').next().unwrap_or_default();
        matches!(name, b"sh" | b"bash" | b"dash" | b"zsh" | b"ksh")
    };
    shell(prev) || (prev == b"line" && shell(before))
}

/// A duration in two or more parts, as `kubectl`, `gh` and Go print an age or an elapsed
/// time: numbers each with a unit of days, hours, minutes, seconds or milliseconds (`3m22s`,
/// `2d18h`, `1h2m3.5s`, `1m30.25s`). One part alone with `m` or `d` (`15m`) can be a quantity
/// (Kubernetes' millicores), and is left.
fn is_compound_duration(w: &[u8]) -> bool {
    let mut parts = 0;
    let mut rest = w;
    while !rest.is_empty() {
        let digits = rest
            .iter()
            .take_while(|b| b.is_ascii_digit() || **b == b'.')
            .count();
        let unit = rest[digits..]
            .iter()
            .take_while(|b| b.is_ascii_lowercase())
            .count();
        if digits == 0
            || !rest[0].is_ascii_digit()
            || !matches!(
                &rest[digits..digits + unit],
                b"d" | b"h" | b"m" | b"s" | b"ms"
            )
        {
            return false;
        }
        parts += 1;
        rest = &rest[digits + unit..];
    }
    parts >= 2
}

/// A word that changes between runs of the same command whatever the agent does.
fn is_volatile(w: &[u8]) -> bool {
    if w.len() < 2 {
        return false;
    }
    // A duration: a number with a time unit (`0.53s`, `120ms`).
    let digits = w
        .iter()
        .take_while(|b| b.is_ascii_digit() || **b == b'.')
        .count();
    if digits > 0 && digits < w.len() && w[0].is_ascii_digit() && is_time_unit(&w[digits..]) {
        return true;
    }
    if is_compound_duration(w) {
        return true;
    }
    // A memory address.
    if w.len() > 4 && w[0] == b'0' && (w[1] | 0x20) == b'x' {
        return true;
    }
    // A process id written as `pid=4242` or `pid:4242`.
    if w.len() > 4 && w[..3].eq_ignore_ascii_case(b"pid") && matches!(w[3], b'=' | b':') {
        return true;
    }
    // A temporary path or file (`/tmp/pytest-of-root/…`, `tmpa1b2c3d4`).
    if contains(w, b"/tmp/") || w.starts_with(b"/tmp") || contains(w, b"/var/folders/") {
        return true;
    }
    if w.len() >= 9
        && w[..3].eq_ignore_ascii_case(b"tmp")
        && w[3..]
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_')
        && w[3..].iter().any(u8::is_ascii_digit)
    {
        return true;
    }
    // A date or a time: digit groups joined by `-`, `:` or `/` (`2026-11-25`, `08:01:34`,
    // `2026-11-25T08:01:34.5Z`); a time's fraction of a second may follow a comma, as
    // Python's logging writes it (`13:59:31,208`).
    let seps = w.iter().filter(|b| matches!(b, b'-' | b':' | b'/')).count();
    let ndigits = w.iter().filter(|b| b.is_ascii_digit()).count();
    let time = w.contains(&b':');
    if seps >= 1
        && ndigits >= 4
        && w[0].is_ascii_digit()
        && w.iter()
            .all(|b| b.is_ascii_digit() || b"-:/.TZ+".contains(b) || (time && *b == b','))
        && w.split(|b| matches!(b, b'-' | b':' | b'/'))
            .all(|g| !g.is_empty())
    {
        return true;
    }
    // A long hex id (a UUID, an object id): hex digits with both digits and letters.
    w.len() >= 8
        && w.iter().all(|b| b.is_ascii_hexdigit() || *b == b'-')
        && w.iter().any(u8::is_ascii_digit)
        && w.iter().any(|b| b.is_ascii_alphabetic())
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(hay, needle).is_some()
}

/// The fingerprint of a failure: its error message's, with the output's when the message
/// says no more than an exit status (`returncode 1`: which command failed and how is then in
/// the output, and a dead end is the same failure, not the same exit code): a build's first
/// error diagnostic, or else the output's ends.
pub(crate) fn failure_fingerprint(
    error: &[u8],
    output: &[u8],
    args: &ArgWords,
    scratch: &mut Vec<u8>,
) -> u64 {
    let fp = error_fingerprint(error, args, scratch);
    if !says_only_status(error) {
        return fp;
    }
    // A build's first error diagnostic says what failed (see `diagnostic`).
    if let Some((cause, _)) = first_error(output) {
        return xxh3_64_with_seed(&error_fingerprint(cause, args, scratch).to_le_bytes(), fp);
    }
    // The head says which command failed, the tail how (a traceback's last line); the source
    // a failure quotes (see `is_quoted_source`) says where, and is left out of both.
    let out = trim_ascii(output);
    let mut end = [0u8; OUTPUT_ENDS];
    let n = output_end(out, false, &mut end);
    let head = error_fingerprint(&end[..n], args, scratch);
    let n = output_end(out, true, &mut end);
    let tail = error_fingerprint(&end[OUTPUT_ENDS - n..], args, scratch);
    xxh3_64_with_seed(&[head.to_le_bytes(), tail.to_le_bytes()].concat(), fp)
}

/// The fingerprint of how an output ends: its last [`OUTPUT_ENDS`] bytes but for the source
/// it quotes, folded as an error is but with quoted names kept, since they say what failed (a
/// traceback's exception and the module it missed, a test runner's failures and verdict).
/// What a failure was, whatever its error message says (`Traceback (most recent call last):`
/// heads every Python failure).
pub(crate) fn tail_fingerprint(output: &[u8], args: &ArgWords, scratch: &mut Vec<u8>) -> u64 {
    let mut end = [0u8; OUTPUT_ENDS];
    let n = output_end(trim_ascii(output), true, &mut end);
    fingerprint_folded(&end[OUTPUT_ENDS - n..], args, scratch, false)
}

/// The first (or with `tail`, the last) `OUTPUT_ENDS` bytes of `out` but for the lines that
/// quote source, into `buf` (from its start, or for the tail up to its end); returns how many.
fn output_end(out: &[u8], tail: bool, buf: &mut [u8; OUTPUT_ENDS]) -> usize {
    let mut n = 0;
    let lines = out.split(|&b| b == b'\n');
    let mut put = |b: u8| {
        if n == OUTPUT_ENDS {
            return false;
        }
        buf[if tail { OUTPUT_ENDS - 1 - n } else { n }] = b;
        n += 1;
        true
    };
    let kept = |line: &&[u8]| !is_quoted_source(line);
    // Each line with the break that parts it from the next, read backwards for the tail.
    if tail {
        'lines: for line in lines.rev().filter(kept) {
            for &b in line.iter().chain(std::iter::once(&b'\n')).rev() {
                if !put(b) {
                    break 'lines;
                }
            }
        }
    } else {
        'lines: for line in lines.filter(kept) {
            for &b in line.iter().chain(std::iter::once(&b'\n')) {
                if !put(b) {
                    break 'lines;
                }
            }
        }
    }
    n
}

/// Bytes of each end of an output that identify a failure whose message is only a status.
const OUTPUT_ENDS: usize = 256;

/// The fingerprint of an error message, the same whatever the arguments that caused it:
/// ASCII case, digits, hex words, paths, and quoted or bracketed spans (which usually echo the
/// argument) are folded, and whitespace runs become one space. Only the first 512 normalised
/// bytes count.
pub(crate) fn error_fingerprint(error: &[u8], args: &ArgWords, scratch: &mut Vec<u8>) -> u64 {
    fingerprint_folded(error, args, scratch, true)
}

/// [`error_fingerprint`], with quoted spans folded or kept.
fn fingerprint_folded(error: &[u8], args: &ArgWords, scratch: &mut Vec<u8>, quotes: bool) -> u64 {
    scratch.clear();
    let mut i = 0;
    while i < error.len() && scratch.len() < ERROR_PREFIX {
        let b = error[i];
        // A quoted or bracketed span: fold it when it closes soon enough.
        let close = match b {
            b'"' if quotes => Some(b'"'),
            b'\'' if quotes && (i == 0 || !error[i - 1].is_ascii_alphanumeric()) => Some(b'\''),
            b'`' if quotes => Some(b'`'),
            b'[' => Some(b']'),
            b'(' => Some(b')'),
            b'{' => Some(b'}'),
            b'<' => Some(b'>'),
            _ => None,
        };
        if let Some(c) = close {
            // A bracketed span may be long (a list of suggestions that changes every time)
            // and nested; a quoted one is short (it echoes an argument).
            let span = if matches!(b, b'[' | b'(' | b'{') {
                closing(&error[i..], b, c, BRACKET_MAX)
            } else {
                let end = (i + 1 + QUOTE_MAX).min(error.len());
                memchr::memchr(c, &error[i + 1..end]).map(|j| j + 2)
            };
            if let Some(len) = span {
                scratch.extend_from_slice(&[b, c]);
                i += len;
                continue;
            }
        }
        if b.is_ascii_whitespace() {
            if scratch.last().is_some_and(|&l| l != b' ') {
                scratch.push(b' ');
            }
            i += 1;
            continue;
        }
        // One word: up to the next whitespace or bracket (an unclosed bracket is a word).
        let start = i;
        i += 1;
        while i < error.len()
            && !error[i].is_ascii_whitespace()
            && !matches!(error[i], b'"' | b'`' | b'[' | b'(' | b'{' | b'<')
        {
            i += 1;
        }
        let room = ERROR_PREFIX - scratch.len();
        let word = &error[start..i.min(start + room)];
        if args.echoes(word) {
            // The call's own argument, echoed back: "creative retries" fail the same way.
            scratch.push(b'@');
        } else {
            push_word(word, scratch);
        }
    }
    while scratch.last() == Some(&b' ') {
        scratch.pop();
    }
    xxh3_64_with_seed(scratch, 0x0065_7272)
}

/// The words of a call's arguments (three bytes or more, ASCII case ignored, from the first
/// `ARG_BYTES`), so that an error that echoes them back (`E: Unable to locate package
/// default-jdk`, `cat: x.txt: No such file`) fingerprints the same whatever the arguments
/// were. A word followed by `=` is a name, not a value (`JAVA_HOME` in `export
/// JAVA_HOME=/x`, `--level` in `--level=3`): an error that names the variable it complains
/// about says the same thing whatever the call set it to. The set is exact (32-bit hashes):
/// a filter that took a word of the error for an argument would fold words that tell one
/// failure from another.
#[derive(Clone, Debug)]
pub(crate) struct ArgWords {
    hashes: [u32; MAX_ARG_WORDS],
    len: usize,
}

/// Bytes of a call's arguments whose words are folded out of its errors: names, paths and
/// commands come first in arguments; a file's content after them is not echoed by errors.
pub(crate) const ARG_BYTES: usize = 256;

/// At most this many words of three bytes fit in `ARG_BYTES`, one separator after each.
const MAX_ARG_WORDS: usize = ARG_BYTES / 4 + 1;

impl Default for ArgWords {
    fn default() -> ArgWords {
        ArgWords {
            hashes: [0; MAX_ARG_WORDS],
            len: 0,
        }
    }
}

impl ArgWords {
    /// The words of `args` (raw bytes: JSON or a command line).
    pub(crate) fn of(args: &[u8]) -> ArgWords {
        let mut words = ArgWords::default();
        let (mut h, mut len) = (FNV32, 0u32);
        let args = &args[..args.len().min(ARG_BYTES)];
        // The first line only (a newline, or `\n` escaped in JSON, ends it): what follows is
        // content — a heredoc's body, a script, prose sent as a command — which an error
        // quotes by chance, not as the value that failed.
        let end = (0..args.len())
            .find(|&i| args[i] == b'\n' || (args[i] == b'\\' && args.get(i + 1) == Some(&b'n')))
            .unwrap_or(args.len());
        for &b in &args[..end] {
            if ARG_BYTE[b as usize] {
                h = (h ^ b.to_ascii_lowercase() as u32).wrapping_mul(FNV32_PRIME);
                len += 1;
            } else {
                if len >= 3 && b != b'=' {
                    words.add(h);
                }
                (h, len) = (FNV32, 0);
            }
        }
        if len >= 3 {
            words.add(h);
        }
        words
    }

    fn add(&mut self, h: u32) {
        if !self.hashes[..self.len].contains(&h) && self.len < MAX_ARG_WORDS {
            self.hashes[self.len] = h;
            self.len += 1;
        }
    }

    /// The error names one of the call's argument words, its first (the program, or a JSON
    /// tool's first key) aside: `E: Unable to locate package default-jdk`, `src/main is a
    /// directory`, not `javac: command not found`.
    pub(crate) fn named_in(&self, error: &[u8]) -> bool {
        let rest = self.hashes[..self.len].get(1..).unwrap_or_default();
        (error.split(|&b| !is_arg_byte(b))).any(|w| w.len() >= 3 && rest.contains(&word_hash(w)))
    }

    /// `word` of an error message (surrounding punctuation aside) is one of the words.
    fn echoes(&self, word: &[u8]) -> bool {
        if self.len == 0 {
            return false;
        }
        let start = word
            .iter()
            .position(|&b| is_arg_byte(b))
            .unwrap_or(word.len());
        let end = word
            .iter()
            .rposition(|&b| is_arg_byte(b))
            .map_or(start, |e| e + 1);
        let w = &word[start..end];
        w.len() >= 3 && self.hashes[..self.len].contains(&word_hash(w))
    }
}

/// The words of a call's latest result (names, paths, values it listed), as a Bloom filter of
/// `LEARNT_WORDS` bits: what the agent has just learnt, so that a call using one of them is
/// known to act on it. Words as arguments are cut (`ArgWords`), from the first
/// `LEARNT_BYTES` bytes of the output.
#[derive(Clone, Debug)]
pub(crate) struct Learnt {
    bits: [u64; LEARNT_WORDS / 64],
}

impl Default for Learnt {
    fn default() -> Learnt {
        Learnt {
            bits: [0; LEARNT_WORDS / 64],
        }
    }
}

/// Bits of the filter: the words of `LEARNT_BYTES` of output (some 600) set about a quarter of
/// them, so a word the result did not hold reads as learnt about once in sixteen (two bits).
const LEARNT_WORDS: usize = 4096;
/// Bytes of a result read for its words.
const LEARNT_BYTES: usize = 4 * 1024;

impl Learnt {
    /// Learns the words of `output`, forgetting those of the result before.
    pub(crate) fn learn(&mut self, output: &[u8]) {
        self.clear();
        for w in output[..output.len().min(LEARNT_BYTES)].split(|&b| !is_arg_byte(b)) {
            if w.len() >= 3 {
                for bit in Learnt::bits_of(word_hash(w)) {
                    self.bits[bit / 64] |= 1 << (bit % 64);
                }
            }
        }
    }

    pub(crate) fn clear(&mut self) {
        *self = Learnt::default();
    }

    fn holds(&self, h: u32) -> bool {
        Learnt::bits_of(h)
            .iter()
            .all(|&bit| self.bits[bit / 64] & (1 << (bit % 64)) != 0)
    }

    /// The two bits a word of hash `h` sets.
    fn bits_of(h: u32) -> [usize; 2] {
        [h, h.rotate_left(16).wrapping_mul(FNV32_PRIME)].map(|k| k as usize % LEARNT_WORDS)
    }
}

impl ArgWords {
    /// One of these words, the first aside, was learnt from the latest result and is in
    /// none of `tried`: the call acts on something new.
    pub(crate) fn uses_new(&self, learnt: &Learnt, tried: &[ArgWords]) -> bool {
        self.hashes[..self.len]
            .iter()
            .skip(1)
            .any(|&h| learnt.holds(h) && !tried.iter().any(|t| t.hashes[..t.len].contains(&h)))
    }
}

/// The hash of an argument word, ASCII case ignored.
fn word_hash(w: &[u8]) -> u32 {
    w.iter().fold(FNV32, |h, &b| {
        (h ^ b.to_ascii_lowercase() as u32).wrapping_mul(FNV32_PRIME)
    })
}

const FNV32: u32 = 0x811c_9dc5;
const FNV32_PRIME: u32 = 0x0100_0193;

/// The bytes of argument words (see `is_arg_byte`), as a table.
static ARG_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || c == b'.' || c >= 0x80;
        b += 1;
    }
    t
};

fn is_arg_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.') || b >= 0x80
}

/// One word of an error message, folded.
fn push_word(w: &[u8], out: &mut Vec<u8>) {
    if w.contains(&b'/') || w.contains(&b'\\') {
        out.push(b'/');
        // Keep what ends the word (`:` or `,`) so "at /a/b:" and "at /c:" agree.
        if let Some(&last) = w.last() {
            if last.is_ascii_punctuation() && last != b'/' && last != b'\\' {
                out.push(last);
            }
        }
        return;
    }
    let has_digit = w.iter().any(u8::is_ascii_digit);
    // A hex word or a UUID: fold it whole (`0x7ffd`, `deadbeef42`, `9f1c-…`).
    if has_digit && w.len() >= 6 && w.iter().all(|b| b.is_ascii_hexdigit() || *b == b'-') {
        out.push(b'#');
        return;
    }
    if w.len() > 2 && w[0] == b'0' && (w[1] | 0x20) == b'x' {
        out.push(b'#');
        return;
    }
    let mut in_digits = false;
    for &b in w {
        if b.is_ascii_digit() {
            if !in_digits {
                out.push(b'#');
            }
            in_digits = true;
        } else {
            out.push(b.to_ascii_lowercase());
            in_digits = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(s: &str) -> u64 {
        error_fingerprint(s.as_bytes(), &ArgWords::default(), &mut Vec::new())
    }

    #[test]
    fn errors_fold_what_varies() {
        assert_eq!(
            fp("Permission denied: /etc/shadow (errno 13)"),
            fp("permission  denied: /root/.ssh/id_rsa (errno 13)\n")
        );
        assert_eq!(
            fp("TypeError: x is undefined (line 10)"),
            fp("TypeError: x is undefined (line 12)")
        );
        assert_eq!(
            fp("Could not find [The Dark Tower]. Similar: ['a', 'b']"),
            fp("Could not find [Aunt May]. Similar: ['c']")
        );
        // A long list of suggestions that changes every time, nested brackets included.
        let long: Vec<String> = (0..60).map(|i| format!("'Page ({i})'")).collect();
        assert_eq!(
            fp(&format!(
                "Could not find [x]. Similar: [{}].",
                long.join(", ")
            )),
            fp("Could not find [y]. Similar: ['Other (page)'].")
        );
        assert_eq!(
            fp("request 9f1c2d3e-aaaa-bbbb-cccc-1234567890ab failed at 2026-11-22T08:14:44Z"),
            fp("request 0a1b2c3d-aaaa-bbbb-cccc-0987654321ff failed at 2025-01-02T00:00:01Z")
        );
        assert_ne!(
            fp("TypeError: x is undefined"),
            fp("ImportError: cannot import y")
        );
        assert_eq!(fp(""), fp("   "));
        // Unclosed quotes and brackets are plain characters.
        assert_ne!(fp("bad \"quote"), fp("bad (paren"));
        fp(&"\"".repeat(10_000));
        fp(&"[(".repeat(10_000));
    }

    #[test]
    fn results_ignore_layout_and_chatter_only() {
        let fp = |s: &str| result_fingerprints(s.as_bytes()).0;
        assert_eq!(fp("a  b\n\tc "), fp("a b c"));
        assert_ne!(fp("chunk 1"), fp("chunk 2"));
        assert_ne!(fp("ab"), fp("a b"));
        assert_ne!(fp("line 40: x"), fp("line 41: x"));
        assert_ne!(fp("a.sh: line 40: x"), fp("a.sh: line 41: x"));
        assert_ne!(fp("FAILED test_a"), fp("FAILED test_b"));
        // A quantity in one part (millicores) and words that only look like units stay.
        assert_ne!(fp("cpu 15m"), fp("cpu 250m"));
        assert_ne!(fp("step 2d3x"), fp("step 4d5x"));
        assert_ne!(fp("rows 2m3"), fp("rows 4m5"));
        let long = "x ".repeat(5000);
        assert_eq!(fp(&long), fp(&long.replace(' ', "\n\n")));
        for (a, b) in [
            ("Ran 3 tests in 0.012s\nOK", "Ran 3 tests in 1.250s\nOK"),
            ("1 failed in 2.31 seconds", "1 failed in 0.4 seconds"),
            ("done (took 120ms)", "done (took 98ms)"),
            // Ages and elapsed times in parts (`kubectl get`, `gh run list`).
            (
                "reindex-7xk2q   0/1   Pending   0   3m22s",
                "reindex-7xk2q   0/1   Pending   0   1h2m",
            ),
            (
                "api-6d9f   1/1   Running   0   2d18h",
                "api-6d9f   1/1   Running   0   2d19h",
            ),
            ("v2.8.0  Deploy  26m40s", "v2.8.0  Deploy  1m30.5s"),
            ("<Foo object at 0x7f3a2b1c>", "<Foo object at 0x7f00aa11>"),
            ("started pid 4242", "started pid 17"),
            ("worker pid=4242 up", "worker pid=99 up"),
            (
                "wrote /tmp/pytest-of-root/pytest-12/x.txt",
                "wrote /tmp/pytest-of-root/pytest-13/x.txt",
            ),
            ("at 2026-11-25T08:01:34Z: ok", "at 2025-01-02T10:00:00Z: ok"),
            ("09:14:02 INFO ready", "09:15:47 INFO ready"),
            // Python's logging: a comma before the milliseconds.
            (
                "2024-06-03 13:59:31,208 INFO migrating",
                "2024-06-03 14:00:47,655 INFO migrating",
            ),
            ("id 9f1c2d3e-aaaa-bbbb", "id 0a1b2c3d-cccc-dddd"),
            ("file tmpa8x3k2q9 created", "file tmpzz81kd02 created"),
            // A long-lived shell numbers its diagnostics by the commands run so far.
            (
                "/bin/bash: line 27424: javac: command not found",
                "/bin/bash: line 27478: javac: command not found",
            ),
            ("sh: 1: mvn: not found", "sh: 12: mvn: not found"),
            // Handles the environment gives out.
            (
                "Process launched with terminal ID 7",
                "Process launched with terminal ID 12",
            ),
            ("Terminal 7 killed", "Terminal 8 killed"),
            (
                "Command running in background with ID: bash_1",
                "Command running in background with ID: bash_2",
            ),
            ("[1] job 3 started", "[1] job 4 started"),
            (
                "Exit Code: 0\nProcess Group PGID: 40348",
                "Exit Code: 0\nProcess Group PGID: 40512",
            ),
        ] {
            assert_eq!(fp(a), fp(b), "{a:?} vs {b:?}");
        }
        // A handle is a number or an id, not any word after `id`.
        assert_ne!(fp("id alice"), fp("id bob"));
        let mut got = Vec::new();
        handles_in(b"Process launched with terminal ID 7 (pid 4242)", |h| {
            got.push(h)
        });
        let hash = |t: &str| super::super::args::handle_hash(t.as_bytes());
        assert_eq!(got, [hash("7"), hash("4242")]);
        // Positions in files count for a result, not for the failure it reports.
        let placeless = |s: &str| result_fingerprints(s.as_bytes()).1;
        for (a, b) in [
            (
                "File \"t.py\", line 2, in <module>\nModuleNotFoundError: No module named 'com'",
                "File \"t.py\", line 4, in <module>\nModuleNotFoundError: No module named 'com'",
            ),
            (
                "Repro.java:10: error: ';' expected",
                "Repro.java:12: error: ';' expected",
            ),
            (
                "src/app.py:3:7: E999 SyntaxError",
                "src/app.py:5:1: E999 SyntaxError",
            ),
            ("error at line 7", "error at line 9"),
            // A build's log: BuildKit's elapsed times, the edited file's size, its lines.
            (
                "#1 transferring dockerfile: 512B done\n#7 1.874 Collecting psycopg2\n\
                 #7 3.898 Error: pg_config executable not found.\nDockerfile:10\nERROR: failed",
                "#1 transferring dockerfile: 573B done\n#7 1.652 Collecting psycopg2\n\
                 #7 3.676 Error: pg_config executable not found.\nDockerfile:11\nERROR: failed",
            ),
            // The source quoted around the failure changed with the edit (jest, rustc).
            (
                "Expected: \"$1,234.50\"\nReceived: \"$1,234.5\"\n\n   9 |   it('pads', () => {\n\
                 > 10 |     expect(f(1234.5)).toBe('$1,234.50');\n     |                ^\n  at f.test.ts:10:36",
                "Expected: \"$1,234.50\"\nReceived: \"$1,234.5\"\n\n  11 |       f(1234.5),\n\
                 > 12 |     ).toBe(\"$1,234.50\");\n     |       ^\n  at f.test.ts:12:7",
            ),
            (
                "error[E0382]: borrow of moved value: `v`\n --> src/main.rs:5:20\n  |\n\
                 5 |     println!(\"{:?}\", v);\n  |                    ^ value borrowed here",
                "error[E0382]: borrow of moved value: `v`\n --> src/main.rs:7:20\n  |\n\
                 7 |     println!(\"{v:?}\");\n  |                    ^ value borrowed here",
            ),
        ] {
            assert_ne!(fp(a), fp(b), "{a:?} vs {b:?}");
            assert_eq!(placeless(a), placeless(b), "{a:?} vs {b:?}");
        }
        // What the failure says still counts beside the source it quotes.
        assert_ne!(
            placeless("Received: \"$1,234.5\"\n> 10 |     expect(x).toBe(1);"),
            placeless("Received: \"$1,234.6\"\n> 10 |     expect(x).toBe(1);")
        );
        // A table's rows with a bar are no quoted source (`a | b`), nor a number and a pipe.
        assert!(!super::is_quoted_source(b"name | value"));
        assert!(!super::is_quoted_source(b"echo 3 | wc -l"));
        // The carets alone point; a label after them says what is wrong.
        assert!(super::is_quoted_source(b"     |       ^~~~"));
        assert!(!super::is_quoted_source(b"  | ^^^^ expected `u32`"));
        for (a, b) in [
            ("assert 0 == 7", "assert 1 == 7"),
            ("expected 3 lines, got 4", "expected 3 lines, got 5"),
            ("version 1.2:3", "version 1.2:4"),
        ] {
            assert_ne!(placeless(a), placeless(b), "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn arguments_echoed_in_errors_are_folded() {
        let mut s = Vec::new();
        let fp = |args: &str, err: &str, s: &mut Vec<u8>| {
            error_fingerprint(err.as_bytes(), &ArgWords::of(args.as_bytes()), s)
        };
        assert_eq!(
            fp(
                "apt-get install default-jdk",
                "E: Unable to locate package default-jdk",
                &mut s
            ),
            fp(
                "apt-get install openjdk-17",
                "E: Unable to locate package openjdk-17",
                &mut s
            )
        );
        assert_ne!(
            fp("cat a.txt", "cat: a.txt: No such file or directory", &mut s),
            fp("cat a.txt", "cat: a.txt: Permission denied", &mut s)
        );
        // A variable the call sets is named by the error whatever its value: the error of a
        // call that sets it is the error of one that does not.
        let err = "Error: JAVA_HOME is not defined correctly.";
        assert_eq!(
            fp("./mvnw test -Dtest=A", err, &mut s),
            fp(
                "export JAVA_HOME=/opt/jdk8\n./mvnw test -Dtest=A",
                err,
                &mut s
            )
        );
        // Prose sent as a command: the error quotes none of its later lines, though they
        // hold some of its words ("looking for").
        let eof = "/bin/bash: line 2: unexpected EOF while looking for matching `''";
        assert_eq!(
            fp(
                "{\"command\": \"DISCUSSION\\nLet's start by looking for files\"}",
                eof,
                &mut s
            ),
            fp(
                "{\"command\": \"DISCUSSION\\nThe syntax error persists\"}",
                eof,
                &mut s
            )
        );
        // Long arguments fold their own words and no others (a 64-bit filter once folded
        // about one error word in five as if the arguments held it).
        let long: String = (0..60).map(|i| format!("w{i:03}x ")).collect();
        for word in [
            "defined",
            "correctly",
            "missing",
            "denied",
            "unknown",
            "invalid",
        ] {
            let e = format!("Error: {word} here");
            assert_ne!(
                fp(&long, &e, &mut s),
                fp(&long, "Error: other here", &mut s),
                "{word}"
            );
        }
    }

    #[test]
    fn a_status_only_error_is_told_apart_by_its_output() {
        let mut s = Vec::new();
        let none = ArgWords::default();
        let mut f =
            |e: &str, o: &str| failure_fingerprint(e.as_bytes(), o.as_bytes(), &none, &mut s);
        let name = f(
            "returncode 1",
            "Traceback ...\nNameError: name 'x' is not defined",
        );
        let import = f(
            "returncode 1",
            "Traceback ...\nImportError: cannot import y",
        );
        assert_ne!(name, import);
        assert_eq!(
            f("returncode 2", "bash: line 3: javac: command not found"),
            f("returncode 2", "bash: line 9: javac: command not found")
        );
        // A message that says what failed is enough by itself.
        assert_eq!(
            f("javac: command not found", "one output"),
            f("javac: command not found", "another output")
        );
    }
}
