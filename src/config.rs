//! Configuration: plain [`StreamSettings`] that a caller fills in, validated once into an
//! immutable [`StreamConfig`] that any number of guards and threads share.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use aho_corasick::{dfa::DFA, AhoCorasick, MatchKind};

use crate::profile::{profile_for, Profile};
use crate::stream::Markers;

/// The largest period the exact-loop detector can be configured to track.
pub const MAX_PERIOD_LIMIT: u32 = 4096;
/// The largest window (in symbols) the long-range index can be configured to hold.
pub const MAX_WINDOW: u32 = 65536;
/// The largest n-gram the index hashes.
pub const MAX_NGRAM: u32 = 16;
/// Largest character-run threshold, in bytes.
pub const MAX_RUN: u32 = 16384;

/// A named starting point for [`StreamSettings`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    /// Halts earlier: fewer copies, shorter spans. More warnings on repetitive prose.
    Strict,
    /// The default: halts every runaway loop in the dev corpus and no normal stream.
    Balanced,
    /// Halts only long, unambiguous loops. For creative or highly structured output.
    Lenient,
}

impl Preset {
    /// Looks a preset up by its lower-case name.
    pub fn from_name(name: &str) -> Option<Preset> {
        match name {
            "strict" => Some(Preset::Strict),
            "balanced" => Some(Preset::Balanced),
            "lenient" => Some(Preset::Lenient),
            _ => None,
        }
    }

    /// The lower-case name [`from_name`](Self::from_name) reads.
    pub fn name(self) -> &'static str {
        match self {
            Preset::Strict => "strict",
            Preset::Balanced => "balanced",
            Preset::Lenient => "lenient",
        }
    }
}

