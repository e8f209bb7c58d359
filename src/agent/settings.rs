//! Agent-guard configuration: plain [`AgentSettings`], validated once into a shared
//! [`AgentConfig`].

use std::collections::HashMap;
use std::sync::Arc;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use super::chant::ChantSettings;
use crate::config::{check_f32, check_off_or, check_patterns, check_u32};
use crate::{Action, ConfigError, StreamConfig, StreamSettings};

/// The largest call window an agent guard can be configured to remember.
pub const MAX_AGENT_WINDOW: u32 = 1024;

/// Rejected replies in a row before the default guard says so: off. In the real coding-agent
/// runs (README, *Coding agents*) streaks of 6 to 46 rejected replies end on their own in runs
/// that go on to resolve their task as often as in runs that fail, and the harness answers
/// each one already; a streak is no evidence the agent is stuck on its task. Hosts that pay
/// per reply can turn it on (warn 5, halt 50, say) for its own recovery text.
const REJECTED_REPLIES: Thresholds = Thresholds::OFF;

/// Counts at which one detector warns, blocks and halts. `0` turns a step off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Thresholds {
    /// Count that warns. `0` = never.
    pub warn: u32,
    /// Count that blocks the call (no-progress evidence needed unless `args_only_cap` allows).
    pub block: u32,
    /// Count that halts the session.
    pub halt: u32,
}

impl Thresholds {
    /// Warn at `warn`, block at `block`, halt at `halt` (each `0` for never).
    pub const fn new(warn: u32, block: u32, halt: u32) -> Thresholds {
        Thresholds { warn, block, halt }
    }

    /// Never fires.
    pub const OFF: Thresholds = Thresholds::new(0, 0, 0);

    /// The step `count` reaches.
    pub(crate) fn action(&self, count: u32) -> Action {
        let hit = |t: u32| t > 0 && count >= t;
        if hit(self.halt) {
            Action::Halt
        } else if hit(self.block) {
            Action::Block
        } else if hit(self.warn) {
            Action::Warn
        } else {
            Action::Continue
        }
    }

    /// The smallest count that does something (`u32::MAX` when off).
    pub(crate) fn first(&self) -> u32 {
        [self.warn, self.block, self.halt]
            .into_iter()
            .filter(|&t| t > 0)
            .min()
            .unwrap_or(u32::MAX)
    }

    pub(crate) fn is_off(&self) -> bool {
        self.warn == 0 && self.block == 0 && self.halt == 0
    }

    fn check(&self, field: &'static str, hi: u32) -> Result<(), ConfigError> {
        check_off_or(field, self.warn, 1, hi)?;
        check_off_or(field, self.block, 1, hi)?;
        check_off_or(field, self.halt, 1, hi)
    }
}

/// How the guard treats one tool, by exact name.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolPolicy {
    /// Never checked (calls are still recorded for cycles of other tools).
    pub exempt: bool,
    /// Called again and again by design (status, logs, queues): identical arguments are never
    /// evidence; only identical results or errors are.
    pub poller: bool,
    /// Its success is progress (write, edit, patch): failure streaks of every tool restart.
    pub progress: bool,
    /// Fails as part of normal work (a test runner, a linter): its errors are not dead ends.
    pub failure_tolerant: bool,
    /// Its arguments are a shell command line (`{"command": "..."}`): the guard reads what
    /// the command does (see `AgentSettings::shell_tools`).
    pub shell: bool,
    /// Argument keys that change on every call and are not part of its identity.
    pub ignored_fields: Vec<String>,
    /// Thresholds of the repeated-call rules (identical and interleaved) for this tool, when
    /// it may repeat more (or less) than others.
    pub repeats: Option<Thresholds>,
}

