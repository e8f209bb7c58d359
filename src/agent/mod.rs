//! The agent guard: loops of tool calls, errors and messages.
//!
//! An agent feeds its [`AgentGuard`] what happens in a session — each tool call before it runs
//! ([`call`](AgentGuard::call)), its result after ([`result`](AgentGuard::result)), what the
//! assistant says ([`assistant`](AgentGuard::assistant)), user turns and, optionally, a state
//! fingerprint — and gets an [`AgentVerdict`] back each time: continue, warn (nudge the model),
//! block (do not run this call) or halt, with the kind of loop, the evidence and recovery text
//! for the model.
//!
//! Arguments alone only warn: the same call with a changed result is progress (polling, paging,
//! a test rerun after an edit). Blocks need evidence of no progress — identical results, or the
//! same error whatever the arguments.
//!
//! ```
//! use loopguard::{Action, AgentConfig, AgentGuard};
//!
//! let mut guard = AgentGuard::new(&AgentConfig::default());
//! let mut last = Action::Continue;
//! for _ in 0..4 {
//!     last = guard.call("Bash", br#"{"command": "git status"}"#).action;
//!     if last == Action::Block {
//!         break; // do not run it
//!     }
//!     guard.result(Some(b"nothing to commit, working tree clean"), None);
//! }
//! assert_eq!(last, Action::Block);
//! let mut brief = String::new();
//! guard.describe(loopguard::Verbosity::Brief, &mut brief).unwrap();
//! assert_eq!(brief, "Bash(git status) called 4x");
//! ```
//!
//! # Resource usage
//!
//! Memory is bounded by the window (32 calls by default) however long the session: results and
//! messages are reduced to fingerprints as they arrive, never stored. A call costs one pass over
//! its arguments plus a scan of the window.

mod args;
mod asking;
mod calls;
mod chant;
mod conclude;
mod diagnostic;
mod editor;
mod edits;
mod envelope;
mod failure;
mod harness;
mod memory;
mod messages;
mod recovery;
mod results;
mod settings;
mod shell;
mod shown;
mod text;
mod topic;
mod verdict;

use std::collections::VecDeque;

use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed, Xxh3};

pub use chant::ChantSettings;
pub use settings::{
    AgentConfig, AgentPreset, AgentSettings, Thresholds, ToolPolicy, MAX_AGENT_WINDOW,
};

use self::args::{digest, Sketch};
use self::chant::Chant;
use self::conclude::Finding;
use self::failure::reported_failure;
use self::memory::LoopMemory;
pub use self::memory::{MemoryError, MAX_MEMORY, MAX_MEMORY_BYTES};
use self::shell::ShellEffect;
use self::shown::Shown;
use self::text::{failure_fingerprint, result_fingerprints, ArgWords, Learnt};
use self::topic::WordSet;
pub use self::verdict::{AgentLoopKind, AgentStats, AgentVerdict, Reason, Recommendation};
use crate::{Action, StreamGuard};

/// Handles given out by answers that are held at once (see [`AgentGuard::remember_handle`]).
const HANDLES: usize = 8;

/// The longest answer that can be no more than a job's launch (see `CallRec::launched`).
const LAUNCH_LEN: usize = 256;

/// The longest cycle the guard can track.
const MAX_CYCLE: usize = 8;

/// Waits and polls of a running job in a row that are not checked (see `AgentGuard::call`):
/// past them, waiting is judged as any call is (a job that never ends).
const WAIT_PATIENCE: u32 = 30;
/// Answers of a poll (the same call back to back) within which its answer last changed, for
/// the poll to be watching something that moves (see `AgentGuard::polls_moving`). A CI job
/// or a build step stands still for a few polls; one that stands still longer has stopped.
const MOVING_ANSWERS: usize = 4;
/// Bytes of one assistant message kept for its topic words.
const MESSAGE_WORDS_BYTES: usize = 16 * 1024;
/// Evidence steps kept in a verdict.
const MAX_EVIDENCE: usize = 16;

/// The first `ARG_BYTES` bytes of a call's arguments, kept inline.
#[derive(Clone, Debug)]
struct ArgsHead {
    bytes: [u8; text::ARG_BYTES],
    len: u16,
}

impl ArgsHead {
    fn of(args: &[u8]) -> ArgsHead {
        let len = args.len().min(text::ARG_BYTES);
        let mut bytes = [0; text::ARG_BYTES];
        bytes[..len].copy_from_slice(&args[..len]);
        ArgsHead {
            bytes,
            len: len as u16,
        }
    }