/// Every threshold of a stream guard, as plain data.
///
/// Start from [`StreamSettings::default`] (the `balanced` preset), [`StreamSettings::preset`]
/// or [`StreamSettings::vllm_compatible`], change what you need, then validate it with
/// [`StreamConfig::new`]. Counts of symbols are token ids for token streams and words for
/// text-only streams. A threshold of `0` turns that rule off where the field says so.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StreamSettings {
    /// Shortest period reported as an exact loop. `1..=max_period`.
    pub min_period: u32,
    /// Longest period of an exact loop. Longer blocks are long-range repeats. `1..=4096`.
    pub max_period: u32,
    /// Periods `1..=dense_periods` are checked exactly at every symbol, whatever the block
    /// (rounded up to one more than a multiple of 8). The n-gram index finds every period up to
    /// `ngram` and every longer loop whose block holds an n-gram that occurs once in it.
    /// `0` (off) or `1..=max_period`.
    pub dense_periods: u32,
    /// Copies of a block (the first one included) that halt. `2..=1000`.
    pub halt_copies: u32,
    /// Minimum length of the repetitive region, in symbols, to halt. `0..=65536`.
    pub halt_span: u32,
    /// Copies that warn. `0` (off) or `2..=1000`; more than `halt_copies` warns with the halt.
    pub warn_copies: u32,
    /// Minimum span, in symbols, to warn. `0..=65536`.
    pub warn_span: u32,
    /// Symbols held for the long-range index: a power of two, `64..=65536`, greater than
    /// `max_period + ngram`.
    pub window: u32,
    /// Length of the hashed n-grams: the index finds every loop period up to it exactly, and
    /// near-loop coverage counts recurring n-grams of this length. `1..=16`.
    pub ngram: u32,
    /// A verbatim repeat of this many symbols at a distance beyond `max_period` warns. On
    /// (not `0`), near-loop coverage whose repeats come from further back than half the near
    /// window warns too: both are a passage said again from far back. `0` (off) or
    /// `ngram..window`.
    pub long_warn_run: u32,
    /// A verbatim repeat of this many symbols at a distance beyond `max_period` halts.
    /// `0` (off) or `long_warn_run..window`.
    pub long_halt_run: u32,
    /// Symbols over which near-loop coverage is measured. `0` (off) or `16..=window`.
    pub near_window: u32,
    /// Share of the recent symbols whose n-gram was already seen, to warn. `(0, 1]`. On ids
    /// alone the n-grams are `ngram` long; on a stream with text (and `near_halt` set) they are
    /// 4-grams, see `near_halt`.
    pub near_warn: f32,
    /// Share of the recent symbols already seen, to halt once it lasts `near_patience`.
    /// `0` (off: near loops only warn) or `[near_warn, 1]`. Near loops halt only on streams with
    /// text (pieces or text alone). There the coverage counts 4-grams seen in the last few
    /// hundred symbols, and leaves out symbols in code fences, tables, indented lines, `field:`
    /// lines, lines that begin with markup, a date or a drawn rule, headings (lines ending in
    /// `:`) and the opening symbols of bullet items: on ids alone they warn.
    pub near_halt: f32,
    /// Symbols, while the coverage stays at or above `near_halt`, before halting; only the
    /// symbols pushed while the latest repeat came from within half the near window count
    /// (two copies in view), the others neither count nor break the count. `0..=65536`.
    pub near_patience: u32,
    /// Bytes in a run of one character (or a unit of up to 4 bytes) that warn. `0` (off) or
    /// `4..=16384`.
    pub char_run_warn: u32,
    /// Bytes in such a run that halt. `0` (off) or `char_run_warn..=16384`.
    pub char_run_halt: u32,
    /// Bytes in a run made only of white space or rule characters (`-=_*#~.|+/\``) that halt.
    /// Such runs never warn: indentation and horizontal rules are normal. `0` (off) or
    /// `16..=16384`.
    pub separator_run_halt: u32,
    /// Copies of a line, or of a block of up to 16 lines, that warn. `0` (off) or `2..`.
    pub line_warn_copies: u32,
    /// Copies of a line or block of lines that halt. `0` (off) or `line_warn_copies..=1000`.
    pub line_halt_copies: u32,
    /// Letters a line needs to count for the line detector: number-only and rule lines are
    /// skipped. `0..=1000`.
    pub line_min_letters: u32,
    /// Copies of a template re-filled in code (a block of two lines or more whose skeleton,
    /// names and numbers read as placeholders, comes back sibling after sibling: a test case,
    /// a function, a table entry) that warn. People write a dozen siblings at times (SQL
    /// declarations, schemas, test suites), so this only warns. `0` (off) or `2..=1000`.
    pub template_warn: u32,
    /// Copies of one template the host allows: the copy after them halts. A host that asked
    /// for one function or one test knows how many siblings are waste. `0` (off, the default)
    /// or `2..=1000`.
    pub template_budget: u32,
    /// Inside code fences, markdown tables and indented lines, near-loop patience is multiplied
    /// by this factor (and line loops only warn there). `1.0..=16.0`.
    pub structure_slack: f32,
    /// Texts that reset detection when they appear (for example `"</think>"`). At most 64,
    /// each 1..=256 bytes.
    pub breakers: Vec<String>,
    /// Texts that make a repetition acceptable when the repeated block contains one (asked-for
    /// repetition, such as a refrain the user wants). At most 64, each 1..=256 bytes.
    pub exempt: Vec<String>,
    /// Symbols of uninterrupted warnings after which the guard halts. `0` (never) or `16..`.
    pub escalate_after: u32,
    /// The text that opens a reasoning section (`"<think>"`), or empty: the stream then
    /// begins inside one when `reasoning_end` is set (as when the chat template opened it). At
    /// most 64 bytes.
    pub reasoning_start: String,
    /// The text that ends a reasoning section (`"</think>"`), or empty (off). When set, a loop
    /// inside the reasoning of a stream with text answers [`Action::EndReasoning`] instead of
    /// a halt: the host forces this text, and the guard, reading it, forgets the reasoning's
    /// loops and watches the answer. At most 64 bytes.
    ///
    /// [`Action::EndReasoning`]: crate::Action::EndReasoning
    pub reasoning_end: String,
    /// The model generating the stream (`"SmolLM2-135M-Instruct"`, `"google/gemma-3-270m"`),
    /// or empty. A name that a per-model profile matches (see [`crate::PROFILES`]) has that
    /// profile's adjustments applied to these settings when the config is built; any other
    /// name changes nothing. At most 256 bytes.
    pub model: String,
}

impl Default for StreamSettings {
    fn default() -> Self {
        StreamSettings::preset(Preset::Balanced)
    }
}