/// A named starting point for [`AgentSettings`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgentPreset {
    /// Ours: warns on repeated arguments, blocks only on evidence of no progress.
    Default,
    /// gemini-cli: 5 identical calls (or 5 turns of a cycle of up to 5 calls) in a row on
    /// uncanonicalised arguments, and content chanting (a 50-character chunk 10 times close
    /// together); the first detection warns, the second halts.
    GeminiCli,
    /// OpenHands' stuck detector: 4 identical action+observation pairs, 3 identical failing
    /// actions, 3 identical agent messages with no action, an A/B alternation over 6 steps.
    OpenHands,
    /// Roo Code: the 4th identical consecutive call (key order ignored) is blocked, then the
    /// count starts again.
    RooCode,
    /// Cline: 3 identical consecutive calls warn and 5 halt (`task_progress` ignored); the same
    /// file read 3 times within 5 calls warns; 15,000 characters of text and 60 s without a
    /// tool halt.
    Cline,
}

impl AgentPreset {
    /// Looks a preset up by name (`default`, `gemini_cli`, `openhands`, `roo_code`, `cline`;
    /// `-` and `_` are interchangeable).
    pub fn from_name(name: &str) -> Option<AgentPreset> {
        match name.replace('-', "_").as_str() {
            "default" => Some(AgentPreset::Default),
            "gemini_cli" | "gemini" => Some(AgentPreset::GeminiCli),
            "openhands" => Some(AgentPreset::OpenHands),
            "roo_code" | "roo" => Some(AgentPreset::RooCode),
            "cline" => Some(AgentPreset::Cline),
            _ => None,
        }
    }

    /// The canonical name.
    pub fn name(self) -> &'static str {
        match self {
            AgentPreset::Default => "default",
            AgentPreset::GeminiCli => "gemini_cli",
            AgentPreset::OpenHands => "openhands",
            AgentPreset::RooCode => "roo_code",
            AgentPreset::Cline => "cline",
        }
    }
}

