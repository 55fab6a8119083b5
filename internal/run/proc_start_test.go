package run

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A missing agent is "not found on PATH", not a privilege refusal (the message a first run on
// a runner whose PATH lost the agent used to get), on both start paths.
func TestMissingAgentIsNotFoundOnPath(t *testing.T) {
	msg := agentExecutableProblem(checkAgentExecutable("forgectx-no-such-agent", nil))
	if !strings.Contains(msg, "forgectx-no-such-agent was not found on PATH") || strings.Contains(msg, "regain privileges") {
		t.Errorf("ownership-mode check says %q", msg)
	}
	p := runProc(context.Background(), procSpec{argv: []string{"forgectx-no-such-agent"}, timeout: time.Second, grace: time.Second})
	if got := describeExit("the agent", p, time.Second); !strings.Contains(got, "the agent could not be started: forgectx-no-such-agent was not found on PATH") {
		t.Errorf("start failure says %q", got)
	}
	if got := describeExit("the agent", procResult{ExitCode: 127}, time.Second); !strings.Contains(got, "code 127 (a shell's code for a command not found on PATH)") {
		t.Errorf("exit 127 says %q", got)
	}
}
