// An agent loop guarded by loopguard: a scripted coding agent runs shell commands through one
// `bash` tool, gets stuck re-running a failing test, and is told so before it wastes more
// steps. Run it with `go run ./examples/agent` from bindings/go.
package main

import (
	"fmt"
	"log"

	loopguard "github.com/loopguard/loopguard/bindings/go"
)

// step is one tool call of the scripted agent and what the tool answered.
type step struct {
	command, output, err string
}

func main() {
	guard, err := loopguard.NewAgentGuard(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer guard.Close()

	script := []step{
		{"ls src", "lexer.go parser.go", ""},
		{"cat src/parser.go", "package parser ...", ""},
		{"go test ./src", "--- FAIL: TestParse", "exit status 1"},
	}
	// Then the agent is stuck: it runs the same failing test again and again.
	for i := 0; i < 8; i++ {
		script = append(script, step{"go test ./src", "--- FAIL: TestParse", "exit status 1"})
	}

	for i, s := range script {
		args := fmt.Sprintf(`{"command": %q}`, s.command)
		action, err := guard.Call("bash", []byte(args))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("step %2d  bash %-20s -> %s\n", i, s.command, action)
		switch action {
		case loopguard.Warn, loopguard.Block:
			// A nudge for the model: add the recovery text to its next prompt.
			recovery, _ := guard.Describe(loopguard.Full)
			fmt.Printf("\n%s\n\n", recovery)
			if action == loopguard.Block {
				continue // do not run the call
			}
		case loopguard.Halt:
			brief, _ := guard.Describe(loopguard.Brief)
			fmt.Printf("stopping the session: %s\n", brief)
			return
		}
		var errText []byte
		if s.err != "" {
			errText = []byte(s.err)
		}
		if _, err := guard.Result([]byte(s.output), errText); err != nil {
			log.Fatal(err)
		}
	}
}