/// Every threshold of an agent guard, as plain data.
///
/// Counts include the current event: `identical.warn = 3` warns on the third identical call.
/// Start from [`AgentSettings::default`] or [`AgentSettings::preset`], change what you need,
/// then validate with [`AgentConfig::new`].
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentSettings {
    /// Calls remembered for window rules, cycles and evidence. `8..=1024`.
    pub window: u32,
    /// Sort object keys and read `1.0` as `1` before comparing arguments.
    pub canonical_args: bool,
    /// Argument keys ignored for every tool, at any depth (request ids, timestamps, cursors).
    pub ignored_fields: Vec<String>,
    /// The same call (tool and arguments) back to back.
    pub identical: Thresholds,
    /// The same call within the last `interleaved_window` calls, with no new result in between.
    pub interleaved: Thresholds,
    /// Calls looked back over by `interleaved`. `2..=window`.
    pub interleaved_window: u32,
    /// Shortest and longest cycle, in calls. `1..=8`, `cycle_min <= cycle_max`.
    pub cycle_min: u32,
    /// See `cycle_min`.
    pub cycle_max: u32,
    /// Full turns of a cycle, back to back (period `k` fires at `k × turns + cycle_tail` calls).
    /// With `same_error` on, a longer cycle through a failure also warns: the same failure,
    /// then three calls repeating, with the same results, those made after it last time.
    pub cycle: Thresholds,
    /// Extra calls after the last full turn before a cycle counts (`1`: A B A B A).
    pub cycle_tail: u32,
    /// The same tool failing with the same error fingerprint, whatever the arguments, within
    /// `error_window` calls.
    pub same_error: Thresholds,
    /// Calls looked back over by `same_error` and `whack_a_mole`. `2..=window`.
    pub error_window: u32,
    /// Errors of one tool alternating between two fingerprints (A B A B), counted in errors.
    pub whack_a_mole: Thresholds,
    /// Calls to one tool whose arguments are near duplicates (digits folded, Jaccard of leaf
    /// features ≥ `near_similarity`) within `near_window` calls, with no result changing.
    pub near_duplicate: Thresholds,
    /// Similarity that makes two argument sets near duplicates. `0.1..=1`.
    pub near_similarity: f32,
    /// Calls looked back over by `near_duplicate` and `same_result`. `2..=window`.
    pub near_window: u32,
    /// The same call back to back with the same result each time (counted at the result).
    pub no_progress: Thresholds,
    /// The same call back to back failing with the same error each time.
    pub failing_repeats: Thresholds,
    /// One tool returning the same result for different arguments within `near_window` calls.
    pub same_result: Thresholds,
    /// Results shorter than this (trimmed bytes, e.g. `ok`) never count as the same result.
    pub same_result_min_len: u32,
    /// Assistant messages or thoughts whose topic words overlap (Jaccard ≥
    /// `semantic_similarity`) within the last `semantic_window` of them.
    pub semantic_repeat: Thresholds,
    /// Token-set Jaccard that makes two messages repeats. `0.1..=1`.
    pub semantic_similarity: f32,
    /// Messages looked back over by `semantic_repeat`. `2..=64`.
    pub semantic_window: u32,
    /// Identical assistant messages with no tool call between them.
    pub identical_messages: Thresholds,
    /// Assistant messages in a row with no tool call.
    pub monologue: Thresholds,
    /// Returns of the state fingerprint to an earlier value two steps back (A B A).
    pub oscillation: Thresholds,
    /// Text degeneration inside assistant messages, by the stream engine. `None`: off.
    pub message_text: Option<StreamSettings>,
    /// What a halt of the message-text stream guard becomes. `Continue` turns it off.
    pub message_text_action: Action,
    /// gemini-cli's content-chanting rule over streamed assistant text. `None`: off.
    pub chant: Option<ChantSettings>,
    /// Characters of assistant text since the last tool activity that, together with
    /// `runaway_ms`, halt. `0`: off.
    pub runaway_chars: u32,
    /// Milliseconds since the last tool activity (by the caller's clock) for `runaway_chars`.
    pub runaway_ms: u32,
    /// What runaway text does: `Warn`, `Block` or `Halt`.
    pub runaway_action: Action,
    /// A changed result for the same call is progress and clears the repeated-call rules
    /// (off for peers that look at arguments only).
    pub results_are_progress: bool,
    /// The most that arguments alone (no results, or results not yet known) can do.
    pub args_only_cap: Action,
    /// After a block, the identical-call count starts again (Roo Code).
    pub reset_after_block: bool,
    /// Halt at this many detections in the scope (`0`: off). gemini-cli halts at the second.
    pub halt_after_strikes: u32,
    /// Halt when this many calls were blocked in the scope and the agent goes on (`0`: off).
    pub halt_after_blocks: u32,
    /// A user message starts a new scope: counts, windows and strikes restart.
    pub user_resets_scope: bool,
    /// Tool names (ASCII case ignored, substring) whose success is progress. Exact-name
    /// policies in `tools` override them.
    pub progress_patterns: Vec<String>,
    /// Tools whose arguments are a shell command line (exact names, ASCII case ignored; a
    /// policy's `shell` adds one). For these the guard reads the command: one that writes
    /// files (a redirection, a heredoc, `sed -i`, `git apply`, `mv`, an install) is progress
    /// when it succeeds and is not a repeat of an earlier write; the same read or test run
    /// after such a write is a fresh observation, not a repeat; and the per-tool rules (same
    /// error, same result, near duplicates) take the command's program (`javac`, `grep`) as
    /// the tool.
    pub shell_tools: Vec<String>,
    /// Replies the agent's harness rejected in a row (no tool call, or several): see
    /// [`AgentGuard::reject`](crate::AgentGuard::reject).
    pub rejected_replies: Thresholds,
    /// Failures of one tool in a row, whatever the errors, since its last success and the
    /// last write (within `error_window` calls). Off by default: on the coding-agent runs it
    /// caught one more labelled loop at 4 and warned one more run that resolved its task.
    pub failure_streak: Thresholds,
    /// Questions to the user (a tool named for it: `ask_followup_question`,
    /// `AskUserQuestion`, `request_user_input`, …) since the last write: an agent asking
    /// instead of working. Warns at the fifth by default, past one round of clarification
    /// (Claude Code's tool takes at most four questions at once).
    pub question_streak: Thresholds,
    /// Per-tool policies, by exact tool name.
    pub tools: HashMap<String, ToolPolicy>,
}

