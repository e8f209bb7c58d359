//! `lg_agent`: one agent session's guard.

use std::cell::{Cell, UnsafeCell};
use std::ffi::{c_char, c_void};

use super::*;
use crate::{
    AgentConfig, AgentGuard, AgentLoopKind, AgentPreset, AgentSettings, AgentVerdict,
    ChantSettings, Thresholds, ToolPolicy,
};

/// A named starting point for `lg_agent_config`. Values are only appended.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum lg_agent_preset {
    /// Ours: warns on repeated arguments, blocks only on evidence of no progress.
    LG_AGENT_PRESET_DEFAULT = 0,
    /// gemini-cli's loop detection.
    LG_AGENT_PRESET_GEMINI_CLI = 1,
    /// OpenHands' stuck detector.
    LG_AGENT_PRESET_OPENHANDS = 2,
    /// Roo Code's repetition limit.
    LG_AGENT_PRESET_ROO_CODE = 3,
    /// Cline's loop detection.
    LG_AGENT_PRESET_CLINE = 4,
}

/// The kind of agent loop (`lg_agent_verdict.kind`). Values are only appended.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum lg_agent_kind {
    /// No loop.
    LG_AGENT_KIND_NONE = 0,
    /// The same call, back to back or interleaved.
    LG_AGENT_KIND_IDENTICAL_CALL = 1,
    /// A cycle of calls repeated back to back.
    LG_AGENT_KIND_CYCLE = 2,
    /// The same call returning the same result again and again.
    LG_AGENT_KIND_NO_PROGRESS = 3,
    /// One tool failing with the same error whatever the arguments.
    LG_AGENT_KIND_SAME_ERROR = 4,
    /// Two errors taking turns.
    LG_AGENT_KIND_WHACK_A_MOLE = 5,
    /// Calls whose arguments differ only a little.
    LG_AGENT_KIND_NEAR_DUPLICATE = 6,
    /// One tool returning the same result for different arguments.
    LG_AGENT_KIND_SAME_RESULT = 7,
    /// Messages or thoughts that say the same thing.
    LG_AGENT_KIND_SEMANTIC_REPEAT = 8,
    /// Identical assistant messages with no tool call between them.
    LG_AGENT_KIND_IDENTICAL_MESSAGES = 9,
    /// Assistant messages one after another with no tool call.
    LG_AGENT_KIND_MONOLOGUE = 10,
    /// The state fingerprint going back and forth.
    LG_AGENT_KIND_OSCILLATION = 11,
    /// Degenerate text inside a message.
    LG_AGENT_KIND_TEXT_DEGENERATION = 12,
    /// A chunk of streamed text repeated close together.
    LG_AGENT_KIND_CONTENT_CHANTING = 13,
    /// Long text with no tool activity for a long time.
    LG_AGENT_KIND_RUNAWAY_TEXT = 14,
    /// Replies the harness rejected, one after another (`lg_agent_reject`).
    LG_AGENT_KIND_REJECTED_REPLIES = 15,
    /// One tool failing again and again, whatever the errors.
    LG_AGENT_KIND_FAILURE_STREAK = 16,
    /// Questions to the user one after another, with nothing written between.
    LG_AGENT_KIND_QUESTION_STREAK = 17,
}

/// `lg_tool_policy.flags` bits.
pub const LG_TOOL_EXEMPT: u32 = 1;
/// Called again and again by design: only identical results or errors are evidence.
pub const LG_TOOL_POLLER: u32 = 2;
/// Its success is progress: failure streaks restart.
pub const LG_TOOL_PROGRESS: u32 = 4;
/// Fails as part of normal work: its errors are not dead ends.
pub const LG_TOOL_FAILURE_TOLERANT: u32 = 8;
/// `lg_tool_policy.repeats` replaces the repeated-call thresholds for this tool.
pub const LG_TOOL_OWN_REPEATS: u32 = 16;
/// Its arguments are a shell command line: the guard reads what the command does (writes
/// files or only reads and runs), as for the names in `lg_agent_config.shell_tools`.
pub const LG_TOOL_SHELL: u32 = 32;

/// Counts at which one rule warns, blocks and halts; 0 = never.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct lg_thresholds {
    /// Count that warns.
    pub warn: u32,
    /// Count that blocks.
    pub block: u32,
    /// Count that halts.
    pub halt: u32,
}

/// How the guard treats one tool, by exact name.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct lg_tool_policy {
    /// The tool's name.
    pub name: lg_str,
    /// `LG_TOOL_*` bits.
    pub flags: u32,
    /// Argument keys ignored for this tool (may be NULL when the length is 0).
    pub ignored_fields: *const lg_str,
    /// Number of ignored fields.
    pub ignored_fields_len: usize,
    /// The tool's own thresholds for repeated calls, used with `LG_TOOL_OWN_REPEATS`.
    pub repeats: lg_thresholds,
}

