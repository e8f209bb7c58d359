// Package loopguard stops language models from wasting compute in loops: a Go binding over the
// loopguard C library (include/loopguard.h).
//
// A StreamGuard watches one generated sequence token by token; a Pool holds the guards of a
// batched server and advances all its sequences in one call; an AgentGuard watches an agent's
// tool calls, results and messages. Each answers Continue, Warn, Block (agents) or Halt, with
// the evidence.
//
// The package links libloopguard through pkg-config (scripts/install.sh installs it with its
// loopguard.pc). Handles are not safe for concurrent use: use one per goroutine, or guard it
// with a mutex. Close frees a handle's C memory at once; a finalizer frees what is not closed.
package loopguard

/*
#cgo pkg-config: loopguard
#include <stdint.h>
#include <stdlib.h>
#include "loopguard.h"

// The callbacks exported from callbacks.go, as cgo declares them.
extern void lgGoStreamWarn(void *user, uint64_t slot, struct lg_verdict *verdict);
extern void lgGoStreamHalt(void *user, uint64_t slot, struct lg_verdict *verdict);
extern void lgGoAgentWarn(void *user, struct lg_agent_verdict *verdict);
extern void lgGoAgentHalt(void *user, struct lg_agent_verdict *verdict);

// A cgo.Handle travels through the C library as its user data pointer.
static void *lg_go_user(uintptr_t handle) { return (void *)handle; }

static enum lg_status lg_go_stream_callbacks(struct lg_stream *s, int warn, int halt,
                                             uintptr_t handle) {
  return lg_stream_set_callbacks(s, warn ? (lg_verdict_callback)lgGoStreamWarn : NULL,
                                 halt ? (lg_verdict_callback)lgGoStreamHalt : NULL,
                                 lg_go_user(handle));
}

static enum lg_status lg_go_pool_callbacks(struct lg_pool *p, int warn, int halt,
                                           uintptr_t handle) {
  return lg_pool_set_callbacks(p, warn ? (lg_verdict_callback)lgGoStreamWarn : NULL,
                               halt ? (lg_verdict_callback)lgGoStreamHalt : NULL,
                               lg_go_user(handle));
}

static enum lg_status lg_go_agent_callbacks(struct lg_agent *a, int warn, int halt,
                                            uintptr_t handle) {
  return lg_agent_set_callbacks(a, warn ? (lg_agent_callback)lgGoAgentWarn : NULL,
                                halt ? (lg_agent_callback)lgGoAgentHalt : NULL,
                                lg_go_user(handle));
}

// Pushes `steps` batches of `n` tokens (`tokens` holds them step after step) from a loop in C:
// the baseline of the benchmark that measures what Go adds to the batch call (bench_test.go).
static enum lg_status lg_go_pool_push_steps(struct lg_pool *p, const uint64_t *slots,
                                            const uint32_t *tokens, size_t n, size_t steps,
                                            uint8_t *actions) {
  for (size_t s = 0; s < steps; s++) {
    enum lg_status st = lg_pool_push(p, slots, tokens + s * n, n, actions);
    if (st != LG_OK) return st;
  }
  return LG_OK;
}
*/
import "C"

import (
	"sync/atomic"
	"unsafe"
)

// Version is the version of the linked C library, such as "0.1.0".
func Version() string { return C.GoString(C.lg_version_string()) }

// live counts the C handles this package holds, for the tests that check finalizers free them.
var live int64

func opened() { atomic.AddInt64(&live, 1) }
func freed()  { atomic.AddInt64(&live, -1) }

// bytesPtr points C at a byte slice's data (nil for an empty slice: the library reads a NULL
// buffer with length 0 as empty). The slice holds no Go pointers, so cgo lets C read it during
// the call.
func bytesPtr(b []byte) *C.uint8_t {
	if len(b) == 0 {
		return nil
	}
	return (*C.uint8_t)(unsafe.Pointer(&b[0]))
}

// stringPtr points C at a string's bytes without copying them (the first word of a string
// header is its data pointer; Go 1.19 has no unsafe.StringData).
func stringPtr(s string) *C.uint8_t {
	if len(s) == 0 {
		return nil
	}
	return *(**C.uint8_t)(unsafe.Pointer(&s))
}

// cStrs copies strings into C memory as an lg_str array, for configs the library copies on
// creation. free releases it all.
// cStr copies s into C memory as an lg_str (NULL and 0 when empty); free its ptr.
func cStr(s string) C.struct_lg_str {
	if s == "" {
		return C.struct_lg_str{}
	}
	return C.struct_lg_str{ptr: (*C.char)(C.CBytes([]byte(s))), len: C.size_t(len(s))}
}

func cStrs(items []string) (arr *C.struct_lg_str, n C.size_t, free func()) {
	if len(items) == 0 {
		return nil, 0, func() {}
	}
	size := C.size_t(len(items)) * C.size_t(unsafe.Sizeof(C.struct_lg_str{}))
	arr = (*C.struct_lg_str)(C.malloc(size))
	view := unsafe.Slice(arr, len(items))
	for i, s := range items {
		view[i].ptr = (*C.char)(C.CBytes([]byte(s)))
		view[i].len = C.size_t(len(s))
	}
	return arr, C.size_t(len(items)), func() {
		for i := range view {
			C.free(unsafe.Pointer(view[i].ptr))
		}
		C.free(unsafe.Pointer(arr))
	}
}

// The C helpers above, for the other files (a cgo preamble is seen only by its own file).

func setStreamCallbacks(p *C.struct_lg_stream, warn, halt bool, user uintptr) C.enum_lg_status {
	return C.lg_go_stream_callbacks(p, b2i(warn), b2i(halt), C.uintptr_t(user))
}

func setPoolCallbacks(p *C.struct_lg_pool, warn, halt bool, user uintptr) C.enum_lg_status {
	return C.lg_go_pool_callbacks(p, b2i(warn), b2i(halt), C.uintptr_t(user))
}

func setAgentCallbacks(p *C.struct_lg_agent, warn, halt bool, user uintptr) C.enum_lg_status {
	return C.lg_go_agent_callbacks(p, b2i(warn), b2i(halt), C.uintptr_t(user))
}

func poolPushSteps(p *C.struct_lg_pool, slots []uint64, tokens []uint32, actions []Action) C.enum_lg_status {
	return C.lg_go_pool_push_steps(p, (*C.uint64_t)(unsafe.Pointer(&slots[0])),
		(*C.uint32_t)(unsafe.Pointer(&tokens[0])), C.size_t(len(slots)),
		C.size_t(len(tokens)/len(slots)), (*C.uint8_t)(unsafe.Pointer(&actions[0])))
}

func b2i(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
