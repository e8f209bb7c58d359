package loopguard

// #include <stdint.h>
// #include "loopguard.h"
import "C"

import (
	"runtime/cgo"
	"unsafe"
)

// calls is what a handle's callbacks need: the Go functions, and the first panic one of them
// raised (a panic cannot unwind through C, so it is held and raised again by the Go call that
// pushed).
type calls struct {
	onWarn, onHalt           func(slot uint64, v Verdict)
	onAgentWarn, onAgentHalt func(v AgentVerdict)
	panicked                 interface{}
	didPanic                 bool
}

func (c *calls) guard(f func()) {
	if c.didPanic {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			c.panicked, c.didPanic = r, true
		}
	}()
	f()
}

// rethrow raises a held panic again, in the goroutine that made the C call.
func (c *calls) rethrow() {
	if c != nil && c.didPanic {
		p := c.panicked
		c.panicked, c.didPanic = nil, false
		panic(p)
	}
}

func callsOf(user unsafe.Pointer) *calls {
	return cgo.Handle(uintptr(user)).Value().(*calls)
}

//export lgGoStreamWarn
func lgGoStreamWarn(user unsafe.Pointer, slot C.uint64_t, v *C.struct_lg_verdict) {
	c := callsOf(user)
	if c.onWarn != nil {
		verdict := verdictFromC(v)
		c.guard(func() { c.onWarn(uint64(slot), verdict) })
	}
}

//export lgGoStreamHalt
func lgGoStreamHalt(user unsafe.Pointer, slot C.uint64_t, v *C.struct_lg_verdict) {
	c := callsOf(user)
	if c.onHalt != nil {
		verdict := verdictFromC(v)
		c.guard(func() { c.onHalt(uint64(slot), verdict) })
	}
}

//export lgGoAgentWarn
func lgGoAgentWarn(user unsafe.Pointer, v *C.struct_lg_agent_verdict) {
	c := callsOf(user)
	if c.onAgentWarn != nil {
		verdict := agentVerdictFromC(v)
		c.guard(func() { c.onAgentWarn(verdict) })
	}
}

//export lgGoAgentHalt
func lgGoAgentHalt(user unsafe.Pointer, v *C.struct_lg_agent_verdict) {
	c := callsOf(user)
	if c.onAgentHalt != nil {
		verdict := agentVerdictFromC(v)
		c.guard(func() { c.onAgentHalt(verdict) })
	}
}
