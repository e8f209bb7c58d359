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
    let mut words = [[0u8; 16]; 8];
    let mut lens = [0usize; 8];
    let mut n = 0;
    let mut prev_lower = false;
    for b in tool.bytes() {
        if !b.is_ascii_alphabetic() {
            if lens[n] > 0 && n + 1 < words.len() {
                n += 1;
            }
            prev_lower = false;
            continue;
        }
        if b.is_ascii_uppercase() && prev_lower && lens[n] > 0 && n + 1 < words.len() {
            n += 1;
        }
        prev_lower = b.is_ascii_lowercase();
        if lens[n] < 16 {
            words[n][lens[n]] = b.to_ascii_lowercase();
        }
        lens[n] += 1;
    }
    let count = if lens[n] > 0 { n + 1 } else { n };
    let has = |w: &[u8]| (0..count).any(|i| lens[i] == w.len() && &words[i][..w.len()] == w);
    let to_whom = [
        &b"user"[..],
        b"human",
        b"followup",
        b"follow",
        b"question",
        b"questions",
        b"clarification",
    ];
    (count == 1 && has(b"human"))
        || (has(b"ask") && to_whom.iter().any(|w| has(w)))
        || ((has(b"user") || has(b"human")) && has(b"input"))
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
