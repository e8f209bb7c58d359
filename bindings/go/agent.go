package loopguard

// #include <stdint.h>
// #include "loopguard.h"
import "C"

import (
	"runtime"
	"unsafe"
)

// AgentGuard watches one agent session: its tool calls, their results and its messages. Not
// safe for concurrent use.
type AgentGuard struct {
	ptr *C.struct_lg_agent
	life
}

// NewAgentGuard creates a guard for one session from config (nil: DefaultAgentConfig).
func NewAgentGuard(config *AgentConfig) (*AgentGuard, error) {
	if config == nil {
		d := DefaultAgentConfig()
		config = &d
	}
	if err := config.Validate(); err != nil {
		return nil, err
	}
	c, free := config.toC()
	defer free()
	var ptr *C.struct_lg_agent
	if st := C.lg_agent_new(c, &ptr); st != C.LG_OK {
		return nil, fail("NewAgentGuard", st, nil)
	}
	g := &AgentGuard{ptr: ptr}
	opened()
	runtime.SetFinalizer(g, (*AgentGuard).free)
	return g, nil
}

func (g *AgentGuard) free() {
	if g.ptr != nil {
		C.lg_agent_free(g.ptr)
		g.ptr = nil
		g.dropCalls()
		freed()
	}
}

// Close frees the guard; closing twice is fine. Called from the guard's own callback, it frees
// the guard when the event returns.
func (g *AgentGuard) Close() error {
	if g.closeNow() {
		g.free()
		runtime.SetFinalizer(g, nil)
	}
	return nil
}

func (g *AgentGuard) check(op string, st C.enum_lg_status) error {
	if st == C.LG_OK {
		return nil
	}
	return fail(op, st, C.lg_agent_last_error(g.ptr))
}

// event runs one event call into C, with callbacks bracketed.
func (g *AgentGuard) event(op string, call func(*C.lg_action) C.enum_lg_status) (Action, error) {
	if g.ptr == nil {
		return Continue, closed(op)
	}
	var a C.lg_action
	g.enter()
	defer g.leave(g.free)
	st := call(&a)
	runtime.KeepAlive(g)
	return Action(a), g.check(op, st)
}

// Call is a tool call the agent is about to make: the tool's name and its JSON arguments (any
// bytes: invalid JSON is compared raw and flagged). Block means: do not run it.
func (g *AgentGuard) Call(tool string, args []byte) (Action, error) {
	a, err := g.event("Call", func(out *C.lg_action) C.enum_lg_status {
		return C.lg_agent_call(g.ptr, stringPtr(tool), C.size_t(len(tool)), bytesPtr(args),
			C.size_t(len(args)), out)
	})
	runtime.KeepAlive(tool)
	runtime.KeepAlive(args)
	return a, err
}

// Result is the result of the most recent call: its output and its error message, nil for
// none. Results are fingerprinted, never stored.
func (g *AgentGuard) Result(output, errorMessage []byte) (Action, error) {
	var outPtr, errPtr *C.uint8_t
	if output != nil {
		outPtr = bytesPtr(output)
		if outPtr == nil {
			outPtr = emptyBytes()
		}
	}
	if errorMessage != nil {
		errPtr = bytesPtr(errorMessage)
		if errPtr == nil {
			errPtr = emptyBytes()
		}
	}
	a, err := g.event("Result", func(out *C.lg_action) C.enum_lg_status {
		return C.lg_agent_result(g.ptr, outPtr, C.size_t(len(output)), errPtr,
			C.size_t(len(errorMessage)), out)
	})
	runtime.KeepAlive(output)
	runtime.KeepAlive(errorMessage)
	return a, err
}

// empty is a byte C can point at for an empty, present buffer (NULL means none).
var empty = [1]byte{}

func emptyBytes() *C.uint8_t { return (*C.uint8_t)(unsafe.Pointer(&empty[0])) }

// Reject records a reply the agent's harness rejected (no tool call, or several).
func (g *AgentGuard) Reject() (Action, error) {
	return g.event("Reject", func(out *C.lg_action) C.enum_lg_status {
		return C.lg_agent_reject(g.ptr, out)
	})
}

// Message is a whole assistant message.
func (g *AgentGuard) Message(text string) (Action, error) {
	a, err := g.event("Message", func(out *C.lg_action) C.enum_lg_status {
		return C.lg_agent_message(g.ptr, stringPtr(text), C.size_t(len(text)), out)
	})
	runtime.KeepAlive(text)
	return a, err
}

// MessageChunk is part of a streamed assistant message; EndMessage (or a call) ends it.
func (g *AgentGuard) MessageChunk(text string) (Action, error) {
	a, err := g.event("MessageChunk", func(out *C.lg_action) C.enum_lg_status {
		return C.lg_agent_message_chunk(g.ptr, stringPtr(text), C.size_t(len(text)), out)
	})
	runtime.KeepAlive(text)
	return a, err
}

// EndMessage ends the streamed assistant message.
func (g *AgentGuard) EndMessage() (Action, error) {
	return g.event("EndMessage", func(out *C.lg_action) C.enum_lg_status {
		return C.lg_agent_end_message(g.ptr, out)
	})
}

// Thought is a thought: compared with earlier thoughts and messages, not a step.
func (g *AgentGuard) Thought(text string) (Action, error) {
	a, err := g.event("Thought", func(out *C.lg_action) C.enum_lg_status {
		return C.lg_agent_thought(g.ptr, stringPtr(text), C.size_t(len(text)), out)
	})
	runtime.KeepAlive(text)
	return a, err
}