impl Default for AgentSettings {
    fn default() -> AgentSettings {
        AgentSettings::preset(AgentPreset::Default)
    }
}

impl AgentSettings {
    /// The settings of a preset.
    pub fn preset(preset: AgentPreset) -> AgentSettings {
        let ours = AgentSettings {
            window: 32,
            canonical_args: true,
            ignored_fields: [
                "request_id",
                "requestId",
                "timestamp",
                "trace_id",
                "nonce",
                "cursor",
                "task_progress",
            ]
            .map(String::from)
            .to_vec(),
            identical: Thresholds::new(3, 4, 0),
            interleaved: Thresholds::new(3, 5, 0),
            // Three times in five calls with nothing new learnt in between. Wider windows
            // catch an agent re-reading its anchor file while it explores.
            interleaved_window: 5,
            cycle_min: 2,
            cycle_max: 5,
            cycle: Thresholds::new(2, 3, 0),
            cycle_tail: 1,
            same_error: Thresholds::new(3, 5, 0),
            error_window: 15,
            whack_a_mole: Thresholds::new(4, 6, 0),
            no_progress: Thresholds::OFF,
            failing_repeats: Thresholds::OFF,
            near_duplicate: Thresholds::new(3, 0, 0),
            near_similarity: 0.8,
            near_window: 10,
            same_result: Thresholds::new(3, 0, 0),
            same_result_min_len: 8,
            semantic_repeat: Thresholds::new(3, 0, 0),
            semantic_similarity: 0.65,
            semantic_window: 8,
            identical_messages: Thresholds::new(3, 0, 0),
            monologue: Thresholds::new(6, 0, 0),
            oscillation: Thresholds::new(2, 3, 0),
            // Outside code fences. The chanting rule below catches short chants; the stream
            // engine catches long ones and character runs. Structured output (JSON arrays,
            // numbered lists) repeats lines with counters by design, so lines never halt.
            message_text: Some(StreamSettings {
                halt_span: 400,
                line_halt_copies: 0,
                // A message repeated whole is judged by the rules above; coverage only warns.
                near_halt: 0.0,
                ..StreamSettings::default()
            }),
            message_text_action: Action::Warn,
            chant: Some(ChantSettings::default()),
            runaway_chars: 15_000,
            runaway_ms: 60_000,
            runaway_action: Action::Warn,
            results_are_progress: true,
            args_only_cap: Action::Warn,
            reset_after_block: false,
            halt_after_strikes: 0,
            halt_after_blocks: 3,
            user_resets_scope: true,
            progress_patterns: [
                "write", "edit", "patch", "replace", "create", "apply", "insert", "rename", "move",
                "delete",
            ]
            .map(String::from)
            .to_vec(),
            shell_tools: [
                "bash",
                "sh",
                "zsh",
                "shell",
                "terminal",
                "execute_command",
                "execute_bash",
                "run_terminal_cmd",
                "run_command",
                "run_shell_command",
                "shell_exec",
                "local_shell",
                "exec_command",
            ]
            .map(String::from)
            .to_vec(),
            rejected_replies: REJECTED_REPLIES,
            failure_streak: Thresholds::OFF,
            question_streak: Thresholds::new(5, 0, 0),
            tools: HashMap::new(),
        };
        // Peers' presets turn off what the peer lacks, then set what it has.
        let bare = AgentSettings {
            ignored_fields: Vec::new(),
            identical: Thresholds::OFF,
            interleaved: Thresholds::OFF,
            cycle: Thresholds::OFF,
            cycle_tail: 0,
            same_error: Thresholds::OFF,
            whack_a_mole: Thresholds::OFF,
            near_duplicate: Thresholds::OFF,
            same_result: Thresholds::OFF,
            semantic_repeat: Thresholds::OFF,
            identical_messages: Thresholds::OFF,
            monologue: Thresholds::OFF,
            oscillation: Thresholds::OFF,
            message_text: None,
            chant: None,
            runaway_chars: 0,
            runaway_ms: 0,
            results_are_progress: false,
            args_only_cap: Action::Halt,
            halt_after_blocks: 0,
            user_resets_scope: false,
            progress_patterns: Vec::new(),
            shell_tools: Vec::new(),
            rejected_replies: Thresholds::OFF,
            failure_streak: Thresholds::OFF,
            question_streak: Thresholds::OFF,
            ..ours.clone()
        };
        match preset {
            AgentPreset::Default => ours,
            AgentPreset::GeminiCli => AgentSettings {
                canonical_args: false,
                cycle_min: 1,
                cycle_max: 5,
                cycle: Thresholds::new(5, 0, 0),
                chant: Some(ChantSettings::default()),
                halt_after_strikes: 2,
                user_resets_scope: true,
                ..bare
            },
            AgentPreset::OpenHands => AgentSettings {
                // Its stuck detector answers "stuck" (a halt) on each pattern.
                identical: Thresholds::OFF,
                cycle_min: 2,
                cycle_max: 2,
                cycle: Thresholds::new(0, 0, 3),
                same_error: Thresholds::OFF,
                no_progress: Thresholds::new(0, 0, 4),
                failing_repeats: Thresholds::new(0, 0, 3),
                identical_messages: Thresholds::new(0, 0, 3),
                ..bare
            },
            AgentPreset::RooCode => AgentSettings {
                identical: Thresholds::new(0, 4, 0),
                reset_after_block: true,
                ..bare
            },
            AgentPreset::Cline => AgentSettings {
                ignored_fields: vec!["task_progress".into()],
                identical: Thresholds::new(3, 0, 5),
                near_duplicate: Thresholds::new(3, 0, 0),
                near_similarity: 1.0,
                near_window: 5,
                runaway_chars: 15_000,
                runaway_ms: 60_000,
                runaway_action: Action::Halt,
                ..bare
            },
        }
    }