impl StreamSettings {
    /// The settings of a named preset.
    pub fn preset(preset: Preset) -> StreamSettings {
        let balanced = StreamSettings {
            min_period: 1,
            max_period: 256,
            // Off: with 8-grams the index alone finds every period up to 8 exactly, and every
            // longer loop whose block holds an 8-gram once, at a fraction of the cost per token.
            dense_periods: 0,
            halt_copies: 3,
            halt_span: 40,
            // A warning says a loop is likely. Two copies of a phrase, and a passage quoted
            // once from far back, are how people write: they were most of the warnings on
            // human documents (package descriptions, copyright files, type stubs, manual
            // pages). So a loop warns with the copies a halt needs, before its span does, and
            // a long repeat only halts.
            warn_copies: 3,
            warn_span: 16,
            window: 2048,
            ngram: 8,
            long_warn_run: 0,
            long_halt_run: 256,
            near_window: 256,
            near_warn: 0.35,
            // Human ChangeLogs, copyright files, NEWS files and code reach any coverage a near
            // loop does, but on indented lines, field lines, dated lines, markup, headings,
            // bullet openings, fences and tables, which coverage leaves out when the text is
            // known. Without text near loops only warn.
            near_halt: 0.45,
            near_patience: 32,
            char_run_warn: 24,
            char_run_halt: 96,
            separator_run_halt: 2048,
            line_warn_copies: 3,
            line_halt_copies: 8,
            line_min_letters: 4,
            template_warn: 12,
            template_budget: 0,
            structure_slack: 2.0,
            breakers: Vec::new(),
            exempt: Vec::new(),
            escalate_after: 0,
            reasoning_start: String::new(),
            reasoning_end: String::new(),
            model: String::new(),
        };
        match preset {
            Preset::Balanced => balanced,
            Preset::Strict => StreamSettings {
                halt_span: 32,
                // Warnings escalate here: they come at two copies, as early as they can.
                warn_copies: 2,
                warn_span: 12,
                long_warn_run: 48,
                long_halt_run: 128,
                // Warnings that last escalate to halts here: a near-loop warning needs more
                // coverage than at the default, or human changelogs escalate.
                near_warn: 0.4,
                near_halt: 0.45,
                near_patience: 32,
                char_run_warn: 16,
                char_run_halt: 64,
                line_halt_copies: 6,
                escalate_after: 512,
                ..balanced
            },
            Preset::Lenient => StreamSettings {
                halt_copies: 4,
                halt_span: 64,
                warn_span: 32,
                long_halt_run: 512,
                near_warn: 0.45,
                near_halt: 0.55,
                near_patience: 64,
                char_run_warn: 48,
                char_run_halt: 256,
                line_warn_copies: 4,
                line_halt_copies: 12,
                ..balanced
            },
        }
    }

    /// Settings that halt on exactly the token where vLLM's `repetition_detection` stops a
    /// request with the same parameters: the last `min_count` blocks of some length
    /// `p` in `min_pattern_size..=max_pattern_size` are identical. Every other detector is off.
    ///
    /// As in vLLM, a `min_pattern_size` of 0 means 1. Unlike vLLM, which silently disables the
    /// check, `max_pattern_size == 0` or `min_count < 2` are errors at [`StreamConfig::new`],
    /// as is a `max_pattern_size` above 4096.
    pub fn vllm_compatible(
        min_pattern_size: u32,
        max_pattern_size: u32,
        min_count: u32,
    ) -> StreamSettings {
        let min = min_pattern_size.max(1);
        StreamSettings {
            min_period: min,
            max_period: max_pattern_size,
            dense_periods: max_pattern_size,
            halt_copies: min_count,
            halt_span: 0,
            warn_copies: 0,
            warn_span: 0,
            window: (max_pattern_size.saturating_add(MAX_NGRAM + 1))
                .next_power_of_two()
                .max(64),
            ngram: 1,
            long_warn_run: 0,
            long_halt_run: 0,
            near_window: 0,
            char_run_warn: 0,
            char_run_halt: 0,
            separator_run_halt: 0,
            line_warn_copies: 0,
            line_halt_copies: 0,
            template_warn: 0,
            template_budget: 0,
            escalate_after: 0,
            ..StreamSettings::default()
        }
    }
}

/// A configuration value outside its allowed range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The field, as named in [`StreamSettings`] (or [`AgentSettings`](crate::AgentSettings);
    /// a field of a nested table is named with its path, `message_text.halt_span`).
    pub field: Cow<'static, str>,
    /// The value that was given.
    pub value: String,
    /// What is allowed, in words.
    pub allowed: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid {} = {}: allowed {}",
            self.field, self.value, self.allowed
        )
    }
}