    fn bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

/// One call in the window.
#[derive(Clone, Debug)]
struct CallRec {
    step: u64,
    tool: u64,
    key: u64,
    sketch: Sketch,
    /// Result and error together; `None` until the result arrives.
    outcome: Option<u64>,
    /// The outcome with positions in files folded (see `text::result_fingerprints`): what
    /// tells the same command's same failure before and after an edit.
    placeless: Option<u64>,
    error: Option<u64>,
    /// Its error named one of its arguments (see `ArgWords::named_in`).
    error_names_args: bool,
    /// Its error is a compiler's diagnostic (see [`diagnostic`]): the cause, whichever
    /// command met it.
    diagnosed: bool,
    result_len: usize,
    /// The outcome was new to the window: the agent learnt something.
    novel: bool,
    /// The counts of its output's verdicts of failure (see [`failure::tally`]), and how its
    /// output ended (see [`text::tail_fingerprint`]; 0 for a compiler's diagnostic, which is
    /// its failure): with `error`, what failed, to tell a failure an edit left as it was.
    tally: u32,
    tail: u64,
    /// Its result has arrived.
    answered: bool,
    blocked: bool,
    exempt: bool,
    poller: bool,
    failure_tolerant: bool,
    /// Its success is progress (a policy, a name matching `progress_patterns`, or a shell
    /// command that writes files).
    progress: bool,
    /// It succeeded and was progress: it left the files in a state no call in the window saw
    /// (not a repeat of an earlier write, nor a revert).
    wrote: bool,
    /// The state of the files when the call was made (see [`edits`]).
    version: u64,
    /// What it writes, when its arguments say (see [`edits::read`]).
    edit: Option<edits::Edit>,
    /// The call's key without the version: what the loop memory remembers it by.
    memo: u64,
    /// Its arguments are a shell command line.
    shell: bool,
    /// It is a search (see `ShellEffect::searches`): an empty result is "nothing found".
    search: bool,
    /// A search, by its program or its tool's name, that succeeded: whether every line it
    /// showed had been shown before (see [`shown`]); `None` for any other call.
    shown: Option<bool>,
    /// It searches, by its program or its tool's name (see [`shown::searches_by_name`]).
    finds: bool,
    /// It installs packages (see `ShellEffect::installs`).
    install: bool,
    /// It checks the project (see `ShellEffect::checks`).
    check: bool,
    /// Its answer was brief and handed back a handle (`Command running in background with ID:
    /// bash_1`): a job started, whose verdict is still to come.
    launched: bool,
    /// It is a search that printed nothing: its result is "nothing found", the same for every
    /// search of its program, whatever markup or exit status came with it.
    nothing_found: bool,
    /// Its output says no (see `failure::denies`): never an acknowledgment.
    denies: bool,
    /// Its output reports a job still running (see `failure::reports_running`).
    running: bool,
    /// It puts a question to the user (see [`asking`]).
    asks: bool,
    /// The first bytes of its arguments, whose words are folded out of its errors (read
    /// only when it fails).
    args_head: ArgsHead,
    /// The tool's own thresholds for repeated calls.
    repeats: Option<Thresholds>,
    label: String,
}

/// What failed, as the rules on fixes that miss compare failures: the error's fingerprint,
/// the counts of the output's verdicts and the fingerprint of its end (see [`CallRec::tally`]).
pub(crate) type FailureId = (Option<u64>, u32, u64);

impl CallRec {
    /// What failed (see [`FailureId`]); `(None, 0, 0)` for a success.
    pub(crate) fn failure_id(&self) -> FailureId {
        (self.error, self.tally, self.tail)
    }
}

/// Watches one agent session for loops.
///
/// # Thread safety
///
/// `Send` and `Sync`; every event takes `&mut self`. Use one guard per session, from one thread
/// at a time.
#[derive(Clone)]
pub struct AgentGuard {
    config: AgentConfig,
    enabled: bool,
    calls: VecDeque<CallRec>,
    /// `runs[k]`: calls in a row equal to the call `k` before them (a blocked call breaks it).
    runs: [u32; MAX_CYCLE + 1],
    messages: VecDeque<(u64, WordSet)>,
    last_message: Option<u64>,
    identical_messages: u32,
    monologue: u32,
    states: VecDeque<u64>,
    returns: u32,
    message_guard: Option<StreamGuard>,
    message_hash: Xxh3,
    message_bytes: Vec<u8>,
    message_open: bool,
    /// Inside a code fence of the assistant's text: code is not checked for loops.
    in_code: bool,
    chant: Chant,
    runaway_chars: u64,
    now_ms: Option<u64>,
    last_tool_ms: Option<u64>,
    /// Errors before this step do not count (a progress tool succeeded at it).
    failure_epoch: u64,
    /// The state of the files as the successful writes so far left it (see [`edits`]). A call
    /// that is not itself a write carries the state it saw, so the same read or test run after
    /// a write is a new observation, not a repeat; after a revert, it is a repeat again.
    files: edits::Files,
    /// Where the lone `cd` commands of a shell tool have left it (`""`: where it started),
    /// and where the call awaiting its result moves it if it succeeds.
    cwd: String,
    cd: Option<String>,
    /// Replies the harness rejected in a row, and the step of the first of them.
    rejections: u32,
    rejected_since: u64,
    /// Calls in a row that waited (`sleep 30`) or polled a job its last answer said was still
    /// running.
    waiting: u32,
    strikes: u32,
    blocks: u32,
    step: u64,
    verdict: AgentVerdict,
    stats: AgentStats,
    scratch: Vec<u8>,
    /// The words of the latest result, when it succeeded and was new (see `Learnt`).
    learnt: Learnt,
    /// The lines searches have shown (see [`shown`]).
    shown: Shown,
    /// The handles the latest answers gave out (`terminal ID 8`, `pid 4242`), by
    /// [`args::handle_hash`], newest last: passed back in arguments, they are folded.
    handles: [u64; HANDLES],
    handles_len: usize,
    /// Loops reported in this session or imported from earlier ones (see [`memory`]).
    memory: LoopMemory,
    /// The key of the last loop recorded, to record a loop once, not at every repeat.
    last_memo: Option<u64>,
}

impl std::fmt::Debug for AgentGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentGuard")
            .field("enabled", &self.enabled)
            .field("step", &self.step)
            .field("calls", &self.calls.len())
            .field("strikes", &self.strikes)
            .field("verdict", &self.verdict)
            .finish_non_exhaustive()
    }
}

