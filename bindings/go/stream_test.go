package loopguard

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// loop is a period-7 block of token ids pushed again and again, as a model in a loop emits it.
var loop = []uint32{101, 2054, 2003, 1996, 3437, 1997, 102}

// pushLoop pushes copies of the block until the guard halts; it returns the index of the
// halting token, or -1.
func pushLoop(t *testing.T, g *StreamGuard, copies int) int {
	t.Helper()
	for i := 0; i < copies*len(loop); i++ {
		a, err := g.PushToken(loop[i%len(loop)], []byte(fmt.Sprintf(" w%d", loop[i%len(loop)])))
		if err != nil {
			t.Fatalf("PushToken: %v", err)
		}
		if a == Halt {
			return i
		}
	}
	return -1
}

func TestVersion(t *testing.T) {
	if !regexp.MustCompile(`^\d+\.\d+\.\d+`).MatchString(Version()) {
		t.Fatalf("Version() = %q", Version())
	}
}

func TestExactLoopHaltsWithEvidence(t *testing.T) {
	g, err := NewStreamGuard(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	at := pushLoop(t, g, 40)
	if at < 0 {
		t.Fatal("a period-7 loop never halted")
	}
	v, err := g.Verdict()
	if err != nil {
		t.Fatal(err)
	}
	if v.Action != Halt || v.Kind != KindExactLoop || v.Period != 7 || v.Unit != UnitSymbol {
		t.Fatalf("verdict %+v", v)
	}
	if v.Repeats < 2 || v.At != uint64(at) || v.Onset > v.At {
		t.Fatalf("evidence %+v (halted at %d)", v, at)
	}
	// Sticky until reset.
	if a, _ := g.PushToken(9999, nil); a != Halt {
		t.Fatalf("after a halt a push answered %v", a)
	}
	text, err := g.RepeatedText()
	if err != nil || !strings.Contains(string(text), "w2054") {
		t.Fatalf("RepeatedText = %q, %v", text, err)
	}
	brief, err := g.Describe(Brief)
	if err != nil || !strings.HasPrefix(brief, "halt: exact_loop period 7") {
		t.Fatalf("Describe(Brief) = %q, %v", brief, err)
	}
	full, err := g.Describe(Full)
	if err != nil || strings.Count(full, "\n") < 5 {
		t.Fatalf("Describe(Full) = %q, %v", full, err)
	}
	s, err := g.Stats()
	if err != nil || s.HaltedAt != uint64(at) || s.Symbols != uint64(at+1) {
		t.Fatalf("Stats = %+v, %v (halted at %d)", s, err, at)
	}
	if n, err := g.MemoryUsage(); err != nil || n < 1024 || n > 64<<10 {
		t.Fatalf("MemoryUsage = %d, %v", n, err)
	}
	if err := g.Reset(); err != nil {
		t.Fatal(err)
	}
	if a, _ := g.PushToken(1, nil); a != Continue {
		t.Fatalf("after Reset a push answered %v", a)
	}
}

func TestFreshTokensNeverHalt(t *testing.T) {
	g, err := NewStreamGuard(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for i := uint32(0); i < 4000; i++ {
		if a, err := g.PushToken(i*7919%50000, nil); err != nil || a == Halt {
			t.Fatalf("token %d: %v, %v", i, a, err)
		}
	}
}

func TestTextStream(t *testing.T) {
	g, err := NewStreamGuard(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var last Action
	for i := 0; i < 60 && last != Halt; i++ {
		if last, err = g.PushText("The answer is in the box on the shelf. "); err != nil {
			t.Fatal(err)
		}
	}
	if last != Halt {
		t.Fatal("a repeated sentence never halted")
	}
	if _, err := g.FinishText(); err != nil {
		t.Fatal(err)
	}
	if v, _ := g.Verdict(); v.OnsetByte == Unknown {
		t.Fatalf("a text stream's verdict has no onset byte: %+v", v)
	}
}

func TestConfigErrorsNameTheField(t *testing.T) {
	c := DefaultStreamConfig()
	c.MaxPeriod = 5000
	err := c.Validate()
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "max_period") {
		t.Fatalf("Validate = %v", err)
	}
	if _, err := NewStreamGuard(&c); !errors.Is(err, ErrConfig) {
		t.Fatalf("NewStreamGuard with a bad config = %v", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Status != StatusConfig {
		t.Fatalf("not an *Error with StatusConfig: %#v", err)
	}
	if _, err := PresetStreamConfig(Preset(99)); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("PresetStreamConfig(99) = %v", err)
	}
	c = DefaultStreamConfig()
	c.Breakers = make([]string, 65)
	if err := c.Validate(); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "breakers") {
		t.Fatalf("65 breakers: %v", err)
	}
}

func TestPresetsDiffer(t *testing.T) {
	strict, err := PresetStreamConfig(Strict)
	if err != nil {
		t.Fatal(err)
	}
	lenient, _ := PresetStreamConfig(Lenient)
	if strict.HaltCopies >= lenient.HaltCopies {
		t.Fatalf("strict %d copies, lenient %d", strict.HaltCopies, lenient.HaltCopies)
	}
}

func TestVLLMConfigHaltsWhereVLLMWould(t *testing.T) {
	c := VLLMStreamConfig(1, 20, 3)
	g, err := NewStreamGuard(&c)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	// vLLM stops when the last min_count copies of a pattern are equal: the 6th token of
	// "5 6 5 6 5 6", not before.
	for i, tok := range []uint32{5, 6, 5, 6, 5, 6} {
		a, err := g.PushToken(tok, nil)
		if err != nil {
			t.Fatal(err)
		}
		if (a == Halt) != (i == 5) {
			t.Fatalf("token %d answered %v", i, a)
		}
	}
}

func TestBreakersAndExemptReachTheGuard(t *testing.T) {
	c := DefaultStreamConfig()
	c.Exempt = []string{"w2054"}
	g, err := NewStreamGuard(&c)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if at := pushLoop(t, g, 40); at >= 0 {
		t.Fatalf("a loop containing an exempt text halted at %d", at)
	}
}

func TestReasoningLoopsEndTheReasoning(t *testing.T) {
	c := DefaultStreamConfig()
	c.ReasoningEnd = "</think>"
	g, err := NewStreamGuard(&c)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var a Action
	for i := 0; i < 40*len(loop) && a != EndReasoning; i++ {
		if a, err = g.PushToken(loop[i%len(loop)], []byte(fmt.Sprintf(" w%d", loop[i%len(loop)]))); err != nil {
			t.Fatal(err)
		}
		if a == Halt {
			t.Fatalf("halted inside the reasoning at %d", i)
		}
	}
	if a != EndReasoning || a.String() != "end_reasoning" {
		t.Fatalf("the loop ended with %v", a)
	}
	if a, _ = g.PushToken(1, []byte("</think>")); a != Continue {
		t.Fatalf("after the marker: %v", a)
	}
}

func TestSpeculativeRollback(t *testing.T) {
	g, err := NewStreamGuard(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := g.Rollback(1); err == nil || !strings.Contains(err.Error(), "n: no checkpoint") {
		t.Fatalf("rollback without a checkpoint: %v", err)
	}
	if err := g.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if at := pushLoop(t, g, 40); at < 0 {
		t.Fatal("the drafts never halted")
	}
	st, _ := g.Stats()
	if a, err := g.Rollback(int(st.Symbols)); err != nil || a != Continue {
		t.Fatalf("rollback of every draft: %v %v", a, err)
	}
	if st, _ = g.Stats(); st.Symbols != 0 {
		t.Fatalf("%d symbols after the rollback", st.Symbols)
	}
	if _, err := g.Rollback(-1); err == nil {
		t.Fatal("a negative rollback was accepted")
	}
	if err := g.Commit(); err != nil {
		t.Fatal(err)
	}
}

func TestClosedHandles(t *testing.T) {
	g, err := NewStreamGuard(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := g.PushToken(1, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("push after Close: %v", err)
	}
	if _, err := g.Verdict(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Verdict after Close: %v", err)
	}
}

func TestClone(t *testing.T) {
	g, _ := NewStreamGuard(nil)
	defer g.Close()
	for i := 0; i < 10; i++ {
		g.PushToken(loop[i%len(loop)], nil)
	}
	c, err := g.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a, b := pushLoop(t, g, 40), pushLoop(t, c, 40)
	if a < 0 || a != b {
		t.Fatalf("the clone halted at %d, the original at %d", b, a)
	}
}

func TestCallbacks(t *testing.T) {
	g, _ := NewStreamGuard(nil)
	defer g.Close()
	var warned, halted int
	var reentrant error
	err := g.SetCallbacks(
		func(slot uint64, v Verdict) { warned++ },
		func(slot uint64, v Verdict) {
			halted++
			if slot != 0 || v.Action != Halt {
				t.Errorf("halt callback got slot %d, %+v", slot, v)
			}
			_, reentrant = g.PushToken(1, nil)
		})
	if err != nil {
		t.Fatal(err)
	}
	pushLoop(t, g, 40)
	if halted != 1 || warned < 1 {
		t.Fatalf("warned %d, halted %d", warned, halted)
	}
	if !errors.Is(reentrant, ErrReentrant) {
		t.Fatalf("a push from the guard's own callback: %v", reentrant)
	}
	if err := g.SetCallbacks(nil, nil); err != nil {
		t.Fatal(err)
	}
	g.Reset()
	pushLoop(t, g, 40)
	if halted != 1 {
		t.Fatal("a cleared callback was called")
	}
}

func TestCallbackPanicIsRaisedByThePush(t *testing.T) {
	g, _ := NewStreamGuard(nil)
	defer g.Close()
	g.SetCallbacks(nil, func(uint64, Verdict) { panic("boom") })
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Fatalf("recovered %v", r)
			}
		}()
		pushLoop(t, g, 40)
		t.Fatal("the push did not raise the callback's panic")
	}()
	// The guard is still usable.
	if err := g.Reset(); err != nil {
		t.Fatal(err)
	}
	if a, err := g.PushToken(1, nil); a != Continue || err != nil {
		t.Fatalf("after the panic: %v, %v", a, err)
	}
}

func TestCloseFromItsOwnCallback(t *testing.T) {
	before := liveHandles()
	g, _ := NewStreamGuard(nil)
	g.SetCallbacks(nil, func(uint64, Verdict) { g.Close() })
	if at := pushLoop(t, g, 40); at < 0 {
		t.Fatal("no halt")
	}
	if liveHandles() != before {
		t.Fatal("the guard closed in its callback was not freed when the push returned")
	}
	if _, err := g.PushToken(1, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("push after Close: %v", err)
	}
}

func TestTemplateBudget(t *testing.T) {
	c := DefaultStreamConfig()
	if c.TemplateWarn != 12 || c.TemplateBudget != 0 {
		t.Fatalf("template defaults = %d, %d", c.TemplateWarn, c.TemplateBudget)
	}
	c.TemplateBudget = 3
	g, err := NewStreamGuard(&c)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	text := "class TestOps(unittest.TestCase):\n"
	for i, n := range []string{"alpha", "beta", "gamma", "delta", "eps", "zeta"} {
		text += fmt.Sprintf("    def test_%s(self):\n        result = %s(%d, 2)\n        self.assertEqual(result, %d)\n\n", n, n, i, i+2)
	}
	if a, err := g.PushText(text); err != nil || a != Halt {
		t.Fatalf("siblings past the budget: %v, %v", a, err)
	}
	v, _ := g.Verdict()
	if v.Kind != KindTemplateRunaway || v.Kind.String() != "template_runaway" || v.Period != 3 {
		t.Fatalf("verdict %+v", v)
	}
}