impl std::error::Error for ConfigError {}

pub(crate) fn check_u32(field: &'static str, v: u32, lo: u32, hi: u32) -> Result<(), ConfigError> {
    if v < lo || v > hi {
        return Err(ConfigError {
            field: field.into(),
            value: v.to_string(),
            allowed: format!("{lo}..={hi}"),
        });
    }
    Ok(())
}

/// `0` turns the rule off; anything else must lie in `lo..=hi`.
pub(crate) fn check_off_or(
    field: &'static str,
    v: u32,
    lo: u32,
    hi: u32,
) -> Result<(), ConfigError> {
    if v == 0 {
        return Ok(());
    }
    check_u32(field, v, lo, hi).map_err(|e| ConfigError {
        allowed: format!("0 (off) or {}", e.allowed),
        ..e
    })
}

pub(crate) fn check_f32(field: &'static str, v: f32, lo: f32, hi: f32) -> Result<(), ConfigError> {
    if !(v >= lo && v <= hi) {
        return Err(ConfigError {
            field: field.into(),
            value: v.to_string(),
            allowed: format!("{lo}..={hi}"),
        });
    }
    Ok(())
}

/// A fraction above 0 and at most `hi` (NaN is refused, as is every value outside).
pub(crate) fn check_positive_f32(field: &'static str, v: f32, hi: f32) -> Result<(), ConfigError> {
    if !(v > 0.0 && v <= hi) {
        return Err(ConfigError {
            field: field.into(),
            value: v.to_string(),
            allowed: format!("a number above 0 and at most {hi}"),
        });
    }
    Ok(())
}

pub(crate) fn check_patterns(field: &'static str, pats: &[String]) -> Result<(), ConfigError> {
    if pats.len() > 64 {
        return Err(ConfigError {
            field: field.into(),
            value: format!("{} patterns", pats.len()),
            allowed: "at most 64 patterns".into(),
        });
    }
    if let Some(p) = pats.iter().find(|p| p.is_empty() || p.len() > 256) {
        return Err(ConfigError {
            field: field.into(),
            value: format!("a pattern of {} bytes", p.len()),
            allowed: "patterns of 1..=256 bytes".into(),
        });
    }
    Ok(())
}

/// Bytes of a reasoning marker (`reasoning_start`, `reasoning_end`).
pub const MAX_MARKER: usize = 64;

/// The names of every field of [`StreamSettings`], in declaration order.
pub const SETTINGS_FIELDS: &[&str] = &[
    "min_period",
    "max_period",
    "dense_periods",
    "halt_copies",
    "halt_span",
    "warn_copies",
    "warn_span",
    "window",
    "ngram",
    "long_warn_run",
    "long_halt_run",
    "near_window",
    "near_warn",
    "near_halt",
    "near_patience",
    "char_run_warn",
    "char_run_halt",
    "separator_run_halt",
    "line_warn_copies",
    "line_halt_copies",
    "line_min_letters",
    "template_warn",
    "template_budget",
    "structure_slack",
    "breakers",
    "exempt",
    "escalate_after",
    "reasoning_start",
    "reasoning_end",
    "model",
];