impl AgentGuard {
    /// A guard for one session.
    pub fn new(config: &AgentConfig) -> AgentGuard {
        let s = &config.inner.settings;
        AgentGuard {
            config: config.clone(),
            enabled: true,
            calls: VecDeque::with_capacity(s.window as usize),
            runs: [0; MAX_CYCLE + 1],
            messages: VecDeque::with_capacity(s.semantic_window as usize),
            last_message: None,
            identical_messages: 0,
            monologue: 0,
            states: VecDeque::with_capacity(4),
            returns: 0,
            message_guard: config.inner.message.as_ref().map(StreamGuard::new),
            message_hash: Xxh3::new(),
            message_bytes: Vec::new(),
            message_open: false,
            in_code: false,
            chant: Chant::new(),
            runaway_chars: 0,
            now_ms: None,
            last_tool_ms: None,
            failure_epoch: 0,
            cwd: String::new(),
            cd: None,
            files: edits::Files::default(),
            rejections: 0,
            rejected_since: 0,
            waiting: 0,
            strikes: 0,
            blocks: 0,
            step: 0,
            verdict: AgentVerdict::default(),
            stats: AgentStats::default(),
            scratch: Vec::new(),
            learnt: Learnt::default(),
            shown: Shown::default(),
            handles: [0; HANDLES],
            handles_len: 0,
            memory: LoopMemory::default(),
            last_memo: None,
        }
    }

    /// The configuration this guard was built with.
    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// Turns detection off (or back on) for the rest of the session. While off, every event
    /// answers `Continue` and nothing is recorded.
    pub fn set_enabled(&mut self, enabled: bool) {
        self.enabled = enabled;
    }

    /// Whether detection is on.
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// The last verdict.
    pub fn verdict(&self) -> &AgentVerdict {
        &self.verdict
    }

    /// Tool `tool` is a shell: by its policy or by name (`shell_tools`), or, in our reading, by
    /// its arguments sending a command line (see `shell::sends_command_line`) unless a policy
    /// says what the tool is.
    fn is_shell_tool(&self, tool: &str, args: &[u8]) -> bool {
        let s = self.config.settings();
        match s.tools.get(tool) {
            Some(p) if p.shell => true,
            _ if s.shell_tools.iter().any(|n| n.eq_ignore_ascii_case(tool)) => true,
            Some(_) => false,
            None => {
                s.results_are_progress
                    && !editor::is_editor(tool)
                    && shell::sends_command_line(args)
            }
        }
    }

    /// Holds a handle an answer gave out; the oldest goes when all `HANDLES` are taken.
    fn remember_handle(&mut self, h: u64) {
        if self.handles[..self.handles_len].contains(&h) {
            return;
        }
        if self.handles_len == HANDLES {
            self.handles.copy_within(1.., 0);
            self.handles_len -= 1;
        }
        self.handles[self.handles_len] = h;
        self.handles_len += 1;
    }

