package loopguard

import "sync/atomic"

// liveHandles is the number of C handles the package holds.
func liveHandles() int64 { return atomic.LoadInt64(&live) }
