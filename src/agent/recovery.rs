//! What the guard says about a loop: a line for logs, a sentence for a person, and a
//! `<loop-recovery>` block the agent hands back to the model.

use std::borrow::Cow;
use std::fmt::{self, Write};

use super::{shell, AgentGuard, AgentLoopKind, AgentVerdict, Reason, Recommendation};
use crate::{Action, Verbosity};

impl AgentGuard {
    /// Describes the last verdict into `out`: [`Verbosity::Brief`] is one line for logs
    /// (`Bash(git status) called 5x`), [`Verbosity::Summary`] one sentence for a person, and
    /// [`Verbosity::Full`] a `<loop-recovery>` block for the model with the pattern, the
    /// constraints, suggestions and the escalation level.
    pub fn describe(&self, verbosity: Verbosity, out: &mut impl Write) -> fmt::Result {
        let v = &self.verdict;
        let tool = self.tool_named(&v.subject);
        match verbosity {
            Verbosity::Brief => brief(v, &tool, out),
            Verbosity::Summary => summary(v, &tool, out),
            Verbosity::Full => full(v, &tool, self.config.settings().halt_after_blocks, out),
        }
    }

    /// The tool a description names: the subject's, or for a shell tool the program its
    /// command runs (`apt-get failed 3x`, not `bash failed 3x`: an agent whose one tool is a
    /// shell cannot stop calling it, only stop running what fails), as read from the call's
    /// command line as the call keeps it (its first `ARG_BYTES`; the subject's is cut short).
    fn tool_named<'a>(&self, subject: &'a str) -> Cow<'a, str> {
        let call = self
            .calls
            .iter()
            .rev()
            .find(|c| c.shell && c.label == subject);
        match call.and_then(|c| shell::program_name(&String::from_utf8_lossy(c.args_head.bytes())))
        {
            Some(program) => Cow::Owned(program),
            None => Cow::Borrowed(tool_of(subject)),
        }
    }
}

/// Text that came from the session (tool names, arguments, messages) as a description shows
/// it: control characters escaped (a NUL would cut the C string, an escape sequence would drive
/// the reader's terminal), line breaks written `\n` so that one item stays on one line, bidi
/// overrides escaped, and the block's own tags defused, so that arguments can neither close a
/// `<loop-recovery>` block handed to the model nor open one. Every piece of session text goes
/// through here on its way out.
#[derive(Clone, Copy)]
struct Quoted<'a>(&'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.0;
        for (i, c) in s.char_indices() {
            match c {
                '\n' => f.write_str("\\n")?,
                '\r' => f.write_str("\\r")?,
                '\t' => f.write_str("\\t")?,
                c if c.is_control() || is_bidi_control(c) => write!(f, "\\u{{{:x}}}", c as u32)?,
                '<' if opens_tag(&s[i + 1..]) => f.write_str("&lt;")?,
                c => f.write_char(c)?,
            }
        }
        Ok(())
    }
}

/// Characters that reorder the text around them on screen (Trojan Source).
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// What follows a `<` makes it a `<loop-recovery>` or `</loop-recovery>` tag (any case).
fn opens_tag(after: &str) -> bool {
    const NAME: &str = "loop-recovery";
    let name = after.strip_prefix('/').unwrap_or(after).trim_start();
    name.get(..NAME.len())
        .is_some_and(|n| n.eq_ignore_ascii_case(NAME))
}

fn tool_of(subject: &str) -> &str {
    subject.split('(').next().unwrap_or(subject)
}

fn args_of(subject: &str) -> &str {
    match subject.split_once('(') {
        Some((_, rest)) => rest.strip_suffix(')').unwrap_or(rest),
        None => "",
    }
}

fn brief(v: &AgentVerdict, tool: &str, out: &mut impl Write) -> fmt::Result {
    let (n, s, tool) = (v.count, Quoted(&v.subject), Quoted(tool));
    match v.kind {
        AgentLoopKind::None => out.write_str("no loop"),
        AgentLoopKind::IdenticalCall | AgentLoopKind::NoProgress => write!(out, "{s} called {n}x"),
        AgentLoopKind::Cycle => write!(out, "cycle of {} calls x{n}: {s}", v.period),
        AgentLoopKind::SameError => {
            write!(out, "{} failed {n}x with the same error", tool)
        }
        AgentLoopKind::WhackAMole if v.reason == Reason::FixesMissed => {
            write!(
                out,
                "{} keeps failing in ways it failed before ({n} failures)",
                tool
            )
        }
        AgentLoopKind::WhackAMole => {
            write!(out, "{} alternates between two errors ({n} failures)", tool)
        }
        AgentLoopKind::NearDuplicate => write!(out, "{n} near-identical {} calls", tool),
        AgentLoopKind::SameResult => {
            write!(out, "{} returned the same result {n}x", tool)
        }
        AgentLoopKind::SemanticRepeat => write!(out, "the same thought {n}x: {s}"),
        AgentLoopKind::IdenticalMessages => write!(out, "the same message {n}x"),
        AgentLoopKind::Monologue => write!(out, "{n} messages without a tool call"),
        AgentLoopKind::Oscillation => write!(out, "state went back and forth {n}x"),
        AgentLoopKind::TextDegeneration => write!(out, "degenerate text: \"{s}\""),
        AgentLoopKind::ContentChanting => write!(out, "repeating content in the response"),
        AgentLoopKind::RunawayText => write!(out, "{n} characters with no tool call"),
        AgentLoopKind::FailureStreak => write!(out, "{tool} failed {n}x in a row"),
        AgentLoopKind::QuestionStreak => {
            write!(
                out,
                "{n} questions to the user with nothing written between"
            )
        }
        AgentLoopKind::RejectedReplies => {
            write!(
                out,
                "{n} replies in a row were rejected (no tool call, or several)"
            )
        }
    }
}