/// Every threshold of an agent guard. Fill it with `lg_agent_config_init` or `_preset`,
/// change fields, pass it to `lg_agent_new`, which copies it (strings included). Fields are
/// only appended; the library reads `min(struct_size, sizeof)` bytes and defaults the rest.
/// Counts include the current event. Field meanings are those of `AgentSettings` in the Rust
/// documentation.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct lg_agent_config {
    /// `sizeof(lg_agent_config)` as the caller knows it (set by the init functions).
    pub struct_size: usize,
    /// The `lg_agent_preset` the fields were filled from: its lists (ignored fields, progress
    /// patterns) apply while the list pointers below are NULL.
    pub preset: i32,
    /// Calls remembered (8..=1024).
    pub window: u32,
    /// 1: sort object keys and read 1.0 as 1 before comparing arguments.
    pub canonical_args: u8,
    /// 1: a changed result for the same call is progress.
    pub results_are_progress: u8,
    /// 1: after a block the identical-call count starts again.
    pub reset_after_block: u8,
    /// 1: a user turn starts a new scope.
    pub user_resets_scope: u8,
    /// The same call back to back.
    pub identical: lg_thresholds,
    /// The same call within `interleaved_window` calls, nothing new learnt in between.
    pub interleaved: lg_thresholds,
    /// Calls looked back over by `interleaved`.
    pub interleaved_window: u32,
    /// Shortest cycle, in calls (1..=8).
    pub cycle_min: u32,
    /// Longest cycle, in calls (cycle_min..=8).
    pub cycle_max: u32,
    /// Full turns of a cycle.
    pub cycle: lg_thresholds,
    /// Extra calls after the last full turn.
    pub cycle_tail: u32,
    /// One tool failing with the same error whatever the arguments.
    pub same_error: lg_thresholds,
    /// Calls looked back over by `same_error` and `whack_a_mole`.
    pub error_window: u32,
    /// Errors alternating between two fingerprints.
    pub whack_a_mole: lg_thresholds,
    /// The same call back to back with the same result.
    pub no_progress: lg_thresholds,
    /// The same call back to back failing the same way.
    pub failing_repeats: lg_thresholds,
    /// Near-duplicate arguments.
    pub near_duplicate: lg_thresholds,
    /// Similarity that makes arguments near duplicates (0.1..=1).
    pub near_similarity: f32,
    /// Calls looked back over by `near_duplicate` and `same_result`.
    pub near_window: u32,
    /// One tool returning the same result for different arguments.
    pub same_result: lg_thresholds,
    /// Results shorter than this never count as the same result.
    pub same_result_min_len: u32,
    /// Messages or thoughts that repeat each other.
    pub semantic_repeat: lg_thresholds,
    /// Token-set Jaccard that makes two messages repeats (0.1..=1).
    pub semantic_similarity: f32,
    /// Messages looked back over by `semantic_repeat` (2..=64).
    pub semantic_window: u32,
    /// Identical assistant messages with no tool call between them.
    pub identical_messages: lg_thresholds,
    /// Assistant messages in a row with no tool call.
    pub monologue: lg_thresholds,
    /// Returns of the state fingerprint to an earlier value.
    pub oscillation: lg_thresholds,
    /// Halt span, in words, of the stream engine over message text; 0 = text check off.
    pub message_text_span: u32,
    /// What a halt of the message-text check becomes (an `lg_action`).
    pub message_text_action: u8,
    /// The most arguments alone can do (an `lg_action`).
    pub args_only_cap: u8,
    /// What runaway text does (an `lg_action`).
    pub runaway_action: u8,
    /// 1: gemini-cli's content-chanting rule is on.
    pub chant: u8,
    /// Characters per chanting chunk.
    pub chant_chunk: u32,
    /// Sightings of a chunk that make a loop.
    pub chant_threshold: u32,
    /// Maximum mean distance between sightings, in chunks.
    pub chant_spread: u32,
    /// Characters of chanting history kept.
    pub chant_history: u32,
    /// Characters without tool activity that, with `runaway_ms`, make runaway text; 0 = off.
    pub runaway_chars: u32,
    /// Milliseconds without tool activity for `runaway_chars`.
    pub runaway_ms: u32,
    /// Halt at this many detections in the scope; 0 = off.
    pub halt_after_strikes: u32,
    /// Halt when this many calls were blocked and the agent goes on; 0 = off.
    pub halt_after_blocks: u32,
    /// Argument keys ignored for every tool, replacing the preset's list when not NULL.
    pub ignored_fields: *const lg_str,
    /// Number of ignored fields (at most 64).
    pub ignored_fields_len: usize,
    /// Tool-name patterns whose success is progress, replacing the preset's when not NULL.
    pub progress_patterns: *const lg_str,
    /// Number of progress patterns (at most 64).
    pub progress_patterns_len: usize,
    /// Per-tool policies (may be NULL when the length is 0).
    pub tools: *const lg_tool_policy,
    /// Number of tool policies (at most 4096).
    pub tools_len: usize,
    /// Replies rejected in a row (`lg_agent_reject`).
    pub rejected_replies: lg_thresholds,
    /// Names of tools whose arguments are shell command lines, replacing the preset's list
    /// (`bash`, `sh`, `shell`, `execute_command`, `run_terminal_cmd`, ...) when not NULL.
    pub shell_tools: *const lg_str,
    /// Number of shell tool names (at most 64).
    pub shell_tools_len: usize,
    /// Failures of one tool in a row, whatever the errors.
    pub failure_streak: lg_thresholds,
    /// Questions to the user since the last write.
    pub question_streak: lg_thresholds,
}

// The string pointers are only read during the call that receives the struct.
unsafe impl Send for lg_agent_config {}
unsafe impl Sync for lg_agent_config {}

