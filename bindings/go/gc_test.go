package loopguard

import (
	"runtime"
	"testing"
	"time"
)

// Handles that are dropped without Close are freed by their finalizers.
func TestFinalizersFreeDroppedHandles(t *testing.T) {
	before := liveHandles()
	for i := 0; i < 50; i++ {
		g, _ := NewStreamGuard(nil)
		g.PushToken(1, nil)
		g.SetCallbacks(func(uint64, Verdict) {}, nil)
		p, _ := NewPool(nil, 2)
		p.Add()
		a, _ := NewAgentGuard(nil)
		a.Call("x", nil)
	}
	if liveHandles() != before+150 {
		t.Fatalf("%d handles open, want %d", liveHandles(), before+150)
	}
	deadline := time.Now().Add(10 * time.Second)
	for liveHandles() != before && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if liveHandles() != before {
		t.Fatalf("%d handles still open after GC", liveHandles()-before)
	}
}

// A collection between every call changes nothing: no C memory is reachable only from Go
// values the collector may move or free, and the finalizer never runs while a handle is used.
func TestGCBetweenCalls(t *testing.T) {
	run := func(gc bool) (int, Verdict) {
		g, _ := NewStreamGuard(nil)
		defer g.Close()
		p, _ := NewPool(nil, 2)
		defer p.Close()
		slot, _ := p.Add()
		at := -1
		for i := 0; i < 300; i++ {
			if gc && i%10 == 0 {
				runtime.GC()
			}
			piece := []byte{byte('a' + i%7), ' '}
			a, err := g.PushToken(loop[i%len(loop)], piece)
			if err != nil {
				t.Fatal(err)
			}
			actions := []Action{0}
			if err := p.Push([]uint64{slot}, []uint32{loop[i%len(loop)]}, actions); err != nil {
				t.Fatal(err)
			}
			if a == Halt && at < 0 {
				at = i
			}
		}
		v, _ := g.Verdict()
		return at, v
	}
	at, v := run(false)
	atGC, vGC := run(true)
	if at < 0 || at != atGC || v != vGC {
		t.Fatalf("without GC: %d %+v; with GC: %d %+v", at, v, atGC, vGC)
	}
	// A guard used only through a method value must stay alive while it runs.
	push := func() func(uint32, []byte) (Action, error) {
		g, _ := NewStreamGuard(nil)
		return g.PushToken
	}()
	for i := 0; i < 200; i++ {
		runtime.GC()
		if _, err := push(uint32(i), nil); err != nil {
			t.Fatal(err)
		}
	}
}
