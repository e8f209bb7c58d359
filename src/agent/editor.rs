//! What a file-editor tool call does. The editor tools of coding agents (Anthropic's
//! `str_replace_based_edit_tool`, OpenHands' and SWE-agent's `str_replace_editor`) take a
//! `command` member: `view` reads a file or lists a directory, the others change it. Their
//! names match the progress patterns (`replace`, `edit`), so without this every `view` would
//! count as a write: a view loop would never be seen, and each view would restart failure
//! streaks.

/// Editor tools whose `command` member says whether the call writes.
const EDITORS: &[&str] = &[
    "str_replace_editor",
    "str_replace_based_edit_tool",
    "file_editor",
    "text_editor",
];

/// Whether an editor's `command` writes: `Some(false)` for `view`, `Some(true)` for `create`,
/// `str_replace`, `insert`, `undo_edit` and `write`; `None` for a command it does not know
/// (the tool's policy and the progress patterns decide then).
pub(crate) fn command_writes(command: &str) -> Option<bool> {
    match command {
        "view" => Some(false),
        "create" | "str_replace" | "insert" | "undo_edit" | "write" => Some(true),
        _ => None,
    }
}

/// An editor tool, whose `command` member says what a call does.
pub(crate) fn is_editor(tool: &str) -> bool {
    EDITORS.iter().any(|e| e.eq_ignore_ascii_case(tool))
}

/// The `command` an editor tool's call runs (`view`, `str_replace`, …); `None` for any other
/// tool or arguments without a `command` string. The commands are different operations with
/// different answers (every `str_replace` that applies answers "Successfully replaced text at
/// exactly one location."), so to the per-tool rules each is a tool of its own, as a shell's
/// programs are.
pub(crate) fn command(tool: &str, args: &[u8]) -> Option<String> {
    if !is_editor(tool) {
        return None;
    }
    #[derive(serde::Deserialize)]
    struct Args {
        command: Option<String>,
    }
    serde_json::from_slice::<Args>(args).ok()?.command
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writes(tool: &str, args: &[u8]) -> Option<bool> {
        command_writes(&command(tool, args)?)
    }

    #[test]
    fn views_read_and_edits_write() {
        let view = br#"{"command":"view","path":"/repo/src/app.py","view_range":[1,40]}"#;
        assert_eq!(writes("str_replace_editor", view), Some(false));
        assert_eq!(writes("str_replace_based_edit_tool", view), Some(false));
        let edit = br#"{"command":"str_replace","path":"a.py","old_str":"x","new_str":"y"}"#;
        assert_eq!(writes("str_replace_editor", edit), Some(true));
        assert_eq!(
            writes("STR_REPLACE_EDITOR", br#"{"command":"create"}"#),
            Some(true)
        );
        // Other tools, other shapes: the policy and the patterns decide.
        assert_eq!(writes("edit_file", view), None);
        assert_eq!(writes("str_replace_editor", br#"{"command":"grep"}"#), None);
        assert_eq!(writes("str_replace_editor", br#"{"command":7}"#), None);
        assert_eq!(writes("str_replace_editor", b"not json"), None);
    }

    #[test]
    fn an_editors_command_is_read_from_its_arguments() {
        let edit = br#"{"command":"str_replace","path":"a.py"}"#;
        assert_eq!(
            command("str_replace_based_edit_tool", edit).as_deref(),
            Some("str_replace")
        );
        assert_eq!(command("edit_file", edit), None);
        assert_eq!(command("text_editor", br#"{"path":"a.py"}"#), None);
    }
}
