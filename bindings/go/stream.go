package loopguard

// #include <stdint.h>
// #include <stdlib.h>
// #include "loopguard.h"
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Preset is a named stream configuration.
type Preset int32

// The presets (lg_preset).
const (
	// Strict halts earlier, with more warnings.
	Strict Preset = C.LG_PRESET_STRICT
	// Balanced is the default.
	Balanced Preset = C.LG_PRESET_BALANCED
	// Lenient halts only long, unambiguous loops.
	Lenient Preset = C.LG_PRESET_LENIENT
)

// StreamConfig is every threshold of a stream guard (lg_stream_config; the README and the
// header give each field's range). Start from DefaultStreamConfig, PresetStreamConfig or
// VLLMStreamConfig and change fields; NewStreamGuard and NewPool check it and copy it.
type StreamConfig struct {
	MinPeriod, MaxPeriod, DensePeriods uint32
	HaltCopies, HaltSpan               uint32
	WarnCopies, WarnSpan               uint32
	Window, Ngram                      uint32
	LongWarnRun, LongHaltRun           uint32
	NearWindow                         uint32
	NearWarn, NearHalt                 float32
	NearPatience                       uint32
	CharRunWarn, CharRunHalt           uint32
	SeparatorRunHalt                   uint32
	LineWarnCopies, LineHaltCopies     uint32
	LineMinLetters                     uint32
	StructureSlack                     float32
	EscalateAfter                      uint32
	// TemplateWarn and TemplateBudget: copies of a template re-filled in code that warn, and
	// that the host allows before a halt (0: off).
	TemplateWarn, TemplateBudget uint32
	// Breakers are texts that reset detection when they appear (at most 64).
	Breakers []string
	// Exempt are texts that excuse a loop whose repeated block contains one (at most 64).
	Exempt []string
	// ReasoningStart and ReasoningEnd are the markers of a reasoning section ("<think>",
	// "</think>"; at most 64 bytes each). With ReasoningEnd set, a loop inside the reasoning
	// answers EndReasoning instead of Halt; an empty ReasoningStart means the stream begins
	// inside a section.
	ReasoningStart, ReasoningEnd string
	// Model names the model generating the stream ("SmolLM2-135M-Instruct"): a name a
	// per-model profile matches gets that profile's adjustments. At most 256 bytes.
	Model string
}

func streamConfigFromC(c *C.struct_lg_stream_config) StreamConfig {
	return StreamConfig{
		MinPeriod: uint32(c.min_period), MaxPeriod: uint32(c.max_period),
		DensePeriods: uint32(c.dense_periods),
		HaltCopies:   uint32(c.halt_copies), HaltSpan: uint32(c.halt_span),
		WarnCopies: uint32(c.warn_copies), WarnSpan: uint32(c.warn_span),
		Window: uint32(c.window), Ngram: uint32(c.ngram),
		LongWarnRun: uint32(c.long_warn_run), LongHaltRun: uint32(c.long_halt_run),
		NearWindow: uint32(c.near_window),
		NearWarn:   float32(c.near_warn), NearHalt: float32(c.near_halt),
		NearPatience: uint32(c.near_patience),
		CharRunWarn:  uint32(c.char_run_warn), CharRunHalt: uint32(c.char_run_halt),
		SeparatorRunHalt: uint32(c.separator_run_halt),
		LineWarnCopies:   uint32(c.line_warn_copies), LineHaltCopies: uint32(c.line_halt_copies),
		LineMinLetters: uint32(c.line_min_letters),
		StructureSlack: float32(c.structure_slack),
		EscalateAfter:  uint32(c.escalate_after),
		TemplateWarn:   uint32(c.template_warn), TemplateBudget: uint32(c.template_budget),
	}
}

