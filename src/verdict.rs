//! What a guard answers: an [`Action`] and, when it is not `Continue`, the evidence.

/// What the caller should do with the stream after this push.
///
/// The order is meaningful: `Continue < Warn < Block < EndReasoning < Halt`. A
/// [`StreamGuard`] answers `Continue`, `Warn` or `Halt`, and `EndReasoning` when it was given a
/// reasoning end marker; an [`AgentGuard`] also answers `Block`.
///
/// The discriminants follow the order, so that comparing two actions is comparing two bytes
/// on the per-token path. They are not the C values: `lg_action` only appends
/// (`LG_ACTION_END_REASONING` is 4, `LG_ACTION_HALT` 3), and the C ABI maps one to the other.
///
/// [`StreamGuard`]: crate::StreamGuard
/// [`AgentGuard`]: crate::AgentGuard
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum Action {
    /// Nothing looks wrong.
    #[default]
    Continue = 0,
    /// First evidence of repetition: log it, surface it, maybe lower the temperature.
    Warn = 1,
    /// Do not run this tool call: the loop is established (agent guard only). The session may
    /// go on with a different call.
    Block = 2,
    /// The stream loops inside its reasoning (between the configured markers, such as
    /// `<think>` and `</think>`): end the reasoning, not the sequence. The host forces the end
    /// marker (`StreamSettings::reasoning_end`) as the next tokens; the guard forgets the
    /// reasoning's loops when it reads the marker and watches the answer as usual. Until then
    /// every push answers `EndReasoning` again.
    EndReasoning = 3,
    /// The repetition persists: stop generating. A halt is sticky until [`reset`].
    ///
    /// [`reset`]: crate::StreamGuard::reset
    Halt = 4,
}

impl Action {
    /// The name used in logs and JSON (`"continue"`, `"warn"`, `"block"`, `"halt"`,
    /// `"end_reasoning"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Continue => "continue",
            Action::Warn => "warn",
            Action::Block => "block",
            Action::Halt => "halt",
            Action::EndReasoning => "end_reasoning",
        }
    }
}

/// Which detector produced the evidence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum LoopKind {
    /// No evidence.
    #[default]
    None = 0,
    /// Back-to-back copies of one block of symbols (`period` ≤ `max_period`).
    ExactLoop = 1,
    /// A long block that recurs verbatim far back in the window (`period` > `max_period`).
    LongRepeat = 2,
    /// Copies that vary a little: most recent n-grams were already seen in the window.
    NearLoop = 3,
    /// One character, or a unit of up to four bytes, repeated (`"!!!!"`, `"hahaha"`).
    CharRun = 4,
    /// One word repeated back to back (`"the the the"`).
    WordStutter = 5,
    /// Lines, or a block of lines, repeated; digits are folded so counters do not hide it.
    RepeatedLines = 6,
    /// Lines, or a block of lines, repeated with a counter that steps by the same amount
    /// every copy (`== 39`, `== 40`, `== 41`; unit: lines), or a count within the text, the
    /// same few bytes around a number that steps (`1, 2, 3, …`, `age = 19`, `age = 20`, …;
    /// unit: bytes, the period a copy's length).
    CounterLadder = 7,
    /// Names that grow, each an earlier one plus a suffix (`f_with_x`, `f_with_x_with_x`).
    GrowingRepeat = 8,
    /// A block of code lines re-filled sibling after sibling: the same skeleton (names,
    /// numbers and words read as placeholders) again and again (unit: lines).
    TemplateRunaway = 9,
}

impl LoopKind {
    /// The snake-case name used in logs and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            LoopKind::None => "none",
            LoopKind::ExactLoop => "exact_loop",
            LoopKind::LongRepeat => "long_repeat",
            LoopKind::NearLoop => "near_loop",
            LoopKind::CharRun => "char_run",
            LoopKind::WordStutter => "word_stutter",
            LoopKind::RepeatedLines => "repeated_lines",
            LoopKind::CounterLadder => "counter_ladder",
            LoopKind::GrowingRepeat => "growing_repeat",
            LoopKind::TemplateRunaway => "template_runaway",
        }
    }
}

/// The unit that [`Verdict::period`] and [`Verdict::span`] count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum Unit {
    /// Stream symbols: token ids for [`push_token`], words for [`push_text`].
    ///
    /// [`push_token`]: crate::StreamGuard::push_token
    /// [`push_text`]: crate::StreamGuard::push_text
    #[default]
    Symbol = 0,
    /// Bytes of text.
    Byte = 1,
    /// Lines of text.
    Line = 2,
}

/// The answer to one push: what to do, and why.
///
/// Plain data (`Copy`), so it crosses the C ABI as it is. When `action` is
/// `Continue` the evidence fields are zero and `kind` is [`LoopKind::None`].
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Verdict {
    /// What the caller should do.
    pub action: Action,
    /// Which detector produced the evidence.
    pub kind: LoopKind,
    /// The unit of `period` and `span`.
    pub unit: Unit,
    /// Length of the repeated block, in `unit`s.
    pub period: u32,
    /// Number of copies of the block seen so far (fractional: 3.5 is three and a half copies).
    pub repeats: f32,
    /// Length of the repetitive region, from the onset to now, in `unit`s.
    pub span: u32,
    /// Index of the first symbol of the first copy, counted from the start of the stream (or
    /// the last reset). Symbols are token ids, or words for text-only streams. A loop found in
    /// the text (lines, characters) that began more than 256 symbols back reports the oldest
    /// symbol whose place is kept; `onset_byte` is then the exact start. In a text-only stream
    /// a loop of symbols that began that far back reports the oldest symbol kept and its byte
    /// (it began there or before).
    pub onset: u64,
    /// Byte offset of the onset in the stream's text, when the text is known and still held.
    pub onset_byte: Option<u64>,
    /// Index of the symbol whose push produced this verdict.
    pub at: u64,
    /// How sure the guard is that this is degenerate repetition, in `[0, 1]`.
    pub confidence: f32,
}

impl Verdict {
    /// `true` unless the action is `Continue`.
    pub fn is_loop(&self) -> bool {
        self.action != Action::Continue
    }
}