/// The answer to an agent event. Set `struct_size` to `sizeof(lg_agent_verdict)` first.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct lg_agent_verdict {
    /// `sizeof(lg_agent_verdict)` as the caller knows it.
    pub struct_size: usize,
    /// An `lg_action`: continue, warn, block (do not run this call) or halt.
    pub action: lg_action,
    /// An `lg_agent_kind`.
    pub kind: lg_agent_kind,
    /// What the evidence rests on: 0 none, 1 repeated arguments, 2 no progress, 3 repeated
    /// failure, 4 text, 5 state, 6 fixes that miss: a failure each edit between left as it
    /// was, or failures edits brought back (appended in 0.1).
    pub reason: u8,
    /// What to do: 0 nothing, 1 replan, 2 backtrack, 3 escalate.
    pub recommendation: u8,
    /// 1 when the call's arguments were not valid JSON.
    pub args_invalid: u8,
    /// How many times the pattern occurred.
    pub count: u32,
    /// Calls per turn for cycles (1 for identical calls), 0 otherwise.
    pub period: u32,
    /// Detections so far in this scope: the rung on the escalation ladder.
    pub strikes: u32,
    /// How sure the guard is, in [0, 1].
    pub confidence: f32,
    /// Index of the event that produced this verdict.
    pub step: u64,
    /// Number of evidence steps (`lg_agent_evidence` copies them).
    pub evidence_len: u64,
}

/// Counters of an agent session. Set `struct_size` first.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct lg_agent_stats {
    /// `sizeof(lg_agent_stats)` as the caller knows it.
    pub struct_size: usize,
    /// Events checked.
    pub checks: u64,
    /// Tool calls seen.
    pub calls: u64,
    /// Verdicts other than continue.
    pub detections: u64,
    /// Warn verdicts.
    pub warnings: u64,
    /// Block verdicts.
    pub blocks: u64,
    /// Halt verdicts.
    pub halts: u64,
    /// Calls whose arguments were not valid JSON.
    pub invalid_args: u64,
    /// Highest strike count reached.
    pub highest_strike: u32,
    /// Detections per `lg_agent_kind`, indexed by its value (a struct from an older header
    /// holds the first 15).
    pub by_kind: [u64; 17],
    /// Replies the harness rejected (`lg_agent_reject`).
    pub rejections: u64,
    /// Detections of the kinds from 17 on (`LG_AGENT_KIND_QUESTION_STREAK`, …), indexed by the
    /// kind's value less 17: `by_kind` was laid out before them.
    pub by_kind_late: [u64; 15],
}

/// Called synchronously from an agent event: `on_warn` on every warn or block verdict (each is
/// a nudge to pass on), `on_halt` once when the session halts. `verdict` is valid only during
/// the call. The rules of `lg_verdict_callback` apply.
pub type lg_agent_callback =
    Option<unsafe extern "C" fn(user_data: *mut c_void, verdict: *const lg_agent_verdict)>;

#[derive(Clone, Copy)]
struct AgentCallbacks {
    on_warn: lg_agent_callback,
    on_halt: lg_agent_callback,
    user_data: *mut c_void,
}

// The user data is the caller's; moving a handle to another thread moves the promise with it.
unsafe impl Send for AgentCallbacks {}

/// One agent session's guard. Opaque: create with `lg_agent_new`, free with `lg_agent_free`.
/// Safe to move between threads, not for concurrent use.
pub struct lg_agent {
    guard: UnsafeCell<AgentGuard>,
    state: HandleState,
    callbacks: Cell<AgentCallbacks>,
}

fn thresholds_to_c(t: Thresholds) -> lg_thresholds {
    lg_thresholds {
        warn: t.warn,
        block: t.block,
        halt: t.halt,
    }
}

fn thresholds_from_c(t: lg_thresholds) -> Thresholds {
    Thresholds::new(t.warn, t.block, t.halt)
}

fn action_from_c(field: &str, a: u8) -> Result<Action, Fail> {
    match a {
        0 => Ok(Action::Continue),
        1 => Ok(Action::Warn),
        2 => Ok(Action::Block),
        3 => Ok(Action::Halt),
        _ => Err(Fail::new(
            LG_ERR_CONFIG,
            format!("invalid {field} = {a}: allowed an lg_action (0..=3)"),
        )),
    }
}

fn agent_config_from_settings(s: &AgentSettings, preset: i32) -> lg_agent_config {
    let chant = s.chant.clone().unwrap_or_default();
    lg_agent_config {
        struct_size: std::mem::size_of::<lg_agent_config>(),
        preset,
        window: s.window,
        canonical_args: s.canonical_args as u8,
        results_are_progress: s.results_are_progress as u8,
        reset_after_block: s.reset_after_block as u8,
        user_resets_scope: s.user_resets_scope as u8,
        identical: thresholds_to_c(s.identical),
        interleaved: thresholds_to_c(s.interleaved),
        interleaved_window: s.interleaved_window,
        cycle_min: s.cycle_min,
        cycle_max: s.cycle_max,
        cycle: thresholds_to_c(s.cycle),
        cycle_tail: s.cycle_tail,
        same_error: thresholds_to_c(s.same_error),
        error_window: s.error_window,
        whack_a_mole: thresholds_to_c(s.whack_a_mole),
        no_progress: thresholds_to_c(s.no_progress),
        failing_repeats: thresholds_to_c(s.failing_repeats),
        near_duplicate: thresholds_to_c(s.near_duplicate),
        near_similarity: s.near_similarity,
        near_window: s.near_window,
        same_result: thresholds_to_c(s.same_result),
        same_result_min_len: s.same_result_min_len,
        semantic_repeat: thresholds_to_c(s.semantic_repeat),
        semantic_similarity: s.semantic_similarity,
        semantic_window: s.semantic_window,
        identical_messages: thresholds_to_c(s.identical_messages),
        monologue: thresholds_to_c(s.monologue),
        oscillation: thresholds_to_c(s.oscillation),
        message_text_span: s.message_text.as_ref().map_or(0, |m| m.halt_span.max(1)),
        message_text_action: action_to_c(s.message_text_action) as u8,
        args_only_cap: action_to_c(s.args_only_cap) as u8,
        runaway_action: action_to_c(s.runaway_action) as u8,
        chant: s.chant.is_some() as u8,
        chant_chunk: chant.chunk,
        chant_threshold: chant.threshold,
        chant_spread: chant.spread,
        chant_history: chant.history,
        runaway_chars: s.runaway_chars,
        runaway_ms: s.runaway_ms,
        halt_after_strikes: s.halt_after_strikes,
        halt_after_blocks: s.halt_after_blocks,
        ignored_fields: std::ptr::null(),
        ignored_fields_len: 0,
        progress_patterns: std::ptr::null(),
        progress_patterns_len: 0,
        tools: std::ptr::null(),
        tools_len: 0,
        rejected_replies: thresholds_to_c(s.rejected_replies),
        shell_tools: std::ptr::null(),
        shell_tools_len: 0,
        failure_streak: thresholds_to_c(s.failure_streak),
        question_streak: thresholds_to_c(s.question_streak),
    }
}

