package loopguard

import (
	"testing"
	"time"
)

const (
	benchBatch = 64   // sequences in a decode step
	benchSteps = 1024 // decode steps in one pass
)

// benchSetup is a pool with a full batch, and the token ids of every step of a pass: fresh ids
// in every slot, so that no slot halts and every push does the full work.
func benchSetup(b *testing.B) (*Pool, []uint64, []uint32, []Action) {
	p, err := NewPool(nil, benchBatch)
	if err != nil {
		b.Fatal(err)
	}
	slots := make([]uint64, benchBatch)
	for i := range slots {
		slots[i], _ = p.Add()
	}
	tokens := make([]uint32, benchBatch*benchSteps)
	for i := range tokens {
		tokens[i] = uint32(i*7919%50000 + 1)
	}
	return p, slots, tokens, make([]Action, benchBatch)
}

func resetAll(b *testing.B, p *Pool, slots []uint64) {
	for _, s := range slots {
		if err := p.Reset(s); err != nil {
			b.Fatal(err)
		}
	}
}

// passes times one pass of decode steps (push), each from fresh slots, and reports its time
// per token.
func passes(b *testing.B, p *Pool, slots []uint64, tokens []uint32, push func() error) {
	var spent time.Duration
	for i := 0; i < b.N; i++ {
		resetAll(b, p, slots)
		start := time.Now()
		if err := push(); err != nil {
			b.Fatal(err)
		}
		spent += time.Since(start)
	}
	b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N*len(tokens)), "ns/token")
}

// BenchmarkPoolPushGo: a pass of decode steps, one Pool.Push of 64 tokens per step from Go. Its
// ns/token over BenchmarkPoolPushC's is what Go adds to the C call (target: at most 1.5x).
func BenchmarkPoolPushGo(b *testing.B) {
	p, slots, tokens, actions := benchSetup(b)
	defer p.Close()
	passes(b, p, slots, tokens, func() error {
		for s := 0; s < benchSteps; s++ {
			if err := p.Push(slots, tokens[s*benchBatch:(s+1)*benchBatch], actions); err != nil {
				return err
			}
		}
		return nil
	})
}

// BenchmarkPoolPushC is the baseline: the same pass pushed by a loop in C.
func BenchmarkPoolPushC(b *testing.B) {
	p, slots, tokens, actions := benchSetup(b)
	defer p.Close()
	passes(b, p, slots, tokens, func() error { return p.pushSteps(slots, tokens, actions) })
}

// BenchmarkStreamPushToken is one cgo call per token, for comparison with the batch.
func BenchmarkStreamPushToken(b *testing.B) {
	g, _ := NewStreamGuard(nil)
	defer g.Close()
	piece := []byte(" w")
	for i := 0; i < b.N; i++ {
		g.PushToken(uint32(i*7919%50000), piece)
	}
}
