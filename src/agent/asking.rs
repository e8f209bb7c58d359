//! Questions to the user: an agent that asks again and again with nothing written between is
//! asking instead of working.
//!
//! Coding agents ask their users through a tool (Cline's, Roo Code's and Kilo Code's
//! `ask_followup_question`, Claude Code's `AskUserQuestion`, Codex's `request_user_input`, an
//! MCP server's `ask_user` or `ask_human`), and a round of clarification before the work starts
//! is how a careful agent begins: a few questions, each answered, then the edits. Claude
//! Code's tool takes at most four questions at once, its makers' measure of one round. An agent
//! that goes on asking with nothing written since — the answered question again in new words,
//! one more confirmation, the user asked to run what it could run itself — has stopped
//! working, whatever its questions say: `question_streak` warns from the fifth question
//! since the last write. Reads and commands between the questions do not end the streak; a
//! write does.

use super::{AgentGuard, AgentLoopKind, AgentSettings, Finding, Reason};

/// The tool puts a question to the user, by the words of its name (split at `_`, `-`, `.` and
/// where a capital follows a small letter, in lower case): `ask` with `user`, `human`,
/// `followup`/`follow`, `question` or `clarification` (`ask_followup_question`,
/// `AskUserQuestion`, `mcp__chat__ask_user`, `ask_human`), `user` or `human` with `input`
/// (`request_user_input`, `get_human_input`), or the name `human` alone (LangChain's
/// human-input tool). Words, not letters: `create_task_for_user` asks no one.
pub(crate) fn asks_user(tool: &str) -> bool {
    // The words' kinds, a bit each, read in one pass.
    const ASK: u8 = 1;
    const TO_WHOM: u8 = 2;
    const PERSON: u8 = 4;
    const INPUT: u8 = 8;
    const HUMAN: u8 = 16;
    const KINDS: [(&str, u8); 9] = [
        ("ask", ASK),
        ("user", TO_WHOM | PERSON),
        ("human", TO_WHOM | PERSON | HUMAN),
        ("followup", TO_WHOM),
        ("follow", TO_WHOM),
        ("question", TO_WHOM),
        ("questions", TO_WHOM),
        ("clarification", TO_WHOM),
        ("input", INPUT),
    ];
    let kind = |w: &str| {
        KINDS
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(w))
            .map_or(0, |&(_, bits)| bits)
    };
    let (mut seen, mut words) = (0u8, 0);
    name_words(tool, |w| {
        seen |= kind(w);
        words += 1;
    });
    (words == 1 && seen == TO_WHOM | PERSON | HUMAN)
        || (seen & ASK != 0 && seen & TO_WHOM != 0)
        || (seen & PERSON != 0 && seen & INPUT != 0)
}

/// The words of a tool's name, to `f`: runs of letters, split where a capital follows a small
/// letter (`AskUserQuestion`: `Ask`, `User`, `Question`; `mcp__chat__ask_user`: `mcp`, `chat`,
/// `ask`, `user`).
pub(crate) fn name_words(tool: &str, mut f: impl FnMut(&str)) {
    let mut start = None;
    let bytes = tool.as_bytes();
    for i in 0..=bytes.len() {
        let b = bytes.get(i).copied().unwrap_or(b'_');
        // A word ends before a byte that is not a letter, and before a capital after a
        // small letter (`AskUser`).
        let ends = !b.is_ascii_alphabetic()
            || (b.is_ascii_uppercase() && i > 0 && bytes[i - 1].is_ascii_lowercase());
        if ends {
            if let Some(from) = start.take() {
                f(&tool[from..i]);
            }
        }
        if b.is_ascii_alphabetic() && start.is_none() {
            start = Some(i);
        }
    }
}

impl AgentGuard {
    /// Call `me` is a question to the user: the questions since the last write, oldest first,
    /// at least as many as `question_streak` asks, warn.
    pub(super) fn question_streak(&self, s: &AgentSettings, me: usize, found: &mut Vec<Finding>) {
        let t = s.question_streak;
        if t.is_off() || !self.calls[me].asks {
            return;
        }
        let calls: Vec<usize> = (0..=me)
            .filter(|&i| self.calls[i].asks && self.calls[i].step >= self.failure_epoch)
            .collect();
        found.extend(Finding::of_calls(
            AgentLoopKind::QuestionStreak,
            Reason::RepeatedArgs,
            t,
            t.warn,
            calls,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn question_tools_by_name() {
        for asks in [
            "ask_followup_question",
            "AskUserQuestion",
            "request_user_input",
            "interactive__request_user_input",
            "ask_human",
            "mcp__chat__ask_user",
            "human",
            "get_user_input",
            "mcp_human-loop_ask_question",
        ] {
            assert!(asks_user(asks), "{asks}");
        }
        for other in [
            "Bash",
            "read_file",
            "codebase_search",
            "attempt_completion",
            "plan_mode_respond",
            "create_user",
            "list_users",
            "ask_llm",
            "TaskOutput",
            "create_task_for_user",
            "request_user_profile",
            "UserQuestionsReport",
        ] {
            assert!(!asks_user(other), "{other}");
        }
    }
}