// User is a user turn; it starts a new scope when the config says so.
func (g *AgentGuard) User(text string) (Action, error) {
	a, err := g.event("User", func(out *C.lg_action) C.enum_lg_status {
		return C.lg_agent_user(g.ptr, stringPtr(text), C.size_t(len(text)), out)
	})
	runtime.KeepAlive(text)
	return a, err
}

// State is a fingerprint of the state the agent works on, after each change.
func (g *AgentGuard) State(fingerprint uint64) (Action, error) {
	return g.event("State", func(out *C.lg_action) C.enum_lg_status {
		return C.lg_agent_state(g.ptr, C.uint64_t(fingerprint), out)
	})
}

// Tick gives the caller's clock, in milliseconds, for time-based rules.
func (g *AgentGuard) Tick(nowMs uint64) (Action, error) {
	return g.event("Tick", func(out *C.lg_action) C.enum_lg_status {
		return C.lg_agent_tick(g.ptr, C.uint64_t(nowMs), out)
	})
}

// SetEnabled turns detection off or on for the session.
func (g *AgentGuard) SetEnabled(enabled bool) error {
	if g.ptr == nil {
		return closed("SetEnabled")
	}
	st := C.lg_agent_set_enabled(g.ptr, b2u8(enabled))
	runtime.KeepAlive(g)
	return g.check("SetEnabled", st)
}

// Reset forgets the session (windows, counts, strikes, a halt); stats are kept.
func (g *AgentGuard) Reset() error {
	if g.ptr == nil {
		return closed("Reset")
	}
	st := C.lg_agent_reset(g.ptr)
	runtime.KeepAlive(g)
	return g.check("Reset", st)
}

// Verdict is the last verdict with its evidence.
func (g *AgentGuard) Verdict() (AgentVerdict, error) {
	if g.ptr == nil {
		return AgentVerdict{}, closed("Verdict")
	}
	var v C.struct_lg_agent_verdict
	v.struct_size = C.size_t(unsafe.Sizeof(v))
	st := C.lg_agent_get_verdict(g.ptr, &v)
	runtime.KeepAlive(g)
	return agentVerdictFromC(&v), g.check("Verdict", st)
}

// Evidence is the steps the last verdict rests on, oldest first.
func (g *AgentGuard) Evidence() ([]uint64, error) {
	if g.ptr == nil {
		return nil, closed("Evidence")
	}
	var n C.size_t
	st := C.lg_agent_evidence(g.ptr, nil, 0, &n)
	if st != C.LG_OK || n == 0 {
		runtime.KeepAlive(g)
		return nil, g.check("Evidence", st)
	}
	out := make([]uint64, int(n))
	st = C.lg_agent_evidence(g.ptr, (*C.uint64_t)(unsafe.Pointer(&out[0])), n, &n)
	runtime.KeepAlive(g)
	if int(n) < len(out) {
		out = out[:int(n)]
	}
	return out, g.check("Evidence", st)
}

// Describe says what the last verdict found: Brief (`Bash(git status) called 5x`), Summary,
// or Full (the <loop-recovery> text for the model).
func (g *AgentGuard) Describe(v Verbosity) (string, error) {
	if g.ptr == nil {
		return "", closed("Describe")
	}
	s, st := describe(func(buf *C.char, n C.size_t, need *C.size_t) C.enum_lg_status {
		return C.lg_agent_describe(g.ptr, C.int32_t(v), buf, n, need)
	})
	runtime.KeepAlive(g)
	return s, g.check("Describe", st)
}

// Stats are the session's counters.
func (g *AgentGuard) Stats() (AgentStats, error) {
	if g.ptr == nil {
		return AgentStats{}, closed("Stats")
	}
	var s C.struct_lg_agent_stats
	s.struct_size = C.size_t(unsafe.Sizeof(s))
	st := C.lg_agent_get_stats(g.ptr, &s)
	runtime.KeepAlive(g)
	out := AgentStats{Checks: uint64(s.checks), Calls: uint64(s.calls),
		Detections: uint64(s.detections), Warnings: uint64(s.warnings), Blocks: uint64(s.blocks),
		Halts: uint64(s.halts), InvalidArgs: uint64(s.invalid_args),
		HighestStrike: uint32(s.highest_strike), Rejections: uint64(s.rejections)}
	// Kinds from 17 on are counted in a second array, laid out after the first.
	for i := range out.ByKind {
		if i < len(s.by_kind) {
			out.ByKind[i] = uint64(s.by_kind[i])
		} else {
			out.ByKind[i] = uint64(s.by_kind_late[i-len(s.by_kind)])
		}
	}
	return out, g.check("Stats", st)
}

// MemoryUsage is the bytes the guard holds now (bounded by the window).
func (g *AgentGuard) MemoryUsage() (int, error) {
	if g.ptr == nil {
		return 0, closed("MemoryUsage")
	}
	var n C.size_t
	st := C.lg_agent_memory_usage(g.ptr, &n)
	runtime.KeepAlive(g)
	return int(n), g.check("MemoryUsage", st)
}

// SetCallbacks sets functions called during events (either may be nil): onWarn on every warn
// or block verdict, onHalt when the session halts. They must not call into this guard; a
// panic in one is raised again by the event call.
func (g *AgentGuard) SetCallbacks(onWarn, onHalt func(v AgentVerdict)) error {
	if g.ptr == nil {
		return closed("SetCallbacks")
	}
	var user uintptr
	if onWarn != nil || onHalt != nil {
		user = g.setCalls(&calls{onAgentWarn: onWarn, onAgentHalt: onHalt})
	} else {
		g.setCalls(nil)
	}
	st := setAgentCallbacks(g.ptr, onWarn != nil, onHalt != nil, user)
	runtime.KeepAlive(g)
	return g.check("SetCallbacks", st)
}
