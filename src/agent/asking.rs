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

/// The tool puts a question to the user: its name, in lower case with everything but letters
/// left out, asks someone (`ask…`, `request…`) for the user's or a human's word or answers a
/// follow-up question (`askfollowupquestion`, `askuserquestion`, `requestuserinput`,
/// `askhuman`, `mcp__chat__ask_user`), or is `human` (LangChain's human-input tool).
pub(crate) fn asks_user(tool: &str) -> bool {
    let mut name = [0u8; 64];
    let mut n = 0;
    for b in tool
        .bytes()
        .filter(u8::is_ascii_alphabetic)
        .take(name.len())
    {
        name[n] = b.to_ascii_lowercase();
        n += 1;
    }
    let name = &name[..n];
    let has = |w: &[u8]| memchr::memmem::find(name, w).is_some();
    let to_whom = has(b"user") || has(b"human") || has(b"followup") || has(b"question");
    name == b"human"
        || ((has(b"ask") || has(b"request")) && to_whom)
        || has(b"userinput")
        || has(b"humaninput")
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
        ] {
            assert!(!asks_user(other), "{other}");
        }
    }
}
