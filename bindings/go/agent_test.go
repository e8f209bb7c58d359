package loopguard

import (
	"errors"
	"strings"
	"testing"
)

func TestRepeatedFailingCallIsStopped(t *testing.T) {
	g, err := NewAgentGuard(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var warnings []AgentVerdict
	g.SetCallbacks(func(v AgentVerdict) { warnings = append(warnings, v) }, nil)
	var worst Action
	var at int
	for i := 0; i < 12 && worst < Block; i++ {
		a, err := g.Call("bash", []byte(`{"command": "pytest tests/test_io.py"}`))
		if err != nil {
			t.Fatal(err)
		}
		if a > worst {
			worst, at = a, i
		}
		if a == Block || a == Halt {
			break
		}
		if _, err := g.Result([]byte("1 failed"), []byte("AssertionError: expected 3, got 2")); err != nil {
			t.Fatal(err)
		}
	}
	if worst < Block || at < 2 {
		t.Fatalf("the same failing command was answered %v at call %d", worst, at)
	}
	v, err := g.Verdict()
	if err != nil || v.Kind == AgentKindNone || v.Count < 3 {
		t.Fatalf("verdict %+v, %v", v, err)
	}
	if len(warnings) == 0 {
		t.Fatal("no warn callback")
	}
	ev, err := g.Evidence()
	if err != nil || len(ev) == 0 || uint64(len(ev)) != v.EvidenceLen {
		t.Fatalf("evidence %v, %v (verdict says %d)", ev, err, v.EvidenceLen)
	}
	full, err := g.Describe(Full)
	if err != nil || !strings.Contains(full, "<loop-recovery>") {
		t.Fatalf("Describe(Full) = %q, %v", full, err)
	}
	s, err := g.Stats()
	if err != nil || s.Calls == 0 || s.Blocks+s.Halts == 0 || s.ByKind[v.Kind] == 0 {
		t.Fatalf("stats %+v, %v", s, err)
	}
	if n, err := g.MemoryUsage(); err != nil || n <= 0 {
		t.Fatalf("MemoryUsage %d, %v", n, err)
	}
	if err := g.Reset(); err != nil {
		t.Fatal(err)
	}
	if v, _ := g.Verdict(); v.Action != Continue {
		t.Fatalf("after Reset: %+v", v)
	}
}

func TestFreshCallsContinue(t *testing.T) {
	g, _ := NewAgentGuard(nil)
	defer g.Close()
	files := []string{"a.go", "b.go", "c.go", "d.go", "e.go", "f.go", "g.go", "h.go"}
	for _, f := range files {
		a, err := g.Call("read_file", []byte(`{"path": "`+f+`"}`))
		if err != nil || a != Continue {
			t.Fatalf("reading %s: %v, %v", f, a, err)
		}
		g.Result([]byte("package "+f), nil)
	}
	for _, text := range []string{"Reading the sources.", "The bug is in the parser."} {
		if a, err := g.Message(text); err != nil || a != Continue {
			t.Fatalf("message: %v, %v", a, err)
		}
	}
	for _, ev := range []func() (Action, error){
		func() (Action, error) { return g.Thought("Check the lexer next.") },
		func() (Action, error) { return g.User("Please also fix the docs.") },
		func() (Action, error) { return g.State(42) },
		func() (Action, error) { return g.Tick(1000) },
		func() (Action, error) { return g.MessageChunk("Part one, ") },
		func() (Action, error) { return g.EndMessage() },
		g.Reject,
	} {
		if a, err := ev(); err != nil || a != Continue {
			t.Fatalf("event answered %v, %v", a, err)
		}
	}
	if _, err := g.Call("bash", []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	if v, _ := g.Verdict(); !v.ArgsInvalid {
		t.Fatal("invalid JSON arguments were not flagged")
	}
}

func TestAgentConfig(t *testing.T) {
	c := DefaultAgentConfig()
	c.Window = 2
	if err := c.Validate(); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "window") {
		t.Fatalf("window 2: %v", err)
	}
	if _, err := NewAgentGuard(&c); !errors.Is(err, ErrConfig) {
		t.Fatalf("NewAgentGuard with a bad config: %v", err)
	}
	if _, err := PresetAgentConfig(AgentPreset(42)); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("preset 42: %v", err)
	}
	for _, p := range []AgentPreset{AgentDefault, GeminiCLI, OpenHands, RooCode, Cline} {
		c, err := PresetAgentConfig(p)
		if err != nil || c.Preset != p {
			t.Fatalf("preset %d: %+v, %v", p, c.Preset, err)
		}
		g, err := NewAgentGuard(&c)
		if err != nil {
			t.Fatalf("preset %d: %v", p, err)
		}
		g.Close()
	}
}

func TestExemptToolIsNeverStopped(t *testing.T) {
	c := DefaultAgentConfig()
	c.Tools = []ToolPolicy{{Name: "wait_for_build", Flags: ToolExempt}}
	c.ShellTools = []string{"run"}
	g, err := NewAgentGuard(&c)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for i := 0; i < 20; i++ {
		if a, err := g.Call("wait_for_build", []byte(`{}`)); err != nil || a != Continue {
			t.Fatalf("exempt call %d: %v, %v", i, a, err)
		}
		g.Result([]byte("still building"), nil)
	}
}

func TestAgentClosed(t *testing.T) {
	g, _ := NewAgentGuard(nil)
	g.Close()
	g.Close()
	if _, err := g.Call("x", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Call after Close: %v", err)
	}
}

// Questions to the user with nothing written between warn from the fifth; the kind, added after
// the C stats' first array was laid out, is counted all the same.
func TestQuestionStreak(t *testing.T) {
	g, _ := NewAgentGuard(nil)
	defer g.Close()
	var last Action
	for i := 0; i < 5; i++ {
		q := []byte(`{"question": "Which environment, ` + string(rune('a'+i)) + `?"}`)
		a, err := g.Call("ask_followup_question", q)
		if err != nil {
			t.Fatal(err)
		}
		last = a
		g.Result([]byte("<answer>staging</answer>"), nil)
	}
	s, err := g.Stats()
	if err != nil || last != Warn || s.ByKind[AgentKindQuestionStreak] != 1 {
		t.Fatalf("fifth question: %v, %+v, %v", last, s.ByKind, err)
	}
	if AgentKindQuestionStreak.String() != "question_streak" {
		t.Fatalf("name: %s", AgentKindQuestionStreak)
	}
}
