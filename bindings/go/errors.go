package loopguard

// #include "loopguard.h"
import "C"

import (
	"errors"
	"fmt"
)

// Status is an lg_status: what a C call returned.
type Status int32

// The statuses of the C library (lg_status). Values are only appended.
const (
	StatusOK              Status = C.LG_OK
	StatusNull            Status = C.LG_ERR_NULL
	StatusInvalidArgument Status = C.LG_ERR_INVALID_ARGUMENT
	StatusConfig          Status = C.LG_ERR_CONFIG
	StatusPanic           Status = C.LG_ERR_PANIC
	StatusPoisoned        Status = C.LG_ERR_POISONED
	StatusReentrant       Status = C.LG_ERR_REENTRANT
	StatusNoSlot          Status = C.LG_ERR_NO_SLOT
	StatusPoolFull        Status = C.LG_ERR_POOL_FULL
)

// String is the library's description of the status.
func (s Status) String() string { return C.GoString(C.lg_status_str(C.int32_t(s))) }

// Error is returned whenever the library answers a status other than OK: errors.Is matches it
// against the Err* values by status, and its message is the library's own for the call.
type Error struct {
	// Op is the call that failed, such as "PushToken".
	Op string
	// Status is what the library returned.
	Status Status
	// Message is the library's last error on the handle (or the status's description).
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("loopguard: %s: %s", e.Op, e.Message) }

// Is reports whether target is an *Error with the same status, so that
// errors.Is(err, loopguard.ErrPoolFull) works whatever the call and message.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Status == e.Status
}

// Sentinels to match with errors.Is.
var (
	ErrNull            = &Error{Op: "?", Status: StatusNull, Message: StatusNull.String()}
	ErrInvalidArgument = &Error{Op: "?", Status: StatusInvalidArgument, Message: StatusInvalidArgument.String()}
	ErrConfig          = &Error{Op: "?", Status: StatusConfig, Message: StatusConfig.String()}
	ErrPanic           = &Error{Op: "?", Status: StatusPanic, Message: StatusPanic.String()}
	ErrPoisoned        = &Error{Op: "?", Status: StatusPoisoned, Message: StatusPoisoned.String()}
	ErrReentrant       = &Error{Op: "?", Status: StatusReentrant, Message: StatusReentrant.String()}
	ErrNoSlot          = &Error{Op: "?", Status: StatusNoSlot, Message: StatusNoSlot.String()}
	ErrPoolFull        = &Error{Op: "?", Status: StatusPoolFull, Message: StatusPoolFull.String()}
	// ErrClosed is wrapped by the error of a call on a closed handle.
	ErrClosed = errors.New("loopguard: the handle is closed")
)

// fail builds the error of a call that returned status, with the handle's last error message
// when it has one.
func fail(op string, status C.enum_lg_status, lastError *C.char) error {
	msg := ""
	if lastError != nil {
		msg = C.GoString(lastError)
	}
	if msg == "" {
		msg = Status(status).String()
	}
	return &Error{Op: op, Status: Status(status), Message: msg}
}

// closed is the error of a call on a closed handle.
func closed(op string) error { return fmt.Errorf("loopguard: %s: %w", op, ErrClosed) }