/// Reads a caller's config over the defaults.
///
/// # Safety
/// `cfg` points to `struct_size` readable bytes; its arrays are valid.
unsafe fn agent_settings_from_c(cfg: *const lg_agent_config) -> Result<AgentSettings, Fail> {
    let size = struct_size(cfg as *const usize, "lg_agent_config")?;
    let mut c = agent_config_from_settings(&AgentSettings::default(), 0);
    let n = size.min(std::mem::size_of::<lg_agent_config>());
    std::ptr::copy_nonoverlapping(
        cfg as *const u8,
        &mut c as *mut lg_agent_config as *mut u8,
        n,
    );
    let preset = preset_from_c(c.preset).ok_or_else(|| {
        Fail::new(
            LG_ERR_CONFIG,
            format!(
                "invalid preset = {}: allowed an lg_agent_preset (0..=4)",
                c.preset
            ),
        )
    })?;
    let base = AgentSettings::preset(preset);
    let has = |end: usize| size >= end;
    let mut s = AgentSettings {
        window: c.window,
        canonical_args: c.canonical_args != 0,
        results_are_progress: c.results_are_progress != 0,
        reset_after_block: c.reset_after_block != 0,
        user_resets_scope: c.user_resets_scope != 0,
        identical: thresholds_from_c(c.identical),
        interleaved: thresholds_from_c(c.interleaved),
        interleaved_window: c.interleaved_window,
        cycle_min: c.cycle_min,
        cycle_max: c.cycle_max,
        cycle: thresholds_from_c(c.cycle),
        cycle_tail: c.cycle_tail,
        same_error: thresholds_from_c(c.same_error),
        error_window: c.error_window,
        whack_a_mole: thresholds_from_c(c.whack_a_mole),
        no_progress: thresholds_from_c(c.no_progress),
        failing_repeats: thresholds_from_c(c.failing_repeats),
        near_duplicate: thresholds_from_c(c.near_duplicate),
        near_similarity: c.near_similarity,
        near_window: c.near_window,
        same_result: thresholds_from_c(c.same_result),
        same_result_min_len: c.same_result_min_len,
        semantic_repeat: thresholds_from_c(c.semantic_repeat),
        semantic_similarity: c.semantic_similarity,
        semantic_window: c.semantic_window,
        identical_messages: thresholds_from_c(c.identical_messages),
        monologue: thresholds_from_c(c.monologue),
        oscillation: thresholds_from_c(c.oscillation),
        message_text: (c.message_text_span > 0).then(|| StreamSettings {
            halt_span: c.message_text_span,
            line_halt_copies: 0,
            ..StreamSettings::default()
        }),
        message_text_action: action_from_c("message_text_action", c.message_text_action)?,
        chant: (c.chant != 0).then_some(ChantSettings {
            chunk: c.chant_chunk,
            threshold: c.chant_threshold,
            spread: c.chant_spread,
            history: c.chant_history,
        }),
        runaway_chars: c.runaway_chars,
        runaway_ms: c.runaway_ms,
        runaway_action: action_from_c("runaway_action", c.runaway_action)?,
        args_only_cap: action_from_c("args_only_cap", c.args_only_cap)?,
        halt_after_strikes: c.halt_after_strikes,
        halt_after_blocks: c.halt_after_blocks,
        // Fields an older header's struct does not hold keep the preset's values.
        rejected_replies: if has(std::mem::offset_of!(lg_agent_config, rejected_replies) + 12) {
            thresholds_from_c(c.rejected_replies)
        } else {
            base.rejected_replies
        },
        failure_streak: if has(std::mem::offset_of!(lg_agent_config, failure_streak) + 12) {
            thresholds_from_c(c.failure_streak)
        } else {
            base.failure_streak
        },
        question_streak: if has(std::mem::offset_of!(lg_agent_config, question_streak) + 12) {
            thresholds_from_c(c.question_streak)
        } else {
            base.question_streak
        },
        ..base
    };
    if has(std::mem::offset_of!(lg_agent_config, shell_tools_len) + 8)
        && (!c.shell_tools.is_null() || c.shell_tools_len > 0)
    {
        s.shell_tools = strings(c.shell_tools, c.shell_tools_len, "shell_tools")?;
    }
    if has(std::mem::offset_of!(lg_agent_config, ignored_fields_len) + 8)
        && (!c.ignored_fields.is_null() || c.ignored_fields_len > 0)
    {
        s.ignored_fields = strings(c.ignored_fields, c.ignored_fields_len, "ignored_fields")?;
    }
    if has(std::mem::offset_of!(lg_agent_config, progress_patterns_len) + 8)
        && (!c.progress_patterns.is_null() || c.progress_patterns_len > 0)
    {
        s.progress_patterns = strings(
            c.progress_patterns,
            c.progress_patterns_len,
            "progress_patterns",
        )?;
    }
    if has(std::mem::offset_of!(lg_agent_config, tools_len) + 8) {
        if c.tools_len > 4096 {
            return Err(Fail::new(
                LG_ERR_CONFIG,
                format!("tools_len = {}: allowed at most 4096", c.tools_len),
            ));
        }
        let tools = slice(c.tools, c.tools_len).map_err(|_| {
            Fail::new(
                LG_ERR_CONFIG,
                format!("tools is NULL with tools_len = {}", c.tools_len),
            )
        })?;
        for p in tools {
            let name = strings(&p.name, 1, "tools.name")?.remove(0);
            let policy = ToolPolicy {
                exempt: p.flags & LG_TOOL_EXEMPT != 0,
                poller: p.flags & LG_TOOL_POLLER != 0,
                progress: p.flags & LG_TOOL_PROGRESS != 0,
                failure_tolerant: p.flags & LG_TOOL_FAILURE_TOLERANT != 0,
                shell: p.flags & LG_TOOL_SHELL != 0,
                ignored_fields: strings(
                    p.ignored_fields,
                    p.ignored_fields_len,
                    "tools.ignored_fields",
                )?,
                repeats: (p.flags & LG_TOOL_OWN_REPEATS != 0).then(|| thresholds_from_c(p.repeats)),
            };
            s.tools.insert(name, policy);
        }
    }
    Ok(s)
}