    /// Sets or replaces the policy of one tool.
    pub fn tool(&mut self, name: &str, policy: ToolPolicy) -> &mut AgentSettings {
        self.tools.insert(name.to_owned(), policy);
        self
    }

    /// Checks every field; the error names the first one out of range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_u32("window", self.window, 8, MAX_AGENT_WINDOW)?;
        check_patterns("ignored_fields", &self.ignored_fields)?;
        let big = 1_000_000;
        self.identical.check("identical", big)?;
        self.interleaved.check("interleaved", self.window)?;
        check_u32(
            "interleaved_window",
            self.interleaved_window,
            2,
            self.window,
        )?;
        check_u32("cycle_min", self.cycle_min, 1, 8)?;
        check_u32("cycle_max", self.cycle_max, self.cycle_min, 8)?;
        self.cycle.check("cycle", 1000)?;
        check_u32("cycle_tail", self.cycle_tail, 0, 8)?;
        self.same_error.check("same_error", self.window)?;
        check_u32("error_window", self.error_window, 2, self.window)?;
        self.whack_a_mole.check("whack_a_mole", self.window)?;
        self.no_progress.check("no_progress", big)?;
        self.failing_repeats.check("failing_repeats", big)?;
        self.near_duplicate.check("near_duplicate", self.window)?;
        check_f32("near_similarity", self.near_similarity, 0.1, 1.0)?;
        check_u32("near_window", self.near_window, 2, self.window)?;
        self.same_result.check("same_result", self.window)?;
        check_u32("same_result_min_len", self.same_result_min_len, 0, 1 << 20)?;
        self.semantic_repeat.check("semantic_repeat", 64)?;
        check_f32("semantic_similarity", self.semantic_similarity, 0.1, 1.0)?;
        check_u32("semantic_window", self.semantic_window, 2, 64)?;
        self.identical_messages.check("identical_messages", big)?;
        self.monologue.check("monologue", big)?;
        self.oscillation.check("oscillation", big)?;
        if let Some(m) = &self.message_text {
            m.validate().map_err(|e| ConfigError {
                field: format!("message_text.{}", e.field).into(),
                ..e
            })?;
        }
        if let Some(c) = &self.chant {
            check_u32("chant.chunk", c.chunk, 8, 1000)?;
            check_u32("chant.threshold", c.threshold, 2, 1000)?;
            check_u32("chant.spread", c.spread, 1, 100)?;
            check_u32("chant.history", c.history, c.chunk, 1_000_000)?;
        }
        if (self.runaway_chars == 0) != (self.runaway_ms == 0) {
            return Err(ConfigError {
                field: "runaway_ms".into(),
                value: self.runaway_ms.to_string(),
                allowed: "0 exactly when runaway_chars is 0".into(),
            });
        }
        if self.runaway_action < Action::Warn {
            return Err(ConfigError {
                field: "runaway_action".into(),
                value: self.runaway_action.as_str().into(),
                allowed: "warn, block or halt".into(),
            });
        }
        // Ending a reasoning section is a stream guard's answer: no agent rule gives it.
        for (field, a) in [
            ("runaway_action", self.runaway_action),
            ("message_text_action", self.message_text_action),
            ("args_only_cap", self.args_only_cap),
        ] {
            if a == Action::EndReasoning {
                return Err(ConfigError {
                    field: field.into(),
                    value: a.as_str().into(),
                    allowed: "continue, warn, block or halt".into(),
                });
            }
        }
        check_off_or("halt_after_strikes", self.halt_after_strikes, 1, big)?;
        check_off_or("halt_after_blocks", self.halt_after_blocks, 1, big)?;
        check_patterns("progress_patterns", &self.progress_patterns)?;
        check_patterns("shell_tools", &self.shell_tools)?;
        self.rejected_replies.check("rejected_replies", big)?;
        self.failure_streak.check("failure_streak", self.window)?;
        self.question_streak.check("question_streak", self.window)?;
        if self.tools.len() > 4096 {
            return Err(ConfigError {
                field: "tools".into(),
                value: format!("{} policies", self.tools.len()),
                allowed: "at most 4096 tool policies".into(),
            });
        }
        for p in self.tools.values() {
            check_patterns("tools.ignored_fields", &p.ignored_fields)?;
            if let Some(t) = &p.repeats {
                t.check("tools.repeats", big)?;
            }
        }
        Ok(())
    }
}

