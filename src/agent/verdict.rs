//! What the agent guard answers: the verdict of one event, its kind of loop, its reason and
//! recommendation, and the session's counters.

use crate::Action;

/// The kind of loop an [`AgentVerdict`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum AgentLoopKind {
    /// No loop.
    #[default]
    None = 0,
    /// The same call (tool and canonical arguments), back to back or interleaved.
    IdenticalCall = 1,
    /// A cycle of 2–8 calls repeated back to back (read → edit → test → read → …).
    Cycle = 2,
    /// The same call returning the same result again and again.
    NoProgress = 3,
    /// One tool failing with the same error whatever the arguments (a dead end).
    SameError = 4,
    /// Two errors taking turns: fixing A causes B, fixing B causes A.
    WhackAMole = 5,
    /// Calls whose arguments differ only a little (counters, offsets, spelling).
    NearDuplicate = 6,
    /// One tool returning the same result for different arguments.
    SameResult = 7,
    /// Messages or thoughts that say the same thing in other words.
    SemanticRepeat = 8,
    /// Identical assistant messages with no tool call between them.
    IdenticalMessages = 9,
    /// Assistant messages one after another with no tool call.
    Monologue = 10,
    /// The state fingerprint going back and forth (A → B → A).
    Oscillation = 11,
    /// Degenerate text inside a message (the stream engine's halt).
    TextDegeneration = 12,
    /// A chunk of streamed text repeated close together (gemini-cli's rule).
    ContentChanting = 13,
    /// Long assistant text with no tool activity for a long time.
    RunawayText = 14,
    /// Replies the harness rejected, one after another (no tool call, or several).
    RejectedReplies = 15,
    /// One tool failing again and again, whatever the errors, with nothing written between.
    FailureStreak = 16,
    /// Questions to the user one after another, with nothing written between.
    QuestionStreak = 17,
}

impl AgentLoopKind {
    /// The snake-case name used in logs and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            AgentLoopKind::None => "none",
            AgentLoopKind::IdenticalCall => "identical_call",
            AgentLoopKind::Cycle => "cycle",
            AgentLoopKind::NoProgress => "no_progress",
            AgentLoopKind::SameError => "same_error",
            AgentLoopKind::WhackAMole => "whack_a_mole",
            AgentLoopKind::NearDuplicate => "near_duplicate",
            AgentLoopKind::SameResult => "same_result",
            AgentLoopKind::SemanticRepeat => "semantic_repeat",
            AgentLoopKind::IdenticalMessages => "identical_messages",
            AgentLoopKind::Monologue => "monologue",
            AgentLoopKind::Oscillation => "oscillation",
            AgentLoopKind::TextDegeneration => "text_degeneration",
            AgentLoopKind::ContentChanting => "content_chanting",
            AgentLoopKind::RunawayText => "runaway_text",
            AgentLoopKind::RejectedReplies => "rejected_replies",
            AgentLoopKind::FailureStreak => "failure_streak",
            AgentLoopKind::QuestionStreak => "question_streak",
        }
    }

    /// The kind with this value (the C enum's), or `None`.
    pub fn from_u8(v: u8) -> Option<AgentLoopKind> {
        use AgentLoopKind::*;
        const ALL: [AgentLoopKind; 18] = [
            None,
            IdenticalCall,
            Cycle,
            NoProgress,
            SameError,
            WhackAMole,
            NearDuplicate,
            SameResult,
            SemanticRepeat,
            IdenticalMessages,
            Monologue,
            Oscillation,
            TextDegeneration,
            ContentChanting,
            RunawayText,
            RejectedReplies,
            FailureStreak,
            QuestionStreak,
        ];
        ALL.get(v as usize).copied()
    }
}