unsafe fn agent_config_from_c(cfg: *const lg_agent_config) -> Result<AgentConfig, Fail> {
    let s = agent_settings_from_c(cfg)?;
    AgentConfig::new(&s).map_err(|mut e| {
        // The message-text guard's settings come from one field of the C struct.
        if e.field == "message_text.halt_span" {
            e.field = "message_text_span".into();
        }
        Fail::new(LG_ERR_CONFIG, e.to_string())
    })
}

/// Fills `*config` with our default settings and sets its `struct_size`. O(1).
#[no_mangle]
pub unsafe extern "C" fn lg_agent_config_init(config: *mut lg_agent_config) -> lg_status {
    lg_agent_config_preset(config, lg_agent_preset::LG_AGENT_PRESET_DEFAULT as i32)
}

/// Fills `*config` with a preset (an `lg_agent_preset` value). The preset's lists (ignored
/// fields, progress patterns) apply while the config's list pointers stay NULL.
/// `LG_ERR_INVALID_ARGUMENT` for an unknown preset. O(1).
#[no_mangle]
pub unsafe extern "C" fn lg_agent_config_preset(
    config: *mut lg_agent_config,
    preset: i32,
) -> lg_status {
    boundary(|| {
        if config.is_null() {
            return LG_ERR_NULL;
        }
        let Some(p) = preset_from_c(preset) else {
            return LG_ERR_INVALID_ARGUMENT;
        };
        *config = agent_config_from_settings(&AgentSettings::preset(p), preset);
        LG_OK
    })
}

fn preset_from_c(preset: i32) -> Option<AgentPreset> {
    match preset {
        0 => Some(AgentPreset::Default),
        1 => Some(AgentPreset::GeminiCli),
        2 => Some(AgentPreset::OpenHands),
        3 => Some(AgentPreset::RooCode),
        4 => Some(AgentPreset::Cline),
        _ => None,
    }
}

/// Checks a config; on an invalid one returns `LG_ERR_CONFIG` (`LG_ERR_INVALID_ARGUMENT` for a
/// `struct_size` too small to hold itself) and writes a NUL-terminated message naming the
/// field into `buf` (truncated to fit). Allocates while it runs.
#[no_mangle]
pub unsafe extern "C" fn lg_agent_config_validate(
    config: *const lg_agent_config,
    buf: *mut c_char,
    buf_len: usize,
) -> lg_status {
    boundary(|| {
        if config.is_null() {
            return LG_ERR_NULL;
        }
        validate_into(buf, buf_len, || agent_config_from_c(config).map(drop))
    })
}

/// Creates a guard for one agent session from `*config` (copied) into `*out`.
/// `LG_ERR_CONFIG` for an invalid config. Free it with `lg_agent_free`.
#[no_mangle]
pub unsafe extern "C" fn lg_agent_new(
    config: *const lg_agent_config,
    out: *mut *mut lg_agent,
) -> lg_status {
    boundary(|| {
        if config.is_null() || out.is_null() {
            return LG_ERR_NULL;
        }
        match agent_config_from_c(config) {
            Ok(c) => {
                *out = Box::into_raw(Box::new(lg_agent {
                    guard: UnsafeCell::new(AgentGuard::new(&c)),
                    state: HandleState::new(),
                    callbacks: Cell::new(AgentCallbacks {
                        on_warn: None,
                        on_halt: None,
                        user_data: std::ptr::null_mut(),
                    }),
                }));
                LG_OK
            }
            Err(fail) => fail.status,
        }
    })
}

/// Frees a guard. NULL does nothing, and so does a call from the guard's own callback.
#[no_mangle]
pub unsafe extern "C" fn lg_agent_free(agent: *mut lg_agent) {
    free_handle(agent, |h| &h.state);
}

fn agent_verdict_to_c(v: &AgentVerdict) -> lg_agent_verdict {
    lg_agent_verdict {
        struct_size: std::mem::size_of::<lg_agent_verdict>(),
        action: action_to_c(v.action),
        kind: agent_kind_to_c(v.kind),
        reason: v.reason as u8,
        recommendation: v.recommendation as u8,
        args_invalid: v.args_invalid as u8,
        count: v.count,
        period: v.period,
        strikes: v.strikes,
        confidence: v.confidence,
        step: v.step,
        evidence_len: v.evidence.len() as u64,
    }
}