/// Validated, immutable agent settings, shared by reference count. Cheap to clone.
#[derive(Clone, Debug)]
pub struct AgentConfig {
    pub(crate) inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) settings: AgentSettings,
    pub(crate) progress: Option<AhoCorasick>,
    pub(crate) message: Option<StreamConfig>,
}

impl Default for AgentConfig {
    fn default() -> AgentConfig {
        AgentConfig::preset(AgentPreset::Default)
    }
}

impl AgentConfig {
    /// Validates `settings` and builds what guards share.
    pub fn new(settings: &AgentSettings) -> Result<AgentConfig, ConfigError> {
        settings.validate()?;
        let progress = if settings.progress_patterns.is_empty() {
            None
        } else {
            let ac = AhoCorasickBuilder::new()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::LeftmostFirst)
                .build(&settings.progress_patterns)
                .map_err(|e| ConfigError {
                    field: "progress_patterns".into(),
                    value: e.to_string(),
                    allowed: "patterns aho-corasick can build".into(),
                })?;
            Some(ac)
        };
        let message = match &settings.message_text {
            Some(m) => Some(StreamConfig::new(m)?),
            None => None,
        };
        Ok(AgentConfig {
            inner: Arc::new(Inner {
                settings: settings.clone(),
                progress,
                message,
            }),
        })
    }

    /// The validated configuration of a preset.
    pub fn preset(preset: AgentPreset) -> AgentConfig {
        AgentConfig::new(&AgentSettings::preset(preset)).expect("presets are valid")
    }

    /// The settings this configuration was built from.
    pub fn settings(&self) -> &AgentSettings {
        &self.inner.settings
    }
}
