package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/run"
	"github.com/forgectx/forgectx/internal/status"
)

// ghEntry is one go-githubactions heredoc entry of $GITHUB_OUTPUT.
func ghEntry(k, v string) string {
	const d = "_GitHubActionsFileCommandDelimeter_"
	return k + "<<" + d + "\n" + v + "\n" + d + "\n"
}

// Every run that reaches a terminal state relays status (the receipt status) and context-dir
// (the read-only copy the agent was given, empty when it was not launched) after the decision:
// appended to $GITHUB_OUTPUT, and in the dotenv report as FORGECTX_STATUS and
// FORGECTX_CONTEXT_DIR (omitted when empty). The bytes are exact on proceed, skip, an agent
// failure and a failure before any decision; context-dir is the FORGECTX_CONTEXT_DIR the
// agent saw.
func TestRunRelaysStatusAndContextDirOnEveryTerminalPath(t *testing.T) {
	const skipPre = `{ echo "skipped=true"; echo "reason=an open PR already addresses this issue"; echo "myagent_pr=8"; } >> "$FULLSEND_PRESCRIPT_OUTPUT"
`
	cases := []struct {
		name       string
		wo         worldOpts
		st         status.State
		detail     string
		runStatus  string
		agentRan   bool
		decisionGH func() string // the decision's entries; "" when none was reached
		decisionDE string
	}{
		{"proceed", worldOpts{}, status.Success, "", run.StatusSuccess, true,
			func() string { return ghEntry("reason", "") + ghEntry("skip-reason", "") + ghEntry("skipped", "false") }, "skipped=false\n"},
		{"skip", worldOpts{pre: skipPre}, status.Skipped, "an open PR already addresses this issue", run.StatusSkipped, false,
			func() string {
				r := "an open PR already addresses this issue"
				return ghEntry("reason", r) + ghEntry("skip-reason", r) + ghEntry("myagent_pr", "8") + ghEntry("skipped", "true")
			}, "reason=an open PR already addresses this issue\nmyagent_pr=8\nskipped=true\n"},
		{"agent failure", worldOpts{agentMode: "fail"}, status.Failure, "the agent exited with code 3", run.StatusFailure, true,
			func() string { return ghEntry("reason", "") + ghEntry("skip-reason", "") + ghEntry("skipped", "false") }, "skipped=false\n"},
		{"failure before the decision", worldOpts{pre: "echo '::error::gate broke'\nexit 1\n"}, status.Failure, "pre-script: gate broke", run.StatusFailure, false,
			func() string { return "" }, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, tc.wo)
			want := w.expectedIndex()
			w.expectStartCreate()
			w.expectAcquisition()
			w.expectFinish(tc.st, tc.detail, tc.runStatus, want)
			o := w.options()
			o.DotenvPath = filepath.Join(w.dir, "run.env")
			res, _ := runWith(o)
			if res == nil || res.Status != tc.runStatus || res.AgentRan != tc.agentRan || !res.OutputsRelayed {
				t.Fatalf("run = %+v", res)
			}
			ctxDir := ""
			if tc.agentRan {
				env := readFile(t, filepath.Join(w.out, "env"))
				for _, line := range strings.Split(env, "\n") {
					if v, ok := strings.CutPrefix(line, run.EnvContextDir+"="); ok {
						ctxDir = v
					}
				}
				if ctxDir == "" || ctxDir != res.ContextDir {
					t.Fatalf("context dir: agent saw %q, Result says %q", ctxDir, res.ContextDir)
				}
			} else if res.ContextDir != "" {
				t.Errorf("Result.ContextDir = %q without an agent", res.ContextDir)
			}
			wantGH := tc.decisionGH() + ghEntry("status", tc.runStatus) + ghEntry("context-dir", ctxDir)
			if got := readFile(t, w.env["GITHUB_OUTPUT"]); got != wantGH {
				t.Errorf("GITHUB_OUTPUT =\n%q\nwant\n%q", got, wantGH)
			}
			wantDE := tc.decisionDE + "FORGECTX_STATUS=" + tc.runStatus + "\n"
			if ctxDir != "" {
				wantDE += "FORGECTX_CONTEXT_DIR=" + ctxDir + "\n"
			}
			if got := readFile(t, o.DotenvPath); got != wantDE {
				t.Errorf("dotenv report =\n%q\nwant\n%q", got, wantDE)
			}
			w.assertNoTrees()
		})
	}
}
