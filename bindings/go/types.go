package loopguard

// #include "loopguard.h"
import "C"

import "fmt"

// Action is what the caller should do with a sequence or an agent's call.
type Action uint8

// The actions, weakest first.
const (
	// Continue: nothing looks wrong.
	Continue Action = C.LG_ACTION_CONTINUE
	// Warn: first evidence of repetition.
	Warn Action = C.LG_ACTION_WARN
	// Block: do not run this tool call (agent guard only); the session may go on.
	Block Action = C.LG_ACTION_BLOCK
	// Halt: the repetition persists; stop generating. Sticky until reset.
	Halt Action = C.LG_ACTION_HALT
	// EndReasoning: a loop inside the reasoning (a guard configured with a reasoning end
	// marker): force the marker instead of stopping. Ordered before Halt, numbered after it.
	EndReasoning Action = C.LG_ACTION_END_REASONING
)

func (a Action) String() string {
	switch a {
	case Continue:
		return "continue"
	case Warn:
		return "warn"
	case Block:
		return "block"
	case Halt:
		return "halt"
	case EndReasoning:
		return "end_reasoning"
	}
	return fmt.Sprintf("action(%d)", uint8(a))
}

// Kind is the detector that produced a stream verdict's evidence.
type Kind uint8

// The stream detectors (lg_kind). Values are only appended.
const (
	KindNone          Kind = C.LG_KIND_NONE
	KindExactLoop     Kind = C.LG_KIND_EXACT_LOOP
	KindLongRepeat    Kind = C.LG_KIND_LONG_REPEAT
	KindNearLoop      Kind = C.LG_KIND_NEAR_LOOP
	KindCharRun       Kind = C.LG_KIND_CHAR_RUN
	KindWordStutter   Kind = C.LG_KIND_WORD_STUTTER
	KindRepeatedLines Kind = C.LG_KIND_REPEATED_LINES
	KindCounterLadder Kind = C.LG_KIND_COUNTER_LADDER
	KindGrowingRepeat Kind = C.LG_KIND_GROWING_REPEAT
	// KindTemplateRunaway is a block of code lines re-filled sibling after sibling.
	KindTemplateRunaway Kind = C.LG_KIND_TEMPLATE_RUNAWAY
)