    /// Counters since construction (a reset keeps them).
    pub fn stats(&self) -> AgentStats {
        self.stats
    }

    /// Forgets the session: windows, counts, strikes and the sticky halt. Stats are kept.
    pub fn reset(&mut self) {
        self.calls.clear();
        self.runs = [0; MAX_CYCLE + 1];
        self.messages.clear();
        self.last_message = None;
        self.identical_messages = 0;
        self.monologue = 0;
        self.states.clear();
        self.returns = 0;
        self.end_message_text();
        self.chant.clear();
        self.runaway_chars = 0;
        self.last_tool_ms = self.now_ms;
        self.failure_epoch = self.step;
        self.cwd.clear();
        self.cd = None;
        self.learnt.clear();
        self.shown.clear();
        self.handles_len = 0;
        self.rejections = 0;
        self.waiting = 0;
        self.strikes = 0;
        self.blocks = 0;
        self.verdict = AgentVerdict::default();
        // As if new: the session's own loops go; the memory given from earlier ones stays.
        self.memory.forget_session();
        self.last_memo = None;
    }

    /// Bytes held by this guard now (bounded by the window, whatever the session length).
    pub fn memory_usage(&self) -> usize {
        std::mem::size_of::<AgentGuard>()
            + self.calls.capacity() * std::mem::size_of::<CallRec>()
            + self.calls.iter().map(|c| c.label.capacity()).sum::<usize>()
            + self.messages.capacity() * std::mem::size_of::<(u64, WordSet)>()
            + self.messages.len() * topic::WORDS * 4
            + self.message_bytes.capacity()
            + self.cwd.capacity()
            + self.cd.as_ref().map_or(0, String::capacity)
            + self.scratch.capacity()
            + self
                .message_guard
                .as_ref()
                .map_or(0, StreamGuard::memory_usage)
            + self.chant.memory_usage()
            + self.memory.len() * std::mem::size_of::<(u8, u64, u32)>()
            + self.files.heap_usage()
            + self.shown.heap_usage()
    }

    /// The loops this guard reported (and those it was given), as at most
    /// [`MAX_MEMORY_BYTES`] bytes to hand to the guard of a later session
    /// ([`import_memory`](Self::import_memory)). Fingerprints only: kinds, 64-bit hashes of
    /// the calls and counts, never text. The format is stable and versioned (`agent::memory`).
    pub fn export_memory(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.memory.export(&mut out);
        out
    }

    /// Merges a memory exported by [`export_memory`](Self::export_memory) (of this session or
    /// another): a call that looped before warns one repeat earlier. Returns the loops it held;
    /// a malformed memory is refused whole, with what is wrong named. At most [`MAX_MEMORY`]
    /// loops are kept (the least reported are forgotten first). A reset keeps the imported
    /// memory and forgets the session's own loops, as it forgets the rest of the session:
    /// export them first to keep them.
    pub fn import_memory(&mut self, bytes: &[u8]) -> Result<usize, MemoryError> {
        self.memory.import(bytes)
    }

    /// Loops held in the memory.
    pub fn memory_len(&self) -> usize {
        self.memory.len()
    }

    /// Sets the caller's clock (milliseconds, monotonic) for time-based rules.
    pub fn tick(&mut self, now_ms: u64) -> &AgentVerdict {
        self.now_ms = Some(now_ms);
        self.last_tool_ms.get_or_insert(now_ms);
        if let Some(f) = self.runaway() {
            let step = self.step;
            return self.conclude(vec![f], step, false);
        }
        self.quiet()
    }

    /// A tool call the agent is about to make: `args` is its JSON (any bytes are accepted;
    /// invalid JSON is compared by its raw bytes and flagged in the verdict).
    ///
    /// Returns `Block` when the call should not run. Report what it returned with
    /// [`result`](Self::result).
    pub fn call(&mut self, tool: &str, args: &[u8]) -> &AgentVerdict {
        self.call_with_thought(tool, args, None)
    }