// toC fills a C config (in C memory, with its strings); free releases it once the library has
// copied it.
func (s *StreamConfig) toC() (*C.struct_lg_stream_config, func()) {
	c := (*C.struct_lg_stream_config)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_lg_stream_config{}))))
	C.lg_stream_config_init(c)
	c.min_period, c.max_period = C.uint32_t(s.MinPeriod), C.uint32_t(s.MaxPeriod)
	c.dense_periods = C.uint32_t(s.DensePeriods)
	c.halt_copies, c.halt_span = C.uint32_t(s.HaltCopies), C.uint32_t(s.HaltSpan)
	c.warn_copies, c.warn_span = C.uint32_t(s.WarnCopies), C.uint32_t(s.WarnSpan)
	c.window, c.ngram = C.uint32_t(s.Window), C.uint32_t(s.Ngram)
	c.long_warn_run, c.long_halt_run = C.uint32_t(s.LongWarnRun), C.uint32_t(s.LongHaltRun)
	c.near_window = C.uint32_t(s.NearWindow)
	c.near_warn, c.near_halt = C.float(s.NearWarn), C.float(s.NearHalt)
	c.near_patience = C.uint32_t(s.NearPatience)
	c.char_run_warn, c.char_run_halt = C.uint32_t(s.CharRunWarn), C.uint32_t(s.CharRunHalt)
	c.separator_run_halt = C.uint32_t(s.SeparatorRunHalt)
	c.line_warn_copies = C.uint32_t(s.LineWarnCopies)
	c.line_halt_copies = C.uint32_t(s.LineHaltCopies)
	c.line_min_letters = C.uint32_t(s.LineMinLetters)
	c.structure_slack = C.float(s.StructureSlack)
	c.escalate_after = C.uint32_t(s.EscalateAfter)
	c.template_warn = C.uint32_t(s.TemplateWarn)
	c.template_budget = C.uint32_t(s.TemplateBudget)
	breakers, nb, freeBreakers := cStrs(s.Breakers)
	exempt, ne, freeExempt := cStrs(s.Exempt)
	c.breakers, c.breakers_len = breakers, nb
	c.exempt, c.exempt_len = exempt, ne
	c.reasoning_start = cStr(s.ReasoningStart)
	c.reasoning_end = cStr(s.ReasoningEnd)
	c.model = cStr(s.Model)
	return c, func() {
		freeBreakers()
		freeExempt()
		C.free(unsafe.Pointer(c.reasoning_start.ptr))
		C.free(unsafe.Pointer(c.reasoning_end.ptr))
		C.free(unsafe.Pointer(c.model.ptr))
		C.free(unsafe.Pointer(c))
	}
}

// DefaultStreamConfig is the balanced preset.
func DefaultStreamConfig() StreamConfig {
	var c C.struct_lg_stream_config
	C.lg_stream_config_init(&c)
	return streamConfigFromC(&c)
}

// PresetStreamConfig is a named preset; an unknown one is an error.
func PresetStreamConfig(p Preset) (StreamConfig, error) {
	var c C.struct_lg_stream_config
	if st := C.lg_stream_config_preset(&c, C.int32_t(p)); st != C.LG_OK {
		return StreamConfig{}, &Error{Op: "PresetStreamConfig", Status: Status(st),
			Message: "unknown preset: one of Strict, Balanced, Lenient"}
	}
	return streamConfigFromC(&c), nil
}

// VLLMStreamConfig halts on exactly the token where vLLM's repetition_detection would with the
// same parameters, every other detector off (checked when the config is used).
func VLLMStreamConfig(minPatternSize, maxPatternSize, minCount uint32) StreamConfig {
	var c C.struct_lg_stream_config
	C.lg_stream_config_vllm(&c, C.uint32_t(minPatternSize), C.uint32_t(maxPatternSize),
		C.uint32_t(minCount))
	return streamConfigFromC(&c)
}

// Validate returns nil for a usable config, else an error naming the field and its range.
func (s *StreamConfig) Validate() error {
	c, free := s.toC()
	defer free()
	var buf [256]C.char
	if st := C.lg_stream_config_validate(c, &buf[0], C.size_t(len(buf))); st != C.LG_OK {
		return &Error{Op: "StreamConfig", Status: Status(st), Message: C.GoString(&buf[0])}
	}
	return nil
}

// StreamGuard watches one generated sequence. Not safe for concurrent use.
type StreamGuard struct {
	ptr *C.struct_lg_stream
	life
}

// NewStreamGuard creates a guard from config (nil: the balanced preset). It allocates about
// 16 KiB once; pushes never allocate.
func NewStreamGuard(config *StreamConfig) (*StreamGuard, error) {
	if config == nil {
		d := DefaultStreamConfig()
		config = &d
	}
	if err := config.Validate(); err != nil {
		return nil, err
	}
	c, free := config.toC()
	defer free()
	var ptr *C.struct_lg_stream
	if st := C.lg_stream_new(c, &ptr); st != C.LG_OK {
		return nil, fail("NewStreamGuard", st, nil)
	}
	return adoptStream(ptr), nil
}

