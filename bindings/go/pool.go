package loopguard

// #include <stdint.h>
// #include "loopguard.h"
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Pool holds the guards of a batched server, one per slot, all with one configuration, and
// advances many sequences in one call. Not safe for concurrent use.
type Pool struct {
	ptr *C.struct_lg_pool
	life
}

// NewPool creates a pool of capacity slots (1..=65536) from config (nil: the balanced preset).
// It allocates every guard now (about 16 KiB each); adding, removing and pushing never
// allocate.
func NewPool(config *StreamConfig, capacity int) (*Pool, error) {
	if config == nil {
		d := DefaultStreamConfig()
		config = &d
	}
	if capacity < 1 || capacity > 65536 {
		return nil, &Error{Op: "NewPool", Status: StatusInvalidArgument,
			Message: fmt.Sprintf("capacity is %d: it must be 1..=65536", capacity)}
	}
	if err := config.Validate(); err != nil {
		return nil, err
	}
	c, free := config.toC()
	defer free()
	var ptr *C.struct_lg_pool
	if st := C.lg_pool_new(c, C.size_t(capacity), &ptr); st != C.LG_OK {
		return nil, fail("NewPool", st, nil)
	}
	p := &Pool{ptr: ptr}
	opened()
	runtime.SetFinalizer(p, (*Pool).free)
	return p, nil
}

func (p *Pool) free() {
	if p.ptr != nil {
		C.lg_pool_free(p.ptr)
		p.ptr = nil
		p.dropCalls()
		freed()
	}
}

// Close frees the pool and every guard in it; closing twice is fine. Called from the pool's
// own callback, it frees the pool when the push returns.
func (p *Pool) Close() error {
	if p.closeNow() {
		p.free()
		runtime.SetFinalizer(p, nil)
	}
	return nil
}

func (p *Pool) check(op string, st C.enum_lg_status) error {
	if st == C.LG_OK {
		return nil
	}
	return fail(op, st, C.lg_pool_last_error(p.ptr))
}

// Add takes a free slot for a new sequence; errors.Is(err, ErrPoolFull) when none is left.
func (p *Pool) Add() (uint64, error) {
	if p.ptr == nil {
		return 0, closed("Add")
	}
	var slot C.uint64_t
	st := C.lg_pool_add(p.ptr, &slot)
	runtime.KeepAlive(p)
	return uint64(slot), p.check("Add", st)
}

// Remove releases a slot; its id is refused from then on (ErrNoSlot).
func (p *Pool) Remove(slot uint64) error {
	if p.ptr == nil {
		return closed("Remove")
	}
	st := C.lg_pool_remove(p.ptr, C.uint64_t(slot))
	runtime.KeepAlive(p)
	return p.check("Remove", st)
}

// Reset starts a slot's guard afresh for a new sequence.
func (p *Pool) Reset(slot uint64) error {
	if p.ptr == nil {
		return closed("Reset")
	}
	st := C.lg_pool_reset(p.ptr, C.uint64_t(slot))
	runtime.KeepAlive(p)
	return p.check("Reset", st)
}

// Push pushes tokens[i] into slot slots[i] for every i, in order (a slot may appear more than
// once), in one call into C, and writes each answer into actions[i]. The three slices must
// have the same length. With an unknown slot (ErrNoSlot) nothing is pushed or written.
// Callbacks run during the call with the slot id. Never allocates.
func (p *Pool) Push(slots []uint64, tokens []uint32, actions []Action) error {
	if p.ptr == nil {
		return closed("Push")
	}
	if len(slots) != len(tokens) || len(actions) != len(tokens) {
		return &Error{Op: "Push", Status: StatusInvalidArgument, Message: fmt.Sprintf(
			"slots, tokens and actions must have one length: they have %d, %d and %d",
			len(slots), len(tokens), len(actions))}
	}
	if len(tokens) == 0 {
		return nil
	}
	p.enter()
	defer p.leave(p.free)
	st := C.lg_pool_push(p.ptr, (*C.uint64_t)(unsafe.Pointer(&slots[0])),
		(*C.uint32_t)(unsafe.Pointer(&tokens[0])), C.size_t(len(tokens)),
		(*C.uint8_t)(unsafe.Pointer(&actions[0])))
	runtime.KeepAlive(slots)
	runtime.KeepAlive(tokens)
	runtime.KeepAlive(actions)
	return p.check("Push", st)
}

// Verdict is one slot's last verdict.
func (p *Pool) Verdict(slot uint64) (Verdict, error) {
	if p.ptr == nil {
		return Verdict{}, closed("Verdict")
	}
	var v C.struct_lg_verdict
	v.struct_size = C.size_t(unsafe.Sizeof(v))
	st := C.lg_pool_verdict(p.ptr, C.uint64_t(slot), &v)
	runtime.KeepAlive(p)
	return verdictFromC(&v), p.check("Verdict", st)
}

// SetCallbacks sets functions called during Push (either may be nil) with the slot id: onWarn
// when a sequence starts warning, onHalt when it halts. They must not call into this pool;
// a panic in one is raised again by Push.
func (p *Pool) SetCallbacks(onWarn, onHalt func(slot uint64, v Verdict)) error {
	if p.ptr == nil {
		return closed("SetCallbacks")
	}
	var user uintptr
	if onWarn != nil || onHalt != nil {
		user = p.setCalls(&calls{onWarn: onWarn, onHalt: onHalt})
	} else {
		p.setCalls(nil)
	}
	st := setPoolCallbacks(p.ptr, onWarn != nil, onHalt != nil, user)
	runtime.KeepAlive(p)
	return p.check("SetCallbacks", st)
}

// pushSteps pushes tokens (len(slots) a step, step after step) from a loop in C: the baseline
// of the benchmark that measures what Go adds to the batch call.
func (p *Pool) pushSteps(slots []uint64, tokens []uint32, actions []Action) error {
	st := poolPushSteps(p.ptr, slots, tokens, actions)
	runtime.KeepAlive(p)
	return p.check("pushSteps", st)
}