fn agent_kind_to_c(k: AgentLoopKind) -> lg_agent_kind {
    use lg_agent_kind::*;
    match k {
        AgentLoopKind::None => LG_AGENT_KIND_NONE,
        AgentLoopKind::IdenticalCall => LG_AGENT_KIND_IDENTICAL_CALL,
        AgentLoopKind::Cycle => LG_AGENT_KIND_CYCLE,
        AgentLoopKind::NoProgress => LG_AGENT_KIND_NO_PROGRESS,
        AgentLoopKind::SameError => LG_AGENT_KIND_SAME_ERROR,
        AgentLoopKind::WhackAMole => LG_AGENT_KIND_WHACK_A_MOLE,
        AgentLoopKind::NearDuplicate => LG_AGENT_KIND_NEAR_DUPLICATE,
        AgentLoopKind::SameResult => LG_AGENT_KIND_SAME_RESULT,
        AgentLoopKind::SemanticRepeat => LG_AGENT_KIND_SEMANTIC_REPEAT,
        AgentLoopKind::IdenticalMessages => LG_AGENT_KIND_IDENTICAL_MESSAGES,
        AgentLoopKind::Monologue => LG_AGENT_KIND_MONOLOGUE,
        AgentLoopKind::Oscillation => LG_AGENT_KIND_OSCILLATION,
        AgentLoopKind::TextDegeneration => LG_AGENT_KIND_TEXT_DEGENERATION,
        AgentLoopKind::ContentChanting => LG_AGENT_KIND_CONTENT_CHANTING,
        AgentLoopKind::RunawayText => LG_AGENT_KIND_RUNAWAY_TEXT,
        AgentLoopKind::RejectedReplies => LG_AGENT_KIND_REJECTED_REPLIES,
        AgentLoopKind::FailureStreak => LG_AGENT_KIND_FAILURE_STREAK,
        AgentLoopKind::QuestionStreak => LG_AGENT_KIND_QUESTION_STREAK,
    }
}

impl lg_agent {
    /// Runs one event inside the handle's boundary, fires callbacks, writes the action.
    unsafe fn event(
        a: *mut lg_agent,
        out_action: *mut lg_action,
        f: impl FnOnce(&mut AgentGuard) -> Result<(), Fail>,
    ) -> lg_status {
        boundary(|| {
            let Some(h) = a.as_ref() else {
                return LG_ERR_NULL;
            };
            let r = h.state.run(|| {
                let g = &mut *h.guard.get();
                let before = g.verdict().action;
                f(g)?;
                let v = g.verdict();
                let cbs = h.callbacks.get();
                let cb = match v.action {
                    Action::Halt if before != Action::Halt => cbs.on_halt,
                    Action::Warn | Action::Block => cbs.on_warn,
                    _ => None,
                };
                if let Some(cb) = cb {
                    let cv = agent_verdict_to_c(v);
                    cb(cbs.user_data, &cv);
                }
                Ok(v.action)
            });
            match r {
                Ok(action) => {
                    if !out_action.is_null() {
                        *out_action = action_to_c(action);
                    }
                    LG_OK
                }
                Err(e) => e,
            }
        })
    }

    /// Runs `f` on the guard inside the handle's boundary; returns its status.
    unsafe fn call(
        a: *const lg_agent,
        f: impl FnOnce(&mut AgentGuard) -> Result<(), Fail>,
    ) -> lg_status {
        let Some(h) = a.as_ref() else {
            return LG_ERR_NULL;
        };
        h.state.call(|| f(&mut *h.guard.get()))
    }
}

/// Text from C (the argument `name`, its length `len_name`): bytes, with invalid UTF-8
/// replaced (U+FFFD), never rejected.
unsafe fn text<'a>(
    ptr: *const u8,
    len: usize,
    name: &str,
    len_name: &str,
) -> Result<std::borrow::Cow<'a, str>, Fail> {
    Ok(String::from_utf8_lossy(arg(ptr, len, name, len_name)?))
}

/// A tool call the agent is about to make: the tool's name and its JSON arguments (any bytes;
/// invalid JSON is compared raw and flagged in the verdict). `LG_ACTION_BLOCK` in
/// `*out_action` means: do not run it. O(args_len + window).
#[no_mangle]
pub unsafe extern "C" fn lg_agent_call(
    agent: *mut lg_agent,
    tool: *const u8,
    tool_len: usize,
    args: *const u8,
    args_len: usize,
    out_action: *mut lg_action,
) -> lg_status {
    lg_agent::event(agent, out_action, |g| {
        let tool = text(tool, tool_len, "tool", "tool_len")?;
        g.call(&tool, arg(args, args_len, "args", "args_len")?);
        Ok(())
    })
}

/// The result of the most recent call: its output and its error message, either NULL for none.
/// Results are fingerprinted, never stored. O(output_len + error_len + window).
#[no_mangle]
pub unsafe extern "C" fn lg_agent_result(
    agent: *mut lg_agent,
    output: *const u8,
    output_len: usize,
    error: *const u8,
    error_len: usize,
    out_action: *mut lg_action,
) -> lg_status {
    lg_agent::event(agent, out_action, |g| {
        // NULL is "none" here, so only a NULL with a length is refused.
        let out = arg(output, output_len, "output", "output_len")?;
        let err = arg(error, error_len, "error", "error_len")?;
        g.result(
            (!output.is_null()).then_some(out),
            (!error.is_null()).then_some(err),
        );
        Ok(())
    })
}