    /// [`call`](Self::call) with the thought or description the model gave for it, which is
    /// compared with earlier thoughts and messages.
    pub fn call_with_thought(
        &mut self,
        tool: &str,
        args: &[u8],
        thought: Option<&str>,
    ) -> &AgentVerdict {
        self.stats.checks += 1;
        self.stats.calls += 1;
        let step = self.step;
        self.step += 1;
        if self.sticky_halt() || !self.enabled {
            return self.quiet_or_halt();
        }
        // Tool activity ends the message in progress and the text-only rules.
        self.end_message_text();
        self.chant.clear();
        self.monologue = 0;
        self.last_message = None;
        self.identical_messages = 0;
        self.runaway_chars = 0;
        self.last_tool_ms = self.now_ms;
        self.rejections = 0;

        let config = self.config.clone();
        let s = &config.inner.settings;
        let policy = s.tools.get(tool);
        let no_fields: &[String] = &[];
        let fields = policy.map_or(no_fields, |p| &p.ignored_fields[..]);
        let held = self.handles;
        let handles = &held[..if s.results_are_progress {
            self.handles_len
        } else {
            0
        }];
        let mut d = digest(args, s.canonical_args, [&s.ignored_fields, fields], handles);
        if !d.valid {
            self.stats.invalid_args += 1;
        }
        let tool_hash = xxh3_64(tool.as_bytes());
        let shell_tool = self.is_shell_tool(tool, args);
        let (effect, shell_line) = if shell_tool {
            let mut call = shell::call_of(args);
            // A long-lived shell runs a command where the last lone `cd` left it: `ls -F`
            // after `cd src/` lists another directory than the `ls -F` before it.
            self.cd = shell::cd_target(&call.line).map(|to| shell::moved(&self.cwd, &to));
            // Told only by the guard, the directory is part of the call but not of its label.
            let mut preview = None;
            if call.dir.is_none() && !self.cwd.is_empty() {
                call.dir = Some(self.cwd.clone());
                preview = d.preview.take().filter(|_| call.plain);
                call.plain = false;
            }
            if !call.plain {
                // A shell call is the command it runs and where, however it is sent (Codex's
                // argv). A description written for the user (Claude Code's `Bash`), a
                // justification or a timeout beside it is commentary: the same tests run
                // again under new words are the same call.
                let identity = match &call.dir {
                    Some(dir) => serde_json::json!({"command": call.line, "cwd": dir}),
                    None => serde_json::json!({ "command": call.line }),
                };
                let valid = d.valid;
                d = digest(
                    identity.to_string().as_bytes(),
                    s.canonical_args,
                    [&s.ignored_fields, fields],
                    handles,
                );
                d.valid = valid;
                d.preview = d.preview.take().or(preview);
            }
            (shell::effect(&call.line), Some(call.line))
        } else {
            self.cd = None;
            (ShellEffect::default(), None)
        };
        // An editor tool's command (`view`, `str_replace`): read once, for what it does and
        // which of the editor's tools it is.
        let editor_command = if shell_tool {
            None
        } else {
            editor::command(tool, args)
        };
        let progress = effect.writes
            || match policy {
                Some(p) => p.progress,
                None => editor_command
                    .as_deref()
                    .and_then(editor::command_writes)
                    .unwrap_or_else(|| {
                        (config.inner.progress.as_ref()).is_some_and(|ac| ac.is_match(tool))
                    }),
            };
        let mut key = xxh3_64_with_seed(&d.hash.to_le_bytes(), tool_hash);
        let memo = key;
        let version = self.files.state();
        if !progress && version != 0 {
            key = xxh3_64_with_seed(&version.to_le_bytes(), key);
        }
        // What a write does, where an editor's arguments or version control's commands say
        // it. Ours: the peers' presets count every write as a new state.
        let edit = if !progress || !s.results_are_progress {
            None
        } else if shell_tool {
            effect.tree.map(edits::Edit::Tree)
        } else {
            edits::read(args)
        };
        // One shell tool runs many programs, and one editor tool many commands: to the
        // per-tool rules each is a tool of its own.
        let tool_hash = if effect.program != 0 {
            xxh3_64_with_seed(&effect.program.to_le_bytes(), tool_hash)
        } else if let Some(command) = editor_command.filter(|_| s.results_are_progress) {
            xxh3_64_with_seed(command.as_bytes(), tool_hash)
        } else {
            tool_hash
        };
        // Waiting is not looping: a line that only waits (`sleep 30`), or the same call as
        // one whose answer said its job was still running (Claude Code's `BashOutput` of a
        // build), is the agent waiting on the world. Not checked, up to `WAIT_PATIENCE` in
        // a row.
        // An empty line after an answer that said its command was still running waits for
        // more of its output (OpenHands: "wait longer … by sending empty command"). Our
        // reading, not a peer's: the peers' presets count every call as they do.
        // A poll of something that moves waits too: the same call back to back, while its
        // answer changed within the last `MOVING_ANSWERS` (a CI run's jobs finishing one by
        // one, shown by glyphs no word says "running").
        let waits = s.results_are_progress
            && (effect.waits
                || (effect.empty && self.calls.back().is_some_and(|o| o.running))
                || (self.calls.iter().rev())
                    .find(|o| o.memo == memo)
                    .is_some_and(|o| o.running)
                || self.polls_moving(key));
        self.waiting = if waits {
            self.waiting.saturating_add(1)
        } else {
            0
        };
        let label = match &d.preview {
            Some(p) => format!("{tool}({p})"),
            None => format!("{tool}({})", preview_raw(args)),
        };

        // Runs of calls equal to the one k before. A blocked call repeated is the agent
        // insisting, unless blocks restart the count (Roo Code).
        for k in 1..=MAX_CYCLE {
            let prev = self.calls.len().checked_sub(k).map(|i| &self.calls[i]);
            self.runs[k] = match prev {
                Some(p) if p.key == key && !(p.blocked && s.reset_after_block) => self.runs[k] + 1,
                _ => 0,
            };
        }
        if self.calls.len() == s.window as usize {
            self.calls.pop_front();
            // A run counts only calls still held: the call k before the first must be one.
            for k in 1..=MAX_CYCLE {
                self.runs[k] = self.runs[k].min(self.calls.len().saturating_sub(k - 1) as u32);
            }
        }
        self.calls.push_back(CallRec {
            step,
            tool: tool_hash,
            key,
            sketch: d.sketch,
            outcome: None,
            placeless: None,
            error: None,
            error_names_args: false,
            diagnosed: false,
            result_len: 0,
            novel: false,
            tally: 0,
            tail: 0,
            answered: false,
            blocked: false,
            exempt: policy.is_some_and(|p| p.exempt) || (waits && self.waiting <= WAIT_PATIENCE),
            poller: policy.is_some_and(|p| p.poller),
            failure_tolerant: policy.is_some_and(|p| p.failure_tolerant),
            progress,
            wrote: false,
            version,
            edit,
            memo,
            shell: shell_tool,
            search: effect.searches,
            shown: None,
            finds: effect.searches || (!shell_tool && shown::searches_by_name(tool)),
            install: effect.installs,
            check: effect.checks,
            launched: false,
            nothing_found: false,
            denies: false,
            running: false,
            asks: asking::asks_user(tool),
            // The words an error may echo: the command line's own, not its wrapping.
            args_head: ArgsHead::of(shell_line.as_deref().map_or(args, str::as_bytes)),
            repeats: policy.and_then(|p| p.repeats),
            label,
        });
        let me = self.calls.len() - 1;
        let mut found = Vec::new();
        if let Some(t) = thought {
            found.extend(self.semantic(t.as_bytes(), step));
        }
        if !self.calls[me].exempt {
            self.identical(s, me, &mut found);
            self.interleaved(s, me, &mut found);
            self.cycle(s, me, &mut found);
            self.replay(s, me, &mut found);
            self.dead_end_at_call(s, me, &mut found);
            self.near_duplicate(s, me, &mut found);
            self.question_streak(s, me, &mut found);
        }
        let v = self.conclude(found, step, !d.valid);
        if v.action == Action::Block {
            self.calls[me].blocked = true;
            if s.reset_after_block {
                self.runs = [0; MAX_CYCLE + 1];
            }
        }
        &self.verdict
    }