func adoptStream(ptr *C.struct_lg_stream) *StreamGuard {
	g := &StreamGuard{ptr: ptr}
	opened()
	runtime.SetFinalizer(g, (*StreamGuard).free)
	return g
}

func (g *StreamGuard) free() {
	if g.ptr != nil {
		C.lg_stream_free(g.ptr)
		g.ptr = nil
		g.dropCalls()
		freed()
	}
}

// Close frees the guard; later calls return an error wrapping ErrClosed. Closing twice is
// fine. Called from the guard's own callback, it frees the guard when the push returns.
func (g *StreamGuard) Close() error {
	if g.closeNow() {
		g.free()
		runtime.SetFinalizer(g, nil)
	}
	return nil
}

func (g *StreamGuard) check(op string, st C.enum_lg_status) error {
	if st == C.LG_OK {
		return nil
	}
	return fail(op, st, C.lg_stream_last_error(g.ptr))
}

// PushToken pushes one generated token id with its text piece (nil for none) and answers
// what to do. Callbacks run during the call. After a halt every push answers Halt until Reset.
func (g *StreamGuard) PushToken(token uint32, piece []byte) (Action, error) {
	if g.ptr == nil {
		return Continue, closed("PushToken")
	}
	var a C.lg_action
	g.enter()
	defer g.leave(g.free)
	st := C.lg_stream_push_token(g.ptr, C.uint32_t(token), bytesPtr(piece), C.size_t(len(piece)), &a)
	runtime.KeepAlive(piece)
	return Action(a), g.check("PushToken", st)
}

// PushText pushes a chunk of text, for streams without token ids, and answers the strongest
// action reached in it.
func (g *StreamGuard) PushText(text string) (Action, error) {
	if g.ptr == nil {
		return Continue, closed("PushText")
	}
	var a C.lg_action
	g.enter()
	defer g.leave(g.free)
	st := C.lg_stream_push_text(g.ptr, stringPtr(text), C.size_t(len(text)), &a)
	runtime.KeepAlive(text)
	return Action(a), g.check("PushText", st)
}

// FinishText ends a text-only stream (pushes the last word, which no space followed).
func (g *StreamGuard) FinishText() (Action, error) {
	if g.ptr == nil {
		return Continue, closed("FinishText")
	}
	var a C.lg_action
	g.enter()
	defer g.leave(g.free)
	st := C.lg_stream_finish_text(g.ptr, &a)
	return Action(a), g.check("FinishText", st)
}

// Reset forgets the sequence, as if new (a halt included).
func (g *StreamGuard) Reset() error {
	if g.ptr == nil {
		return closed("Reset")
	}
	st := C.lg_stream_reset(g.ptr)
	runtime.KeepAlive(g)
	return g.check("Reset", st)
}

// Checkpoint marks the guard's state for speculative decoding: pushes from now on can be
// taken back with Rollback until Commit. The first checkpoint allocates what drafting needs
// (about 90 KiB); a rollback among the first 16 pushes costs only what the rolled-back pushes
// wrote.
func (g *StreamGuard) Checkpoint() error {
	if g.ptr == nil {
		return closed("Checkpoint")
	}
	st := C.lg_stream_checkpoint(g.ptr)
	runtime.KeepAlive(g)
	return g.check("Checkpoint", st)
}

// Rollback takes back the last n pushes since the checkpoint (the rejected drafts): the guard
// then answers as one fed only the pushes before them. Returns the action then.
func (g *StreamGuard) Rollback(n int) (Action, error) {
	if g.ptr == nil {
		return Continue, closed("Rollback")
	}
	if n < 0 {
		return Continue, &Error{Op: "Rollback", Status: StatusInvalidArgument,
			Message: fmt.Sprintf("n = %d: a count of pushes", n)}
	}
	var a C.lg_action
	st := C.lg_stream_rollback(g.ptr, C.size_t(n), &a)
	runtime.KeepAlive(g)
	return Action(a), g.check("Rollback", st)
}

// Commit ends the checkpoint and keeps every push since.
func (g *StreamGuard) Commit() error {
	if g.ptr == nil {
		return closed("Commit")
	}
	st := C.lg_stream_commit(g.ptr)
	runtime.KeepAlive(g)
	return g.check("Commit", st)
}

