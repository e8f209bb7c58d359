//! loopguard stops language models from wasting compute in loops.
//!
//! An inference server pushes every generated token into a [`StreamGuard`]; the guard answers
//! [`Action::Continue`], [`Action::Warn`] or [`Action::Halt`] with the evidence — the kind of
//! repetition, its period, how many copies, where it began and the repeated text — early enough
//! to save most of the waste, and never on normal text.
//!
//! # Example
//!
//! ```
//! use loopguard::{Action, StreamConfig, StreamGuard};
//!
//! let config = StreamConfig::default(); // the `balanced` preset; share it between guards
//! let mut guard = StreamGuard::new(&config);
//! let block = [101, 7, 2048, 13, 99, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14];
//! let mut halted_at = None;
//! for (i, &id) in block.iter().cycle().take(200).enumerate() {
//!     let verdict = guard.push_token(id, None);
//!     if verdict.action == Action::Halt {
//!         assert_eq!((verdict.period, verdict.onset), (16, 0));
//!         halted_at = Some(i);
//!         break;
//!     }
//! }
//! assert_eq!(halted_at, Some(47)); // the last token of the third copy
//! ```
//!
//! # What it detects
//!
//! All detectors run in one pass per token over memory allocated once, at construction:
//!
//! * exact loops — back-to-back copies of a block, periods 1..=256 by default (up to 4096);
//! * long-range repeats — a long block that recurs verbatim up to 2048 symbols back;
//! * near loops — copies that vary (counters, list items, paraphrases), measured as the share
//!   of recent n-grams already seen in the window;
//! * text degeneration on pieces or text — character runs, word stutter, repeated lines (digits
//!   folded, so counters do not hide them), with code fences, tables and indentation loosening
//!   the thresholds and configurable breaker and exempt patterns.
//!
//! # Resource usage
//!
//! A guard at the default settings holds 16 KiB (see [`StreamGuard::memory_usage`]) for its
//! whole life, however long the stream. A push allocates nothing, takes no lock and costs
//! about 10 to 16 nanoseconds per token id on a 2.6 GHz core; text costs 12 to 13 nanoseconds
//! per byte (README, *Speed*).
//!
//! # Fallibility
//!
//! Only configuration can fail: [`StreamConfig::new`] names the first field out of range. Every
//! push accepts any token id and any bytes (invalid UTF-8 included) and never panics.
//!
//! # Thread safety
//!
//! A [`StreamConfig`] is immutable and shared by reference count: build it once and use it from
//! every thread. A [`StreamGuard`] is `Send + Sync` and pushes take `&mut self`: one thread at a
//! time per guard, moving between threads as the server schedules sequences.

// Unsafe code is denied everywhere but in `ffi`, the C ABI.
#![deny(unsafe_code)]
#![warn(missing_docs)]

/// Makes `*$dst` a copy of `*$src` field by field with `clone_from`, which copies a boxed
/// buffer into the one held (same length) instead of allocating. Every field is named, and the
/// pattern is exhaustive: a field added later and not listed here fails to compile. Fields
/// after `skip` are left as they are.
macro_rules! copy_fields {
    ($dst:expr, $src:expr, [$($f:ident),* $(,)?] $(, skip [$($s:ident),*])?) => {{
        let src = $src;
        let Self { $($f,)* $($($s: _,)*)? } = $dst;
        $( $f.clone_from(&src.$f); )*
    }};
}

mod agent;
mod config;
mod counting;
mod engine;
pub mod ffi;
mod journal;
mod novelty;
mod profile;
mod stream;
mod structure;
mod stutter;
mod template;
mod text;
mod verdict;

pub use agent::{
    AgentConfig, AgentGuard, AgentLoopKind, AgentPreset, AgentSettings, AgentStats, AgentVerdict,
    ChantSettings, MemoryError, Reason, Recommendation, Thresholds, ToolPolicy, MAX_AGENT_WINDOW,
    MAX_MEMORY, MAX_MEMORY_BYTES,
};
pub use config::{
    ConfigError, Preset, StreamConfig, StreamSettings, MAX_NGRAM, MAX_PERIOD_LIMIT, MAX_RUN,
    MAX_WINDOW, SETTINGS_FIELDS,
};
pub use profile::{profile_for, Profile, PROFILES};
pub use stream::{
    RollbackError, StreamGuard, StreamStats, Verbosity, DRAFT_BYTES, EVIDENCE_BYTES, MAX_DRAFTS,
    NOTED_PUSHES,
};
pub use verdict::{Action, LoopKind, Unit, Verdict};