/// A reply the agent's harness rejected (it had no tool call, or several, so nothing ran).
/// Rejections in a row are their own loop (`rejected_replies`); they neither break nor extend
/// the other rules' runs of calls. O(1).
#[no_mangle]
pub unsafe extern "C" fn lg_agent_reject(
    agent: *mut lg_agent,
    out_action: *mut lg_action,
) -> lg_status {
    lg_agent::event(agent, out_action, |g| {
        g.reject();
        Ok(())
    })
}

/// A whole assistant message.
#[no_mangle]
pub unsafe extern "C" fn lg_agent_message(
    agent: *mut lg_agent,
    message: *const u8,
    message_len: usize,
    out_action: *mut lg_action,
) -> lg_status {
    lg_agent::event(agent, out_action, |g| {
        g.assistant(&text(message, message_len, "message", "message_len")?);
        Ok(())
    })
}

/// Part of a streamed assistant message; end it with `lg_agent_end_message` (a call ends it
/// too).
#[no_mangle]
pub unsafe extern "C" fn lg_agent_message_chunk(
    agent: *mut lg_agent,
    chunk: *const u8,
    chunk_len: usize,
    out_action: *mut lg_action,
) -> lg_status {
    lg_agent::event(agent, out_action, |g| {
        g.assistant_chunk(&text(chunk, chunk_len, "chunk", "chunk_len")?);
        Ok(())
    })
}

/// Ends the streamed assistant message.
#[no_mangle]
pub unsafe extern "C" fn lg_agent_end_message(
    agent: *mut lg_agent,
    out_action: *mut lg_action,
) -> lg_status {
    lg_agent::event(agent, out_action, |g| {
        g.end_message();
        Ok(())
    })
}

/// A thought: compared with earlier thoughts and messages, not a step.
#[no_mangle]
pub unsafe extern "C" fn lg_agent_thought(
    agent: *mut lg_agent,
    thought: *const u8,
    thought_len: usize,
    out_action: *mut lg_action,
) -> lg_status {
    lg_agent::event(agent, out_action, |g| {
        g.thought(&text(thought, thought_len, "thought", "thought_len")?);
        Ok(())
    })
}

/// A user turn; starts a new scope when the config says so.
#[no_mangle]
pub unsafe extern "C" fn lg_agent_user(
    agent: *mut lg_agent,
    message: *const u8,
    message_len: usize,
    out_action: *mut lg_action,
) -> lg_status {
    lg_agent::event(agent, out_action, |g| {
        g.user(&text(message, message_len, "message", "message_len")?);
        Ok(())
    })
}

/// A fingerprint of the state the agent works on, after each change.
#[no_mangle]
pub unsafe extern "C" fn lg_agent_state(
    agent: *mut lg_agent,
    fingerprint: u64,
    out_action: *mut lg_action,
) -> lg_status {
    lg_agent::event(agent, out_action, |g| {
        g.state(fingerprint);
        Ok(())
    })
}

/// The caller's clock, in milliseconds, for time-based rules.
#[no_mangle]
pub unsafe extern "C" fn lg_agent_tick(
    agent: *mut lg_agent,
    now_ms: u64,
    out_action: *mut lg_action,
) -> lg_status {
    lg_agent::event(agent, out_action, |g| {
        g.tick(now_ms);
        Ok(())
    })
}

/// Turns detection off (0) or on (1) for the session.
#[no_mangle]
pub unsafe extern "C" fn lg_agent_set_enabled(agent: *mut lg_agent, enabled: u8) -> lg_status {
    boundary(|| {
        lg_agent::call(agent, |g| {
            g.set_enabled(enabled != 0);
            Ok(())
        })
    })
}

/// Forgets the session (windows, counts, strikes, a halt). Stats are kept.
#[no_mangle]
pub unsafe extern "C" fn lg_agent_reset(agent: *mut lg_agent) -> lg_status {
    boundary(|| {
        lg_agent::call(agent, |g| {
            g.reset();
            Ok(())
        })
    })
}

/// Writes the last verdict into `*out` (set `out->struct_size` first). O(1).
#[no_mangle]
pub unsafe extern "C" fn lg_agent_get_verdict(
    agent: *const lg_agent,
    out: *mut lg_agent_verdict,
) -> lg_status {
    boundary(|| {
        lg_agent::call(agent, |g| {
            write_sized(
                out,
                agent_verdict_to_c(g.verdict()),
                "out",
                "lg_agent_verdict",
            )
        })
    })
}

/// Copies up to `cap` evidence steps of the last verdict (oldest first) into `out` and writes
/// how many there are into `*out_len`.
#[no_mangle]
pub unsafe extern "C" fn lg_agent_evidence(
    agent: *const lg_agent,
    out: *mut u64,
    cap: usize,
    out_len: *mut usize,
) -> lg_status {
    boundary(|| {
        lg_agent::call(agent, |g| {
            let out_len = out_arg(out_len, "out_len")?;
            let out = arg_mut(out, cap, "out", "cap")?;
            let ev = &g.verdict().evidence;
            let n = ev.len().min(out.len());
            out[..n].copy_from_slice(&ev[..n]);
            *out_len = ev.len();
            Ok(())
        })
    })
}

