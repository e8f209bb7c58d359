package loopguard

// #include <stdint.h>
// #include <stdlib.h>
// #include "loopguard.h"
import "C"

import "unsafe"

// AgentPreset is a named starting point for an AgentConfig.
type AgentPreset int32

// The agent presets (lg_agent_preset). Values are only appended.
const (
	// AgentDefault warns on repeated arguments and blocks only on evidence of no progress.
	AgentDefault AgentPreset = C.LG_AGENT_PRESET_DEFAULT
	// GeminiCLI is gemini-cli's loop detection.
	GeminiCLI AgentPreset = C.LG_AGENT_PRESET_GEMINI_CLI
	// OpenHands is OpenHands' stuck detector.
	OpenHands AgentPreset = C.LG_AGENT_PRESET_OPENHANDS
	// RooCode is Roo Code's repetition limit.
	RooCode AgentPreset = C.LG_AGENT_PRESET_ROO_CODE
	// Cline is Cline's loop detection.
	Cline AgentPreset = C.LG_AGENT_PRESET_CLINE
)

// Thresholds are the counts at which one rule warns, blocks and halts; 0 = never.
type Thresholds struct{ Warn, Block, Halt uint32 }

func (t Thresholds) toC() C.struct_lg_thresholds {
	return C.struct_lg_thresholds{warn: C.uint32_t(t.Warn), block: C.uint32_t(t.Block), halt: C.uint32_t(t.Halt)}
}

func thresholdsFromC(t C.struct_lg_thresholds) Thresholds {
	return Thresholds{uint32(t.warn), uint32(t.block), uint32(t.halt)}
}

// ToolFlags say how the guard treats one tool.
type ToolFlags uint32

// The tool flags (LG_TOOL_*).
const (
	// ToolExempt: the tool is never checked.
	ToolExempt ToolFlags = C.LG_TOOL_EXEMPT
	// ToolPoller is called again and again by design: only identical results or errors count.
	ToolPoller ToolFlags = C.LG_TOOL_POLLER
	// ToolProgress: its success is progress; failure streaks restart.
	ToolProgress ToolFlags = C.LG_TOOL_PROGRESS
	// ToolFailureTolerant fails as part of normal work: its errors are not dead ends.
	ToolFailureTolerant ToolFlags = C.LG_TOOL_FAILURE_TOLERANT
	// ToolOwnRepeats: ToolPolicy.Repeats replaces the repeated-call thresholds for this tool.
	ToolOwnRepeats ToolFlags = C.LG_TOOL_OWN_REPEATS
	// ToolShell: its arguments are a shell command line.
	ToolShell ToolFlags = C.LG_TOOL_SHELL
)

// ToolPolicy is how the guard treats one tool, by exact name.
type ToolPolicy struct {
	Name  string
	Flags ToolFlags
	// IgnoredFields are argument keys ignored for this tool.
	IgnoredFields []string
	// Repeats replaces the repeated-call thresholds, with ToolOwnRepeats.
	Repeats Thresholds
}

// AgentConfig is every threshold of an agent guard (lg_agent_config; the Rust documentation
// of AgentSettings says what each field means). Start from DefaultAgentConfig or
// PresetAgentConfig and change fields. A nil list keeps the preset's; an empty non-nil list
// replaces it with none.
type AgentConfig struct {
	Preset                                        AgentPreset
	Window                                        uint32
	CanonicalArgs, ResultsAreProgress             bool
	ResetAfterBlock, UserResetsScope              bool
	Identical, Interleaved                        Thresholds
	InterleavedWindow                             uint32
	CycleMin, CycleMax                            uint32
	Cycle                                         Thresholds
	CycleTail                                     uint32
	SameError                                     Thresholds
	ErrorWindow                                   uint32
	WhackAMole, NoProgress, FailingRepeats        Thresholds
	NearDuplicate                                 Thresholds
	NearSimilarity                                float32
	NearWindow                                    uint32
	SameResult                                    Thresholds
	SameResultMinLen                              uint32
	SemanticRepeat                                Thresholds
	SemanticSimilarity                            float32
	SemanticWindow                                uint32
	IdenticalMessages, Monologue, Oscillation     Thresholds
	MessageTextSpan                               uint32
	MessageTextAction, ArgsOnlyCap, RunawayAction Action
	Chant                                         bool
	ChantChunk, ChantThreshold                    uint32
	ChantSpread, ChantHistory                     uint32
	RunawayChars, RunawayMs                       uint32
	HaltAfterStrikes, HaltAfterBlocks             uint32
	RejectedReplies, FailureStreak                Thresholds
	QuestionStreak                                Thresholds
	IgnoredFields, ProgressPatterns, ShellTools   []string
	Tools                                         []ToolPolicy
}