fn because(r: Reason) -> &'static str {
    match r {
        Reason::None => "",
        Reason::RepeatedArgs => "with the same arguments",
        Reason::NoProgress => "and got the same result each time",
        Reason::RepeatedFailure => "and failed the same way each time",
        Reason::FixesMissed => "and failed the same way after each edit",
        Reason::Text => "in its own words",
        Reason::State => "in the state it works on",
    }
}

fn summary(v: &AgentVerdict, tool: &str, out: &mut impl Write) -> fmt::Result {
    if v.kind == AgentLoopKind::None {
        return out.write_str("The agent is not looping.");
    }
    out.write_str("The agent is looping: ")?;
    brief(v, tool, out)?;
    let why = because(v.reason);
    if !why.is_empty() && v.reason != Reason::Text {
        write!(out, " {why}")?;
    }
    if v.remembered {
        out.write_str(", a loop remembered from an earlier session")?;
    }
    let next = match v.action {
        Action::Halt => "the session was halted",
        Action::Block => "the call was not run",
        _ => "the model was warned",
    };
    write!(
        out,
        "; {next} (strike {}, confidence {:.2}). Recommended: {}.",
        v.strikes,
        v.confidence,
        v.recommendation.as_str()
    )
}

fn full(v: &AgentVerdict, tool: &str, halt_after_blocks: u32, out: &mut impl Write) -> fmt::Result {
    if v.kind == AgentLoopKind::None {
        return Ok(());
    }
    out.write_str("<loop-recovery>\npattern: ")?;
    brief(v, tool, out)?;
    write!(out, " ({}", v.kind.as_str())?;
    if v.reason != Reason::None {
        write!(out, ", {}", v.reason.as_str())?;
    }
    out.write_str(")\n")?;
    if !v.evidence.is_empty() {
        out.write_str("evidence: steps")?;
        for (i, s) in v.evidence.iter().enumerate() {
            write!(out, "{}{s}", if i == 0 { " " } else { ", " })?;
        }
        out.write_char('\n')?;
    }
    if !v.tried.is_empty() {
        out.write_str("already tried:\n")?;
        for t in &v.tried {
            writeln!(out, "- {}", Quoted(t))?;
        }
    }
    out.write_str("constraints:\n")?;
    let tool = Quoted(tool);
    let args = Quoted(args_of(&v.subject));
    match v.kind {
        AgentLoopKind::IdenticalCall | AgentLoopKind::NoProgress => {
            // The call itself, by the tool it went to (`Bash` with `git status`).
            let called = Quoted(tool_of(&v.subject));
            writeln!(out, "- Do not call {called} with `{args}` again.")?;
        }
        AgentLoopKind::Cycle => {
            writeln!(
                out,
                "- Do not repeat the sequence {} again.",
                Quoted(&v.subject)
            )?;
        }
        AgentLoopKind::WhackAMole if v.reason == Reason::FixesMissed => {
            writeln!(
                out,
                "- Your edits bring back failures you had left behind: stop switching between \
                 the settings you tried, find what makes each of them fail, then change that."
            )?;
        }
        AgentLoopKind::SameError if v.reason == Reason::FixesMissed => {
            writeln!(
                out,
                "- Your edits did not change this failure: read it again, find what makes it \
                 fail (it may lie outside what you edited), then change that."
            )?;
        }
        AgentLoopKind::SameError | AgentLoopKind::WhackAMole | AgentLoopKind::FailureStreak => {
            writeln!(
                out,
                "- Do not call {tool} again until you have changed what makes it fail."
            )?;
        }
        AgentLoopKind::NearDuplicate | AgentLoopKind::SameResult => {
            writeln!(
                out,
                "- Do not call {tool} with small variations of the same arguments."
            )?;
        }
        AgentLoopKind::Oscillation => {
            out.write_str("- Do not undo your last change again.\n")?;
        }
        AgentLoopKind::QuestionStreak => {
            out.write_str(
                "- Do not ask the user again: act on the answers you have.\n\
                 - Where an answer leaves a detail open, choose it yourself and say which.\n",
            )?;
        }
        AgentLoopKind::RejectedReplies => {
            out.write_str(
                "- Reply with exactly one tool call, in the format the harness asks for.\n\
                 - If the task is done, make the call that submits it instead of saying so.\n",
            )?;
        }
        _ => out.write_str("- Do not repeat what you just wrote.\n")?,
    }
    out.write_str("suggestions:\n")?;
    let suggestions: &[&str] = match v.recommendation {
        Recommendation::Backtrack => &[
            "Read the error message again: it did not change, so the cause is not where you are looking.",
            "Go back to before the first failure and try a different approach or a different tool.",
        ],
        Recommendation::Escalate => &[
            "Stop and tell the user what you tried and where you are stuck.",
            "Ask for the missing information instead of trying again.",
        ],
        _ => &[
            "State what you expected the repeated step to change, and why it did not.",
            "Make a new plan that uses what you already learnt; choose a different next step.",
        ],
    };
    for s in suggestions {
        writeln!(out, "- {s}")?;
    }
    let level = match v.action {
        Action::Halt => "halt: the session stops here",
        Action::Block => "block: this call was not run; continuing to repeat it halts the session",
        _ => "warning: the next repeat may be blocked",
    };
    write!(out, "escalation: strike {}, {level}", v.strikes)?;
    if v.action == Action::Block && halt_after_blocks > 0 {
        write!(out, " (after {halt_after_blocks} blocks)")?;
    }
    out.write_str("\n</loop-recovery>")
}