    /// The result of the most recent call: its output and/or its error message. Results are
    /// fingerprinted, never stored. A result with no call before it is ignored.
    pub fn result(&mut self, output: Option<&[u8]>, error: Option<&[u8]>) -> &AgentVerdict {
        self.stats.checks += 1;
        if self.sticky_halt() || !self.enabled {
            return self.quiet_or_halt();
        }
        let Some(me) = self.calls.len().checked_sub(1) else {
            return self.quiet();
        };
        self.last_tool_ms = self.now_ms;
        // A shell result in a JSON envelope (Codex): its output and exit status are inside.
        // So is any tool's result that carries an exit status in one (Codex's `apply_patch`):
        // `"exit_code": 0` is no answer of the tool's.
        let opened = output
            .and_then(envelope::read)
            .filter(|e| self.calls[me].shell || e.exit_code.is_some());
        let mut error = error.filter(|e| !text::trim_ascii(e).is_empty());
        let failed_exit = (opened.as_ref()).is_some_and(|e| e.exit_code.is_some_and(|c| c != 0));
        let output = opened
            .as_ref()
            .map_or(output, |e| Some(e.output.as_bytes()));
        let nothing_found = (self.calls[me].search
            && failure::prints_nothing(output.unwrap_or_default()))
            || (s_results_are_progress(&self.config)
                && failure::found_no_rows(output.unwrap_or_default()));
        let (out_fp, out_placeless, out_len) = result_fingerprints(if nothing_found {
            b""
        } else {
            output.unwrap_or_default()
        });
        if error.is_none() && self.calls[me].shell {
            // A shell command whose output reports a failure failed, flagged or not; the line
            // that names it says more than the envelope's exit code.
            error = reported_failure(output.unwrap_or_default())
                .or(failed_exit.then_some(failure::EXIT_STATUS));
        } else if error.is_none() && failed_exit {
            error = Some(failure::EXIT_STATUS);
        }
        // A failure that says nothing but its exit status, with nothing printed (`grep`
        // finding no match), is no more evidence than an empty success.
        if error.is_some_and(failure::says_only_status)
            && failure::says_nothing(output.unwrap_or_default())
            && s_results_are_progress(&self.config)
        {
            error = None;
        }
        // The failure is read from a build's first error diagnostic when the output holds one
        // and the error says no more (see `reported_failure`, `failure_fingerprint`).
        let diagnosed = error.is_some_and(|e| {
            diagnostic::first_error(output.unwrap_or_default())
                .is_some_and(|(cause, _)| cause == e || failure::says_only_status(e))
        });
        let mut names_args = false;
        let mut tail = 0;
        let err_fp = error.map(|e| {
            let args = ArgWords::of(self.calls[me].args_head.bytes());
            names_args = args.named_in(e);
            if !diagnosed {
                tail = text::tail_fingerprint(output.unwrap_or_default(), &args, &mut self.scratch);
            }
            failure_fingerprint(e, output.unwrap_or_default(), &args, &mut self.scratch)
        });
        let config = self.config.clone();
        let s = &config.inner.settings;
        // An empty success (`mkdir`, a heredoc, `sed -i`: nothing printed, whatever markup
        // the harness wraps it in) says nothing about progress: its outcome stays unknown,
        // neither the same as another nor changed. A search that printed nothing has
        // answered: nothing found.
        let silent = s.results_are_progress
            && err_fp.is_none()
            && !nothing_found
            && failure::says_nothing(output.unwrap_or_default());
        let outcome = xxh3_64_with_seed(&out_fp.to_le_bytes(), err_fp.unwrap_or(0));
        let step = self.calls[me].step;
        // A successful write changes the files; it is progress when it leaves them in a state
        // no call in the window saw: not when it repeats an earlier write, nor when it puts
        // back what an earlier one took out.
        let key = self.calls[me].key;
        let mut wrote = false;
        if err_fp.is_none() && self.calls[me].progress {
            let before = self.files.state();
            let after = match self.calls[me].edit {
                Some(edit) => self.files.apply(edit),
                None if (self.calls.iter().take(me)).any(|c| c.wrote && c.key == key) => before,
                None => self.files.apply_unknown(),
            };
            wrote = after != before && after != 0 && !self.calls.iter().any(|c| c.version == after);
        }
        let novel = wrote || (!silent && !self.calls.iter().any(|c| c.outcome == Some(outcome)));
        {
            let c = &mut self.calls[me];
            c.outcome = (!silent).then_some(outcome);
            c.placeless = (!silent)
                .then(|| xxh3_64_with_seed(&out_placeless.to_le_bytes(), err_fp.unwrap_or(0)));
            c.error = err_fp;
            c.error_names_args = names_args;
            c.diagnosed = diagnosed;
            c.result_len = out_len;
            c.novel = novel;
            c.tally = err_fp.map_or(0, |_| failure::tally(output.unwrap_or_default()));
            c.tail = tail;
            c.answered = true;
            c.wrote = wrote;
            c.nothing_found = nothing_found;
            c.denies = failure::denies(output.unwrap_or_default());
            c.running = failure::reports_running(output.unwrap_or_default());
        }
        if wrote {
            self.failure_epoch = step;
        }
        if s.results_are_progress && self.calls[me].finds && err_fp.is_none() && !nothing_found {
            self.calls[me].shown = self.shown.show(output.unwrap_or_default());
        }
        if s.results_are_progress {
            let mut handed = false;
            text::handles_in(output.unwrap_or_default(), |h| {
                handed = true;
                self.remember_handle(h);
            });
            self.calls[me].launched = handed && out_len <= LAUNCH_LEN;
        }
        if let Some(to) = self.cd.take().filter(|_| err_fp.is_none()) {
            self.cwd = to;
        }
        let outcome = self.calls[me].outcome;
        // A changed result for the same call is progress: its runs restart.
        for k in (1..=MAX_CYCLE).filter(|_| s.results_are_progress) {
            if self.runs[k] > 0 {
                if let Some(prev) = me.checked_sub(k).map(|i| &self.calls[i]) {
                    if prev.outcome.is_some_and(|o| Some(o) != outcome) {
                        self.runs[k] = 0;
                    }
                }
            }
        }
        let mut found = Vec::new();
        if !self.calls[me].exempt {
            self.no_progress(s, me, &mut found);
            if err_fp.is_some() && !self.calls[me].failure_tolerant {
                self.same_error(s, me, &mut found);
                self.whack_a_mole(s, me, &mut found);
                self.failure_streak(s, me, &mut found);
                self.failed_installs(s, me, &mut found);
            }
            if err_fp.is_none() {
                self.same_result(s, me, &mut found);
                self.nothing_new(s, me, &mut found);
                self.flipping(s, me, &mut found);
            }
        }
        // What this result taught matters only to a dead end of errors that blamed their
        // arguments (`new_attempt`): learnt only while one is in the error window. Learnt
        // after the rules above, which judge this call by what it knew when it was made. A
        // short output teaches too (`ls` answering `com`), though it says nothing of progress.
        let blamed =
            (self.calls.iter().rev().take(s.error_window as usize)).any(|c| c.error_names_args);
        if err_fp.is_none() && (novel || silent) && blamed {
            self.learnt.learn(output.unwrap_or_default());
        } else {
            self.learnt.clear();
        }
        // The call already ran: a block becomes a warning now and applies to the next call.
        for f in &mut found {
            if f.action == Action::Block {
                f.action = Action::Warn;
            }
        }
        self.conclude(found, step, false);
        &self.verdict
    }