impl StreamSettings {
    /// Sets one field by name from its text form (numbers as written; `breakers` and `exempt`
    /// take one pattern each call, appended). Ranges are checked later, by [`validate`](Self::validate).
    pub fn set(&mut self, field: &str, value: &str) -> Result<(), ConfigError> {
        fn num<T: std::str::FromStr>(field: &'static str, value: &str) -> Result<T, ConfigError> {
            value.trim().parse().map_err(|_| ConfigError {
                field: field.into(),
                value: value.to_string(),
                allowed: "a number".into(),
            })
        }
        let s = self;
        match field {
            "min_period" => s.min_period = num("min_period", value)?,
            "max_period" => s.max_period = num("max_period", value)?,
            "dense_periods" => s.dense_periods = num("dense_periods", value)?,
            "halt_copies" => s.halt_copies = num("halt_copies", value)?,
            "halt_span" => s.halt_span = num("halt_span", value)?,
            "warn_copies" => s.warn_copies = num("warn_copies", value)?,
            "warn_span" => s.warn_span = num("warn_span", value)?,
            "window" => s.window = num("window", value)?,
            "ngram" => s.ngram = num("ngram", value)?,
            "long_warn_run" => s.long_warn_run = num("long_warn_run", value)?,
            "long_halt_run" => s.long_halt_run = num("long_halt_run", value)?,
            "near_window" => s.near_window = num("near_window", value)?,
            "near_warn" => s.near_warn = num("near_warn", value)?,
            "near_halt" => s.near_halt = num("near_halt", value)?,
            "near_patience" => s.near_patience = num("near_patience", value)?,
            "char_run_warn" => s.char_run_warn = num("char_run_warn", value)?,
            "char_run_halt" => s.char_run_halt = num("char_run_halt", value)?,
            "separator_run_halt" => s.separator_run_halt = num("separator_run_halt", value)?,
            "line_warn_copies" => s.line_warn_copies = num("line_warn_copies", value)?,
            "line_halt_copies" => s.line_halt_copies = num("line_halt_copies", value)?,
            "line_min_letters" => s.line_min_letters = num("line_min_letters", value)?,
            "template_warn" => s.template_warn = num("template_warn", value)?,
            "template_budget" => s.template_budget = num("template_budget", value)?,
            "structure_slack" => s.structure_slack = num("structure_slack", value)?,
            "breakers" => s.breakers.push(value.to_string()),
            "exempt" => s.exempt.push(value.to_string()),
            "escalate_after" => s.escalate_after = num("escalate_after", value)?,
            "reasoning_start" => s.reasoning_start = value.to_string(),
            "reasoning_end" => s.reasoning_end = value.to_string(),
            "model" => s.model = value.to_string(),
            _ => {
                return Err(ConfigError {
                    field: "(name)".into(),
                    value: field.to_string(),
                    allowed: format!("one of {}", SETTINGS_FIELDS.join(", ")),
                })
            }
        }
        Ok(())
    }

    /// Checks every field against its allowed range; the first field out of range is named.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let s = self;
        check_u32("max_period", s.max_period, 1, MAX_PERIOD_LIMIT)?;
        check_u32("min_period", s.min_period, 1, s.max_period)?;
        check_u32("ngram", s.ngram, 1, MAX_NGRAM)?;
        check_off_or("dense_periods", s.dense_periods, 1, s.max_period)?;
        check_u32("halt_copies", s.halt_copies, 2, 1000)?;
        check_u32("halt_span", s.halt_span, 0, 65536)?;
        check_off_or("warn_copies", s.warn_copies, 2, 1000)?;
        check_u32("warn_span", s.warn_span, 0, 65536)?;
        if !s.window.is_power_of_two() || s.window < 64 || s.window > MAX_WINDOW {
            return Err(ConfigError {
                field: "window".into(),
                value: s.window.to_string(),
                allowed: "a power of two in 64..=65536".into(),
            });
        }
        if s.window <= s.max_period + s.ngram {
            return Err(ConfigError {
                field: "window".into(),
                value: s.window.to_string(),
                allowed: format!(
                    "greater than max_period + ngram = {}",
                    s.max_period + s.ngram
                ),
            });
        }
        check_off_or("long_warn_run", s.long_warn_run, s.ngram, s.window - 1)?;
        check_off_or(
            "long_halt_run",
            s.long_halt_run,
            s.long_warn_run.max(s.ngram),
            s.window - 1,
        )?;
        check_off_or("near_window", s.near_window, 16, s.window)?;
        check_positive_f32("near_warn", s.near_warn, 1.0)?;
        if s.near_halt != 0.0 {
            check_f32("near_halt", s.near_halt, s.near_warn, 1.0).map_err(|e| ConfigError {
                allowed: format!("0 (off) or {}", e.allowed),
                ..e
            })?;
        }
        check_u32("near_patience", s.near_patience, 0, 65536)?;
        check_off_or("char_run_warn", s.char_run_warn, 4, MAX_RUN)?;
        check_off_or(
            "char_run_halt",
            s.char_run_halt,
            s.char_run_warn.max(4),
            MAX_RUN,
        )?;
        check_off_or("separator_run_halt", s.separator_run_halt, 16, MAX_RUN)?;
        check_off_or("line_warn_copies", s.line_warn_copies, 2, 1000)?;
        check_off_or(
            "line_halt_copies",
            s.line_halt_copies,
            s.line_warn_copies.max(2),
            1000,
        )?;
        check_u32("line_min_letters", s.line_min_letters, 0, 1000)?;
        check_off_or("template_warn", s.template_warn, 2, 1000)?;
        check_off_or("template_budget", s.template_budget, 2, 1000)?;
        check_f32("structure_slack", s.structure_slack, 1.0, 16.0)?;
        check_patterns("breakers", &s.breakers)?;
        check_patterns("exempt", &s.exempt)?;
        check_off_or("escalate_after", s.escalate_after, 16, u32::MAX)?;
        for (field, marker) in [
            ("reasoning_start", &s.reasoning_start),
            ("reasoning_end", &s.reasoning_end),
        ] {
            if marker.len() > MAX_MARKER {
                return Err(ConfigError {
                    field: field.into(),
                    value: format!("a marker of {} bytes", marker.len()),
                    allowed: format!("empty or 1..={MAX_MARKER} bytes"),
                });
            }
        }
        if s.model.len() > 256 {
            return Err(ConfigError {
                field: "model".into(),
                value: format!("a name of {} bytes", s.model.len()),
                allowed: "a model name of at most 256 bytes".into(),
            });
        }
        if !s.reasoning_start.is_empty() && s.reasoning_end.is_empty() {
            return Err(ConfigError {
                field: "reasoning_end".into(),
                value: "empty".into(),
                allowed: "a marker whenever reasoning_start is set".into(),
            });
        }
        Ok(())
    }
}