/// Exports the loops this guard reported (and those it imported) into `buf`, for the guard of
/// a later session (`lg_agent_memory_import`): fingerprints only (kinds, 64-bit hashes of the
/// calls, counts), never text; at most `LG_MAX_MEMORY_BYTES` bytes in a stable, versioned
/// format. Writes the length into `*out_len`. `LG_ERR_INVALID_ARGUMENT` naming `buf_len` when
/// the memory does not fit (nothing written: a buffer of `LG_MAX_MEMORY_BYTES` always fits).
#[no_mangle]
pub unsafe extern "C" fn lg_agent_memory_export(
    agent: *const lg_agent,
    buf: *mut u8,
    buf_len: usize,
    out_len: *mut usize,
) -> lg_status {
    boundary(|| {
        lg_agent::call(agent, |g| {
            let out_len = out_arg(out_len, "out_len")?;
            let buf = arg_mut(buf, buf_len, "buf", "buf_len")?;
            let memory = g.export_memory();
            if memory.len() > buf.len() {
                return Err(Fail::new(
                    LG_ERR_INVALID_ARGUMENT,
                    format!(
                        "buf_len = {buf_len}: the memory takes {} bytes (LG_MAX_MEMORY_BYTES at most)",
                        memory.len()
                    ),
                ));
            }
            buf[..memory.len()].copy_from_slice(&memory);
            *out_len = memory.len();
            Ok(())
        })
    })
}

/// Merges a memory exported by `lg_agent_memory_export` (of any session): a call that looped
/// before then warns one repeat earlier. Writes the loops it held into `*out_loops` when not
/// NULL. A malformed memory is refused whole (`LG_ERR_INVALID_ARGUMENT`, the message naming
/// `data` and what is wrong: length, magic, version, checksum, an entry). A reset keeps the
/// imported memory and forgets the session's own loops (export them first); at most
/// `LG_MAX_MEMORY` loops are held.
#[no_mangle]
pub unsafe extern "C" fn lg_agent_memory_import(
    agent: *mut lg_agent,
    data: *const u8,
    len: usize,
    out_loops: *mut usize,
) -> lg_status {
    boundary(|| {
        lg_agent::call(agent, |g| {
            let data = arg(data, len, "data", "len")?;
            let n = g
                .import_memory(data)
                .map_err(|e| Fail::new(LG_ERR_INVALID_ARGUMENT, format!("data: {e}")))?;
            if !out_loops.is_null() {
                *out_loops = n;
            }
            Ok(())
        })
    })
}

/// Describes the last verdict into `buf` (NUL-terminated, truncated to fit) at a verbosity:
/// brief (`Bash(git status) called 5x`), summary, or full (the `<loop-recovery>` block for the
/// model). Writes the full length needed into `*out_len` when not NULL.
#[no_mangle]
pub unsafe extern "C" fn lg_agent_describe(
    agent: *const lg_agent,
    verbosity: i32,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
) -> lg_status {
    boundary(|| {
        lg_agent::call(agent, |g| {
            describe_into(verbosity, buf, buf_len, out_len, |v, s| g.describe(v, s))
        })
    })
}

/// Writes the session's counters into `*out` (set `out->struct_size` first). O(1).
#[no_mangle]
pub unsafe extern "C" fn lg_agent_get_stats(
    agent: *const lg_agent,
    out: *mut lg_agent_stats,
) -> lg_status {
    boundary(|| {
        lg_agent::call(agent, |g| {
            let s = g.stats();
            let stats = lg_agent_stats {
                struct_size: std::mem::size_of::<lg_agent_stats>(),
                checks: s.checks,
                calls: s.calls,
                detections: s.detections,
                warnings: s.warnings,
                blocks: s.blocks,
                halts: s.halts,
                invalid_args: s.invalid_args,
                highest_strike: s.highest_strike,
                by_kind: std::array::from_fn(|k| s.by_kind[k]),
                rejections: s.rejections,
                by_kind_late: std::array::from_fn(|k| s.by_kind.get(17 + k).copied().unwrap_or(0)),
            };
            write_sized(out, stats, "out", "lg_agent_stats")
        })
    })
}

/// Writes the bytes the guard holds now into `*out` (bounded by the window).
#[no_mangle]
pub unsafe extern "C" fn lg_agent_memory_usage(
    agent: *const lg_agent,
    out: *mut usize,
) -> lg_status {
    boundary(|| {
        lg_agent::call(agent, |g| {
            *out_arg(out, "out")? = g.memory_usage();
            Ok(())
        })
    })
}

/// Sets the callbacks (either may be NULL) and their user data: `on_warn` on every warn or
/// block verdict, `on_halt` when the session halts.
#[no_mangle]
pub unsafe extern "C" fn lg_agent_set_callbacks(
    agent: *mut lg_agent,
    on_warn: lg_agent_callback,
    on_halt: lg_agent_callback,
    user_data: *mut c_void,
) -> lg_status {
    boundary(|| {
        let Some(h) = agent.as_ref() else {
            return LG_ERR_NULL;
        };
        if let Err(e) = h.state.enter() {
            return h.state.refuse(e);
        }
        h.callbacks.set(AgentCallbacks {
            on_warn,
            on_halt,
            user_data,
        });
        LG_OK
    })
}

/// Why the last failed call on this handle failed, naming the argument at fault, NUL-terminated;
/// "" when none failed. Never NULL (a NULL handle gives a static message). Valid until the
/// next call on the handle.
#[no_mangle]
pub unsafe extern "C" fn lg_agent_last_error(agent: *const lg_agent) -> *const c_char {
    match agent.as_ref() {
        None => c"NULL lg_agent handle".as_ptr(),
        Some(h) => h.state.last_error(),
    }
}

// Compile-time checks of the threading promises.
const _: () = {
    const fn send<T: Send>() {}
    send::<lg_agent>();
    send::<lg_agent_config>();
};