func b2u8(b bool) C.uint8_t {
	if b {
		return 1
	}
	return 0
}

func agentConfigFromC(c *C.struct_lg_agent_config) AgentConfig {
	return AgentConfig{
		Preset: AgentPreset(c.preset), Window: uint32(c.window),
		CanonicalArgs: c.canonical_args != 0, ResultsAreProgress: c.results_are_progress != 0,
		ResetAfterBlock: c.reset_after_block != 0, UserResetsScope: c.user_resets_scope != 0,
		Identical: thresholdsFromC(c.identical), Interleaved: thresholdsFromC(c.interleaved),
		InterleavedWindow: uint32(c.interleaved_window),
		CycleMin:          uint32(c.cycle_min), CycleMax: uint32(c.cycle_max),
		Cycle: thresholdsFromC(c.cycle), CycleTail: uint32(c.cycle_tail),
		SameError: thresholdsFromC(c.same_error), ErrorWindow: uint32(c.error_window),
		WhackAMole: thresholdsFromC(c.whack_a_mole), NoProgress: thresholdsFromC(c.no_progress),
		FailingRepeats: thresholdsFromC(c.failing_repeats),
		NearDuplicate:  thresholdsFromC(c.near_duplicate),
		NearSimilarity: float32(c.near_similarity), NearWindow: uint32(c.near_window),
		SameResult: thresholdsFromC(c.same_result), SameResultMinLen: uint32(c.same_result_min_len),
		SemanticRepeat:     thresholdsFromC(c.semantic_repeat),
		SemanticSimilarity: float32(c.semantic_similarity), SemanticWindow: uint32(c.semantic_window),
		IdenticalMessages: thresholdsFromC(c.identical_messages),
		Monologue:         thresholdsFromC(c.monologue), Oscillation: thresholdsFromC(c.oscillation),
		MessageTextSpan:   uint32(c.message_text_span),
		MessageTextAction: Action(c.message_text_action), ArgsOnlyCap: Action(c.args_only_cap),
		RunawayAction: Action(c.runaway_action),
		Chant:         c.chant != 0, ChantChunk: uint32(c.chant_chunk),
		ChantThreshold: uint32(c.chant_threshold), ChantSpread: uint32(c.chant_spread),
		ChantHistory: uint32(c.chant_history),
		RunawayChars: uint32(c.runaway_chars), RunawayMs: uint32(c.runaway_ms),
		HaltAfterStrikes: uint32(c.halt_after_strikes), HaltAfterBlocks: uint32(c.halt_after_blocks),
		RejectedReplies: thresholdsFromC(c.rejected_replies),
		FailureStreak:   thresholdsFromC(c.failure_streak),
		QuestionStreak:  thresholdsFromC(c.question_streak),
	}
}

