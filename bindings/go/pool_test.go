package loopguard

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

func TestPoolBatchHaltsOnlyTheLoopingSlots(t *testing.T) {
	p, err := NewPool(nil, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	slots := make([]uint64, 4)
	for i := range slots {
		if slots[i], err = p.Add(); err != nil {
			t.Fatal(err)
		}
	}
	var haltedSlots []uint64
	p.SetCallbacks(nil, func(slot uint64, v Verdict) { haltedSlots = append(haltedSlots, slot) })
	tokens := make([]uint32, 4)
	actions := make([]Action, 4)
	halted := map[uint64]int{}
	for step := 0; step < 600; step++ {
		// Slots 0 and 2 loop, slots 1 and 3 write fresh tokens.
		tokens[0] = loop[step%len(loop)]
		tokens[1] = uint32(step*7919%50000 + 1)
		tokens[2] = uint32(step % 3)
		tokens[3] = uint32(step*104729%50000 + 2)
		if err := p.Push(slots, tokens, actions); err != nil {
			t.Fatal(err)
		}
		for i, a := range actions {
			if a == Halt {
				if _, seen := halted[slots[i]]; !seen {
					halted[slots[i]] = step
				}
			}
		}
	}
	if len(halted) != 2 {
		t.Fatalf("halted slots %v", halted)
	}
	for _, i := range []int{0, 2} {
		if _, ok := halted[slots[i]]; !ok {
			t.Fatalf("looping slot %d never halted (%v)", i, halted)
		}
		v, err := p.Verdict(slots[i])
		if err != nil || v.Action != Halt || v.Kind == KindNone {
			t.Fatalf("slot %d verdict %+v, %v", i, v, err)
		}
	}
	if len(haltedSlots) != 2 {
		t.Fatalf("halt callback slots %v", haltedSlots)
	}
	// Resetting a slot starts it afresh.
	if err := p.Reset(slots[0]); err != nil {
		t.Fatal(err)
	}
	if v, _ := p.Verdict(slots[0]); v.Action != Continue {
		t.Fatalf("after Reset: %+v", v)
	}
}

func TestPoolSlotsAndErrors(t *testing.T) {
	p, err := NewPool(nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	a, _ := p.Add()
	b, _ := p.Add()
	if _, err := p.Add(); !errors.Is(err, ErrPoolFull) {
		t.Fatalf("third Add on a pool of 2: %v", err)
	}
	if err := p.Remove(a); err != nil {
		t.Fatal(err)
	}
	actions := []Action{Warn, Warn}
	err = p.Push([]uint64{b, a}, []uint32{1, 2}, actions)
	if !errors.Is(err, ErrNoSlot) {
		t.Fatalf("push into a removed slot: %v", err)
	}
	if actions[0] != Warn {
		t.Fatal("a push with an unknown slot wrote an action")
	}
	err = p.Push([]uint64{b}, []uint32{1, 2}, actions)
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "one length") {
		t.Fatalf("mismatched lengths: %v", err)
	}
	if err := p.Push(nil, nil, nil); err != nil {
		t.Fatalf("an empty batch: %v", err)
	}
	for _, c := range []int{0, -1, 65537} {
		if _, err := NewPool(nil, c); !errors.Is(err, ErrInvalidArgument) ||
			!strings.Contains(err.Error(), "capacity") {
			t.Fatalf("capacity %d: %v", c, err)
		}
	}
	p.Close()
	if _, err := p.Add(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Add after Close: %v", err)
	}
}

// Each goroutine owns its guard: run under -race, this checks the package shares no state
// between handles.
func TestGuardsInParallel(t *testing.T) {
	var wg sync.WaitGroup
	results := make([]int, 8)
	for w := range results {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			g, err := NewStreamGuard(nil)
			if err != nil {
				t.Error(err)
				return
			}
			defer g.Close()
			var halts int
			g.SetCallbacks(nil, func(uint64, Verdict) { halts++ })
			for r := 0; r < 5; r++ {
				for i := 0; i < 400; i++ {
					g.PushToken(loop[i%len(loop)], nil)
				}
				g.Reset()
			}
			results[w] = halts
		}(w)
	}
	wg.Wait()
	for w, h := range results {
		if h != 5 {
			t.Fatalf("goroutine %d saw %d halts, want 5", w, h)
		}
	}
}