    /// A reply the agent's harness rejected: it had no tool call, or more than one, so nothing
    /// ran (mini-swe-agent's format errors, a function-calling API's refusal to parse). Many in
    /// a row are a loop of their own (`rejected_replies`, off by default: see
    /// [`AgentSettings::rejected_replies`]); a rejection does not break the other rules' runs
    /// of calls, and counts as a step.
    pub fn reject(&mut self) -> &AgentVerdict {
        self.stats.checks += 1;
        self.stats.rejections += 1;
        let step = self.step;
        self.step += 1;
        if self.sticky_halt() || !self.enabled {
            return self.quiet_or_halt();
        }
        if self.rejections == 0 {
            self.rejected_since = step;
        }
        self.rejections = self.rejections.saturating_add(1);
        let t = self.config.inner.settings.rejected_replies;
        let a = t.action(self.rejections);
        let mut found = Vec::new();
        if a > Action::Continue {
            let mut f = Finding::new(
                AgentLoopKind::RejectedReplies,
                a,
                Reason::RepeatedFailure,
                self.rejections,
                t.first(),
            );
            f.steps = (self
                .rejected_since
                .max((step + 1).saturating_sub(MAX_EVIDENCE as u64))..=step)
                .collect();
            f.subject = Some(format!("{} rejected replies", self.rejections));
            found.push(f);
        }
        self.conclude(found, step, false);
        &self.verdict
    }
}