// Clone copies the guard's whole state into a new guard (callbacks are not copied).
func (g *StreamGuard) Clone() (*StreamGuard, error) {
	if g.ptr == nil {
		return nil, closed("Clone")
	}
	var ptr *C.struct_lg_stream
	st := C.lg_stream_clone(g.ptr, &ptr)
	runtime.KeepAlive(g)
	if err := g.check("Clone", st); err != nil {
		return nil, err
	}
	return adoptStream(ptr), nil
}

// Verdict is the last push's verdict with its evidence.
func (g *StreamGuard) Verdict() (Verdict, error) {
	if g.ptr == nil {
		return Verdict{}, closed("Verdict")
	}
	var v C.struct_lg_verdict
	v.struct_size = C.size_t(unsafe.Sizeof(v))
	st := C.lg_stream_verdict(g.ptr, &v)
	runtime.KeepAlive(g)
	return verdictFromC(&v), g.check("Verdict", st)
}

// RepeatedText is the repeated block of the last warning or halt (at most 256 bytes, possibly
// cut inside a UTF-8 character), copied.
func (g *StreamGuard) RepeatedText() ([]byte, error) {
	if g.ptr == nil {
		return nil, closed("RepeatedText")
	}
	var p *C.uint8_t
	var n C.size_t
	st := C.lg_stream_repeated_text(g.ptr, &p, &n)
	var out []byte
	if st == C.LG_OK && n > 0 {
		out = C.GoBytes(unsafe.Pointer(p), C.int(n))
	}
	runtime.KeepAlive(g)
	return out, g.check("RepeatedText", st)
}

// Describe says what the last verdict found, at a verbosity. Not for the per-token path.
func (g *StreamGuard) Describe(v Verbosity) (string, error) {
	if g.ptr == nil {
		return "", closed("Describe")
	}
	s, st := describe(func(buf *C.char, n C.size_t, need *C.size_t) C.enum_lg_status {
		return C.lg_stream_describe(g.ptr, C.int32_t(v), buf, n, need)
	})
	runtime.KeepAlive(g)
	return s, g.check("Describe", st)
}

// describe calls a describe function with a buffer, and again with a larger one when the text
// did not fit.
func describe(call func(*C.char, C.size_t, *C.size_t) C.enum_lg_status) (string, C.enum_lg_status) {
	buf := make([]C.char, 512)
	var need C.size_t
	st := call(&buf[0], C.size_t(len(buf)), &need)
	if st == C.LG_OK && int(need) >= len(buf) {
		buf = make([]C.char, int(need)+1)
		st = call(&buf[0], C.size_t(len(buf)), &need)
	}
	if st != C.LG_OK {
		return "", st
	}
	return C.GoString(&buf[0]), st
}

// Stats are the guard's counters.
func (g *StreamGuard) Stats() (Stats, error) {
	if g.ptr == nil {
		return Stats{}, closed("Stats")
	}
	var s C.struct_lg_stats
	s.struct_size = C.size_t(unsafe.Sizeof(s))
	st := C.lg_stream_stats(g.ptr, &s)
	runtime.KeepAlive(g)
	return Stats{Symbols: uint64(s.symbols), Bytes: uint64(s.bytes), Warnings: uint64(s.warnings),
		FirstWarnAt: uint64(s.first_warn_at), HaltedAt: uint64(s.halted_at)}, g.check("Stats", st)
}

// MemoryUsage is the bytes the guard owns (constant for its life).
func (g *StreamGuard) MemoryUsage() (int, error) {
	if g.ptr == nil {
		return 0, closed("MemoryUsage")
	}
	var n C.size_t
	st := C.lg_stream_memory_usage(g.ptr, &n)
	runtime.KeepAlive(g)
	return int(n), g.check("MemoryUsage", st)
}

// SetCallbacks sets functions called during pushes (either may be nil): onWarn when the
// stream starts warning, onHalt when it halts; slot is 0. They must not push into this guard
// (the push returns ErrReentrant); a panic in one is raised again by the push.
func (g *StreamGuard) SetCallbacks(onWarn, onHalt func(slot uint64, v Verdict)) error {
	if g.ptr == nil {
		return closed("SetCallbacks")
	}
	var user uintptr
	if onWarn != nil || onHalt != nil {
		user = g.setCalls(&calls{onWarn: onWarn, onHalt: onHalt})
	} else {
		g.setCalls(nil)
	}
	st := setStreamCallbacks(g.ptr, onWarn != nil, onHalt != nil, user)
	runtime.KeepAlive(g)
	return g.check("SetCallbacks", st)
}