/// A validated, immutable stream configuration.
///
/// Cheap to clone (one reference count) and safe to share between threads: build it once
/// and hand it to every [`StreamGuard`](crate::StreamGuard).
#[derive(Clone)]
pub struct StreamConfig {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) settings: StreamSettings,
    /// Steps byte by byte across pushes to find breakers without allocating.
    pub(crate) breakers: Option<DFA>,
    /// Searched in the repeated block, only when a detector fires.
    pub(crate) exempt: Option<AhoCorasick>,
    /// The reasoning markers, when `reasoning_end` is set.
    pub(crate) reasoning: Option<Markers>,
    /// The per-model profile applied to `settings`, if `model` named one.
    pub(crate) profile: Option<&'static Profile>,
}

impl fmt::Debug for StreamConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamConfig")
            .field("settings", &self.inner.settings)
            .finish()
    }
}

impl Default for StreamConfig {
    fn default() -> Self {
        StreamConfig::new(&StreamSettings::default()).expect("the default settings are valid")
    }
}

impl StreamConfig {
    /// Validates `settings` and compiles its patterns.
    pub fn new(settings: &StreamSettings) -> Result<StreamConfig, ConfigError> {
        settings.validate()?;
        // The model's profile adjusts the settings as given; the result is checked again.
        let profile = profile_for(&settings.model);
        let adjusted;
        let settings = match profile {
            Some(p) => {
                let mut s = settings.clone();
                p.apply(&mut s);
                s.validate()?;
                adjusted = s;
                &adjusted
            }
            None => settings,
        };
        let breakers = if settings.breakers.is_empty() {
            None
        } else {
            Some(
                DFA::builder()
                    .match_kind(MatchKind::Standard)
                    .build(&settings.breakers)
                    .map_err(|e| ConfigError {
                        field: "breakers".into(),
                        value: e.to_string(),
                        allowed: "patterns that compile into a DFA".into(),
                    })?,
            )
        };
        let exempt = if settings.exempt.is_empty() {
            None
        } else {
            Some(AhoCorasick::new(&settings.exempt).map_err(|e| ConfigError {
                field: "exempt".into(),
                value: e.to_string(),
                allowed: "patterns that compile".into(),
            })?)
        };
        Ok(StreamConfig {
            inner: Arc::new(Inner {
                settings: settings.clone(),
                breakers,
                exempt,
                reasoning: Markers::new(&settings.reasoning_start, &settings.reasoning_end),
                profile,
            }),
        })
    }

    /// The configuration of a named preset.
    pub fn preset(preset: Preset) -> StreamConfig {
        StreamConfig::new(&StreamSettings::preset(preset)).expect("presets are valid")
    }

    /// The settings this configuration was built from, with the model's profile applied.
    pub fn settings(&self) -> &StreamSettings {
        &self.inner.settings
    }

    /// The per-model profile applied, if `model` named one.
    pub fn profile(&self) -> Option<&'static Profile> {
        self.inner.profile
    }
}