/// Whether a guard built from `config` reads changed results as progress (our preset), and so
/// empty outputs as saying nothing.
fn s_results_are_progress(config: &AgentConfig) -> bool {
    config.inner.settings.results_are_progress
}

/// (results known, whether two of them differ) over calls.
fn outcomes<'a>(calls: impl Iterator<Item = &'a CallRec>) -> (u32, bool) {
    let (mut known, mut first, mut distinct) = (0, None, false);
    for c in calls {
        if let Some(o) = c.outcome {
            known += 1;
            match first {
                None => first = Some(o),
                Some(f) => distinct |= f != o,
            }
        }
    }
    (known, distinct)
}

/// Raw arguments shortened for a message, whitespace collapsed: at most 60 bytes.
fn preview_raw(args: &[u8]) -> String {
    let mut out = Vec::with_capacity(64);
    for &b in args {
        if out.len() == 60 {
            break;
        }
        if !b.is_ascii_whitespace() {
            out.push(b);
        } else if out.last().is_some_and(|l| *l != b' ') {
            out.push(b' ');
        }
    }
    // Cut back to a character boundary; invalid bytes are replaced.
    let mut s = match String::from_utf8(out) {
        Ok(s) => s,
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let mut v = e.into_bytes();
            if v.len() - valid < 4 && v.len() == 60 {
                v.truncate(valid);
            }
            String::from_utf8_lossy(&v).into_owned()
        }
    };
    if s.len() < args.len() && args.len() > 60 {
        s.push('…');
    }
    s
}