/// What the evidence rests on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum Reason {
    /// No evidence.
    #[default]
    None = 0,
    /// Repeated arguments; results unknown. Warns (see `args_only_cap`).
    RepeatedArgs = 1,
    /// Repeated calls whose results did not change.
    NoProgress = 2,
    /// Repeated failures.
    RepeatedFailure = 3,
    /// What the assistant wrote.
    Text = 4,
    /// The state fingerprint.
    State = 5,
    /// Fixes that miss: a failure each edit between left as it was, or failures edits brought
    /// back after they were left behind.
    FixesMissed = 6,
}

impl Reason {
    /// The snake-case name used in logs and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::None => "none",
            Reason::RepeatedArgs => "repeated_args",
            Reason::NoProgress => "no_progress",
            Reason::RepeatedFailure => "repeated_failure",
            Reason::Text => "text",
            Reason::State => "state",
            Reason::FixesMissed => "fixes_missed",
        }
    }
}

/// What the guard recommends doing about a loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum Recommendation {
    /// Nothing to do.
    #[default]
    None = 0,
    /// Step back and make a new plan: the same approach will give the same answer.
    Replan = 1,
    /// Undo to before the loop and take another path: this path fails.
    Backtrack = 2,
    /// Hand over to a person (or a stronger model): the agent cannot get out alone.
    Escalate = 3,
}

impl Recommendation {
    /// The snake-case name used in logs and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Recommendation::None => "none",
            Recommendation::Replan => "replan",
            Recommendation::Backtrack => "backtrack",
            Recommendation::Escalate => "escalate",
        }
    }
}

/// The answer to one agent event.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AgentVerdict {
    /// What to do: `Continue`, `Warn` (tell the model), `Block` (do not run this call) or
    /// `Halt` (stop the session). A halt is sticky until a reset or a scope-resetting user turn.
    pub action: Action,
    /// The loop found.
    pub kind: AgentLoopKind,
    /// What the evidence rests on.
    pub reason: Reason,
    /// How many times the pattern occurred (calls, errors, messages or turns of a cycle).
    pub count: u32,
    /// Calls per turn for cycles (1 for identical calls), 0 otherwise.
    pub period: u32,
    /// How sure the guard is, in `[0, 1]`; detectors that agree raise it.
    pub confidence: f32,
    /// What to do about it.
    pub recommendation: Recommendation,
    /// Detections so far in this scope (this one included): the rung on the escalation ladder.
    pub strikes: u32,
    /// Index of the event that produced this verdict (calls and messages count; results
    /// belong to their call).
    pub step: u64,
    /// The call's arguments were not valid JSON (they were compared by their raw bytes).
    pub args_invalid: bool,
    /// The call or message at the centre of the loop, e.g. `Bash(git status)`.
    pub subject: String,
    /// Steps of the events that are the evidence, oldest first.
    pub evidence: Vec<u64>,
    /// The distinct calls already tried in this loop, oldest first.
    pub tried: Vec<String>,
    /// The loop memory held this loop from an earlier session: it was reported one repeat
    /// earlier than the thresholds say (see
    /// [`AgentGuard::import_memory`](super::AgentGuard::import_memory)).
    pub remembered: bool,
}

/// Counters of one session.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AgentStats {
    /// Events checked (calls, results, messages, user turns, states).
    pub checks: u64,
    /// Tool calls seen.
    pub calls: u64,
    /// Verdicts other than `Continue`.
    pub detections: u64,
    /// `Warn` verdicts.
    pub warnings: u64,
    /// `Block` verdicts.
    pub blocks: u64,
    /// `Halt` verdicts (the sticky repeats not counted).
    pub halts: u64,
    /// Highest strike count reached.
    pub highest_strike: u32,
    /// Detections per [`AgentLoopKind`], indexed by its value.
    pub by_kind: [u64; 18],
    /// Calls whose arguments were not valid JSON.
    pub invalid_args: u64,
    /// Replies the harness rejected ([`AgentGuard::reject`](super::AgentGuard::reject)).
    pub rejections: u64,
}
