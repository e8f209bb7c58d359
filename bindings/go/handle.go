package loopguard

import "runtime/cgo"

// life is what every handle type keeps besides its C pointer: its callbacks, the cgo.Handle
// that carries them through C, and whether a Close came from inside one of its own callbacks
// (the C library ignores a free from a callback; the handle is freed when the call returns).
type life struct {
	calls   *calls
	handle  cgo.Handle
	depth   int
	closing bool
}

// setCalls replaces the callbacks and returns the user data to give C (0 for none).
func (l *life) setCalls(c *calls) uintptr {
	l.dropCalls()
	if c == nil {
		return 0
	}
	l.calls = c
	l.handle = cgo.NewHandle(c)
	return uintptr(l.handle)
}

func (l *life) dropCalls() {
	if l.handle != 0 {
		l.handle.Delete()
		l.handle = 0
	}
	l.calls = nil
}

// enter and leave bracket a C call that may run callbacks; leave frees a handle closed from
// a callback and raises a callback's panic again.
func (l *life) enter() { l.depth++ }

func (l *life) leave(free func()) {
	l.depth--
	c := l.calls
	if l.depth == 0 && l.closing {
		l.closing = false
		free()
	}
	c.rethrow()
}

// closeNow reports whether Close may free now, or marks the handle to be freed when the
// current call returns.
func (l *life) closeNow() bool {
	if l.depth > 0 {
		l.closing = true
		return false
	}
	return true
}