var kindNames = [...]string{"none", "exact_loop", "long_repeat", "near_loop", "char_run",
	"word_stutter", "repeated_lines", "counter_ladder", "growing_repeat", "template_runaway"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Unit is what a verdict's Period and Span count.
type Unit uint8

// The units (lg_unit).
const (
	UnitSymbol Unit = C.LG_UNIT_SYMBOL
	UnitByte   Unit = C.LG_UNIT_BYTE
	UnitLine   Unit = C.LG_UNIT_LINE
)

func (u Unit) String() string {
	switch u {
	case UnitSymbol:
		return "symbols"
	case UnitByte:
		return "bytes"
	case UnitLine:
		return "lines"
	}
	return fmt.Sprintf("unit(%d)", uint8(u))
}

// Unknown is the value of Verdict.OnsetByte and the Stats positions when they are not known.
const Unknown = ^uint64(0)

// Verdict is a stream guard's answer with its evidence.
type Verdict struct {
	Action Action
	Kind   Kind
	// Unit is what Period and Span count.
	Unit Unit
	// Period is the length of the repeated block.
	Period uint32
	// Repeats is the copies of the block seen (fractional).
	Repeats float32
	// Span is the length of the repetitive region.
	Span uint32
	// Onset is the index of the first symbol of the first copy.
	Onset uint64
	// OnsetByte is the byte offset of the onset in the text, or Unknown.
	OnsetByte uint64
	// At is the index of the symbol whose push produced this verdict.
	At uint64
	// Confidence is how sure the guard is, in [0, 1].
	Confidence float32
}

func verdictFromC(v *C.struct_lg_verdict) Verdict {
	return Verdict{
		Action:     Action(v.action),
		Kind:       Kind(v.kind),
		Unit:       Unit(v.unit),
		Period:     uint32(v.period),
		Repeats:    float32(v.repeats),
		Span:       uint32(v.span),
		Onset:      uint64(v.onset),
		OnsetByte:  uint64(v.onset_byte),
		At:         uint64(v.at),
		Confidence: float32(v.confidence),
	}
}

func (v Verdict) String() string {
	if v.Kind == KindNone {
		return v.Action.String()
	}
	return fmt.Sprintf("%s: %s period %d %s x%.1f since %d", v.Action, v.Kind, v.Period, v.Unit,
		v.Repeats, v.Onset)
}

// Stats are a stream guard's counters.
type Stats struct {
	// Symbols pushed: token ids, or for text-only streams words, digits and line breaks.
	Symbols uint64
	// Bytes of text pushed.
	Bytes uint64
	// Warnings is the pushes that answered warn.
	Warnings uint64
	// FirstWarnAt is the symbol index of the first warning, or Unknown.
	FirstWarnAt uint64
	// HaltedAt is the symbol index of the halt, or Unknown.
	HaltedAt uint64
}

// Verbosity is how much Describe says.
type Verbosity int32

// The verbosities (lg_verbosity).
const (
	// Brief is one short line: `halt: exact_loop period 7 x5.7`.
	Brief Verbosity = C.LG_VERBOSITY_BRIEF
	// Summary is one sentence with the repeated text.
	Summary Verbosity = C.LG_VERBOSITY_SUMMARY
	// Full is every field, one `key: value` a line (for agents, the recovery text).
	Full Verbosity = C.LG_VERBOSITY_FULL
)

// AgentKind is the kind of agent loop.
type AgentKind uint8

// The agent loop kinds (lg_agent_kind). Values are only appended.
const (
	AgentKindNone              AgentKind = C.LG_AGENT_KIND_NONE
	AgentKindIdenticalCall     AgentKind = C.LG_AGENT_KIND_IDENTICAL_CALL
	AgentKindCycle             AgentKind = C.LG_AGENT_KIND_CYCLE
	AgentKindNoProgress        AgentKind = C.LG_AGENT_KIND_NO_PROGRESS
	AgentKindSameError         AgentKind = C.LG_AGENT_KIND_SAME_ERROR
	AgentKindWhackAMole        AgentKind = C.LG_AGENT_KIND_WHACK_A_MOLE
	AgentKindNearDuplicate     AgentKind = C.LG_AGENT_KIND_NEAR_DUPLICATE
	AgentKindSameResult        AgentKind = C.LG_AGENT_KIND_SAME_RESULT
	AgentKindSemanticRepeat    AgentKind = C.LG_AGENT_KIND_SEMANTIC_REPEAT
	AgentKindIdenticalMessages AgentKind = C.LG_AGENT_KIND_IDENTICAL_MESSAGES
	AgentKindMonologue         AgentKind = C.LG_AGENT_KIND_MONOLOGUE
	AgentKindOscillation       AgentKind = C.LG_AGENT_KIND_OSCILLATION
	AgentKindTextDegeneration  AgentKind = C.LG_AGENT_KIND_TEXT_DEGENERATION
	AgentKindContentChanting   AgentKind = C.LG_AGENT_KIND_CONTENT_CHANTING
	AgentKindRunawayText       AgentKind = C.LG_AGENT_KIND_RUNAWAY_TEXT
	AgentKindRejectedReplies   AgentKind = C.LG_AGENT_KIND_REJECTED_REPLIES
	AgentKindFailureStreak     AgentKind = C.LG_AGENT_KIND_FAILURE_STREAK
	AgentKindQuestionStreak    AgentKind = C.LG_AGENT_KIND_QUESTION_STREAK
	agentKinds                           = 18
)

var agentKindNames = [agentKinds]string{"none", "identical_call", "cycle", "no_progress",
	"same_error", "whack_a_mole", "near_duplicate", "same_result", "semantic_repeat",
	"identical_messages", "monologue", "oscillation", "text_degeneration", "content_chanting",
	"runaway_text", "rejected_replies", "failure_streak", "question_streak"}

func (k AgentKind) String() string {
	if int(k) < len(agentKindNames) {
		return agentKindNames[k]
	}
	return fmt.Sprintf("agent_kind(%d)", uint8(k))
}

// AgentVerdict is an agent guard's answer with its evidence.
type AgentVerdict struct {
	// Action: continue, warn, block (do not run this call) or halt.
	Action Action
	Kind   AgentKind
	// Reason is what the evidence rests on: 0 none, 1 repeated arguments, 2 no progress,
	// 3 repeated failure, 4 text, 5 state, 6 fixes that miss (a failure each edit between left
	// as it was, or failures edits brought back).
	Reason uint8
	// Recommendation is what to do: 0 nothing, 1 replan, 2 backtrack, 3 escalate.
	Recommendation uint8
	// ArgsInvalid is true when the call's arguments were not valid JSON.
	ArgsInvalid bool
	// Count is how many times the pattern occurred.
	Count uint32
	// Period is the calls per turn for cycles (1 for identical calls), 0 otherwise.
	Period uint32
	// Strikes is the detections so far in this scope.
	Strikes uint32
	// Confidence is how sure the guard is, in [0, 1].
	Confidence float32
	// Step is the index of the event that produced this verdict.
	Step uint64
	// EvidenceLen is the number of evidence steps (Evidence returns them).
	EvidenceLen uint64
}

func agentVerdictFromC(v *C.struct_lg_agent_verdict) AgentVerdict {
	return AgentVerdict{
		Action:         Action(v.action),
		Kind:           AgentKind(v.kind),
		Reason:         uint8(v.reason),
		Recommendation: uint8(v.recommendation),
		ArgsInvalid:    v.args_invalid != 0,
		Count:          uint32(v.count),
		Period:         uint32(v.period),
		Strikes:        uint32(v.strikes),
		Confidence:     float32(v.confidence),
		Step:           uint64(v.step),
		EvidenceLen:    uint64(v.evidence_len),
	}
}

func (v AgentVerdict) String() string {
	if v.Kind == AgentKindNone {
		return v.Action.String()
	}
	return fmt.Sprintf("%s: %s x%d", v.Action, v.Kind, v.Count)
}

// AgentStats are an agent session's counters.
type AgentStats struct {
	Checks, Calls, Detections, Warnings, Blocks, Halts, InvalidArgs uint64
	// HighestStrike is the highest strike count reached.
	HighestStrike uint32
	// ByKind counts detections per AgentKind, indexed by its value.
	ByKind [agentKinds]uint64
	// Rejections is the replies the harness rejected.
	Rejections uint64
}
