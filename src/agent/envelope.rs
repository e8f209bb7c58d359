//! Shell results sent in a JSON envelope. Codex returns a command's result as
//! `{"output": TEXT, "metadata": {"exit_code": N, "duration_seconds": S}}`, other hosts as
//! `{"stdout": …, "stderr": …, "exit_code": N}`. Read as text, every result would start alike
//! and carry a new duration; the guard reads the output and the exit status inside instead.

/// What an envelope holds: the command's output and its exit status, when it gives one.
pub(crate) struct Envelope {
    pub output: String,
    pub exit_code: Option<i64>,
}

/// Reads `result` as an envelope: a JSON object with a string `output` (or `stdout`, and
/// `stderr` after it) and an `exit_code` at its top or under `metadata`. `None` for anything
/// else, which is then read as the text it is.
pub(crate) fn read(result: &[u8]) -> Option<Envelope> {
    let start = result.iter().position(|b| !b.is_ascii_whitespace())?;
    if result[start] != b'{' {
        return None;
    }
    #[derive(serde::Deserialize)]
    struct Metadata {
        exit_code: Option<i64>,
    }
    #[derive(serde::Deserialize)]
    struct Shape {
        output: Option<String>,
        stdout: Option<String>,
        stderr: Option<String>,
        exit_code: Option<i64>,
        metadata: Option<Metadata>,
    }
    let s: Shape = serde_json::from_slice(result).ok()?;
    let output = match (s.output, s.stdout, s.stderr) {
        (Some(o), _, _) => o,
        (None, Some(out), Some(err)) if !err.is_empty() => format!("{out}\n{err}"),
        (None, Some(out), _) => out,
        (None, None, Some(err)) => err,
        (None, None, None) => return None,
    };
    Some(Envelope {
        output,
        exit_code: s.exit_code.or(s.metadata.and_then(|m| m.exit_code)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_and_stdout_envelopes_are_opened() {
        let codex = br#"{"output":"1 failed","metadata":{"exit_code":1,"duration_seconds":0.4}}"#;
        let e = read(codex).unwrap();
        assert_eq!((e.output.as_str(), e.exit_code), ("1 failed", Some(1)));
        let split = br#" {"stdout":"ok","stderr":"warning: x","exit_code":0}"#;
        let e = read(split).unwrap();
        assert_eq!(
            (e.output.as_str(), e.exit_code),
            ("ok\nwarning: x", Some(0))
        );
        assert_eq!(read(br#"{"output":"done"}"#).unwrap().exit_code, None);
        // Anything else is text.
        for text in [
            &b"{not json"[..],
            b"plain output",
            br#"{"rows": [1, 2]}"#,
            b"",
            b"[1]",
        ] {
            assert!(read(text).is_none(), "{}", String::from_utf8_lossy(text));
        }
    }
}