// toC fills a C config in C memory, strings included; free releases it once the library has
// copied it.
func (a *AgentConfig) toC() (*C.struct_lg_agent_config, func()) {
	c := (*C.struct_lg_agent_config)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_lg_agent_config{}))))
	C.lg_agent_config_init(c)
	c.preset, c.window = C.int32_t(a.Preset), C.uint32_t(a.Window)
	c.canonical_args, c.results_are_progress = b2u8(a.CanonicalArgs), b2u8(a.ResultsAreProgress)
	c.reset_after_block, c.user_resets_scope = b2u8(a.ResetAfterBlock), b2u8(a.UserResetsScope)
	c.identical, c.interleaved = a.Identical.toC(), a.Interleaved.toC()
	c.interleaved_window = C.uint32_t(a.InterleavedWindow)
	c.cycle_min, c.cycle_max = C.uint32_t(a.CycleMin), C.uint32_t(a.CycleMax)
	c.cycle, c.cycle_tail = a.Cycle.toC(), C.uint32_t(a.CycleTail)
	c.same_error, c.error_window = a.SameError.toC(), C.uint32_t(a.ErrorWindow)
	c.whack_a_mole, c.no_progress = a.WhackAMole.toC(), a.NoProgress.toC()
	c.failing_repeats, c.near_duplicate = a.FailingRepeats.toC(), a.NearDuplicate.toC()
	c.near_similarity, c.near_window = C.float(a.NearSimilarity), C.uint32_t(a.NearWindow)
	c.same_result, c.same_result_min_len = a.SameResult.toC(), C.uint32_t(a.SameResultMinLen)
	c.semantic_repeat = a.SemanticRepeat.toC()
	c.semantic_similarity = C.float(a.SemanticSimilarity)
	c.semantic_window = C.uint32_t(a.SemanticWindow)
	c.identical_messages, c.monologue = a.IdenticalMessages.toC(), a.Monologue.toC()
	c.oscillation, c.message_text_span = a.Oscillation.toC(), C.uint32_t(a.MessageTextSpan)
	c.message_text_action, c.args_only_cap = C.uint8_t(a.MessageTextAction), C.uint8_t(a.ArgsOnlyCap)
	c.runaway_action, c.chant = C.uint8_t(a.RunawayAction), b2u8(a.Chant)
	c.chant_chunk, c.chant_threshold = C.uint32_t(a.ChantChunk), C.uint32_t(a.ChantThreshold)
	c.chant_spread, c.chant_history = C.uint32_t(a.ChantSpread), C.uint32_t(a.ChantHistory)
	c.runaway_chars, c.runaway_ms = C.uint32_t(a.RunawayChars), C.uint32_t(a.RunawayMs)
	c.halt_after_strikes = C.uint32_t(a.HaltAfterStrikes)
	c.halt_after_blocks = C.uint32_t(a.HaltAfterBlocks)
	c.rejected_replies, c.failure_streak = a.RejectedReplies.toC(), a.FailureStreak.toC()
	c.question_streak = a.QuestionStreak.toC()
	var frees []func()
	list := func(items []string) (*C.struct_lg_str, C.size_t) {
		if items == nil {
			return nil, 0
		}
		arr, n, free := cStrs(items)
		frees = append(frees, free)
		if arr == nil {
			// An empty list replaces the preset's with none: a non-NULL pointer, length 0.
			arr = (*C.struct_lg_str)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_lg_str{}))))
			frees = append(frees, func() { C.free(unsafe.Pointer(arr)) })
		}
		return arr, n
	}
	c.ignored_fields, c.ignored_fields_len = list(a.IgnoredFields)
	c.progress_patterns, c.progress_patterns_len = list(a.ProgressPatterns)
	c.shell_tools, c.shell_tools_len = list(a.ShellTools)
	if len(a.Tools) > 0 {
		size := C.size_t(len(a.Tools)) * C.size_t(unsafe.Sizeof(C.struct_lg_tool_policy{}))
		tools := (*C.struct_lg_tool_policy)(C.calloc(1, size))
		frees = append(frees, func() { C.free(unsafe.Pointer(tools)) })
		view := unsafe.Slice(tools, len(a.Tools))
		for i, t := range a.Tools {
			name, _, freeName := cStrs([]string{t.Name})
			frees = append(frees, freeName)
			if name != nil {
				view[i].name = *name
			}
			view[i].flags = C.uint32_t(t.Flags)
			view[i].ignored_fields, view[i].ignored_fields_len = list(t.IgnoredFields)
			view[i].repeats = t.Repeats.toC()
		}
		c.tools, c.tools_len = tools, C.size_t(len(a.Tools))
	}
	return c, func() {
		for _, f := range frees {
			f()
		}
		C.free(unsafe.Pointer(c))
	}
}

// DefaultAgentConfig is our default agent settings.
func DefaultAgentConfig() AgentConfig {
	var c C.struct_lg_agent_config
	C.lg_agent_config_init(&c)
	return agentConfigFromC(&c)
}

// PresetAgentConfig is a named preset's settings; an unknown one is an error.
func PresetAgentConfig(p AgentPreset) (AgentConfig, error) {
	var c C.struct_lg_agent_config
	if st := C.lg_agent_config_preset(&c, C.int32_t(p)); st != C.LG_OK {
		return AgentConfig{}, &Error{Op: "PresetAgentConfig", Status: Status(st),
			Message: "unknown agent preset: one of AgentDefault, GeminiCLI, OpenHands, RooCode, Cline"}
	}
	return agentConfigFromC(&c), nil
}

// Validate returns nil for a usable config, else an error naming the field and its range.
func (a *AgentConfig) Validate() error {
	c, free := a.toC()
	defer free()
	var buf [256]C.char
	if st := C.lg_agent_config_validate(c, &buf[0], C.size_t(len(buf))); st != C.LG_OK {
		return &Error{Op: "AgentConfig", Status: Status(st), Message: C.GoString(&buf[0])}
	}
	return nil
}
