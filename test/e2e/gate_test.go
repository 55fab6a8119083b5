package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/run"
	"github.com/forgectx/forgectx/internal/status"
	"github.com/forgectx/forgectx/pkg/prescript"
)

// Both ways a pre-script requests a skip — skipped=true in the output file and exit 78 with
// the reason on stdout — end in ⏭️ with the reason, a skipped receipt whose input_revision is
// the index the pre-script was shown, skipped=true relayed to $GITHUB_OUTPUT, no agent launch,
// exit 0 and no tree left.
func TestRunSkipViaFileAndExit78(t *testing.T) {
	cases := []struct {
		name, script, reason, basis string
	}{
		{"file", `set -eu
test -f "$FORGECTX_SNAPSHOT_DIR/index.json"
env > "{{DIR}}/pre-env"
if [ -n "${FULLSEND_PRESCRIPT_OUTPUT:-}" ]; then
  { echo "skipped=true"; echo "reason=an open PR already addresses this issue"; echo "myagent_pr=8"; } >> "$FULLSEND_PRESCRIPT_OUTPUT"
fi
`, "an open PR already addresses this issue", "file"},
		{"exit-78", `env > "{{DIR}}/pre-env"
echo "No issues need scoring"
exit 78
`, "No issues need scoring", "exit-78"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, worldOpts{pre: tc.script})
			want := w.expectedIndex()
			w.expectStartCreate()
			w.expectAcquisition()
			w.expectFinish(status.Skipped, tc.reason, run.StatusSkipped, want)
			res, err := w.run()
			if err != nil || res.Status != run.StatusSkipped || res.ExitCode() != run.ExitOK || res.Decision != "skip" {
				t.Fatalf("run = %+v, %v; want a skip with exit 0", res, err)
			}
			if res.AgentRan || exists(filepath.Join(w.out, "env")) {
				t.Error("the agent was launched on a skip")
			}
			out := readFile(t, w.env["GITHUB_OUTPUT"])
			for _, s := range []string{"skipped<<_GitHubActionsFileCommandDelimeter_\ntrue\n", "skip-reason<<_GitHubActionsFileCommandDelimeter_\n" + tc.reason + "\n"} {
				if !strings.Contains(out, s) {
					t.Errorf("GITHUB_OUTPUT lacks %q:\n%s", s, out)
				}
			}
			pre := readFile(t, filepath.Join(w.dir, "pre-env"))
			if strings.Contains(pre, token) || strings.Contains(pre, "GITHUB_TOKEN") || strings.Contains(pre, "AGENT_OUT") {
				t.Error("the pre-script received a variable the harness does not pass it")
			}
			if !strings.Contains(pre, run.EnvSnapshotDir+"=") || !strings.Contains(pre, "FULLSEND_PRESCRIPT_OUTPUT=") {
				t.Error("the pre-script lacks the snapshot path or the protocol file")
			}
			if !strings.Contains(readFile(t, w.env["GITHUB_STEP_SUMMARY"]), "| decision | skip ("+tc.basis+") |") {
				t.Error("job summary does not show the skip decision")
			}
			w.assertNoTrees()
			w.assertLogHygiene()
		})
	}
}

// A pre-script hard failure is ❌ with the script's own ::error:: message, credential-redacted;
// the decision was never reached, so nothing is relayed and no agent starts; the receipt is a
// failure over the index the script was shown.
func TestRunPrescriptHardFailureShowsRedactedDiagnostic(t *testing.T) {
	msg := "Fix iteration 4 exceeds bot cap of 3 (debug token " + token + ")"
	w := newWorld(t, worldOpts{pre: fmt.Sprintf("echo '::error::%s'\nexit 1\n", msg)})
	want := w.expectedIndex()
	red, findings := filter.New([]string{token, w.env["ANTHROPIC_API_KEY"]}).Redact(msg)
	if strings.Contains(red, token) || len(findings) == 0 {
		t.Fatalf("test premise: the message must contain a redactable token")
	}
	w.expectStartCreate()
	w.expectAcquisition()
	w.expectFinish(status.Failure, "pre-script: "+red, run.StatusFailure, want)
	res, err := w.run()
	if err == nil || res.Status != run.StatusFailure || res.ExitCode() != run.ExitFailed || res.Decision != "" {
		t.Fatalf("run = %+v, %v; want a failure before the decision", res, err)
	}
	if res.AgentRan {
		t.Error("the agent was launched after a pre-script failure")
	}
	if out := readFile(t, w.env["GITHUB_OUTPUT"]); out != runOutputs("failure", "") {
		t.Errorf("GITHUB_OUTPUT = %q; no decision may be relayed before one was reached, only the run's status", out)
	}
	w.assertNoTrees()
	w.assertLogHygiene()
}

// The root of trust is the retained index digest: a pre-script that rewrites the on-disk
// index.json (here: one appended byte) makes the run fail before the agent starts.
func TestRunRewrittenRootIndexAbortsBeforeAgent(t *testing.T) {
	w := newWorld(t, worldOpts{pre: "printf ' ' >> \"$FORGECTX_SNAPSHOT_DIR/index.json\"\n"})
	want := w.expectedIndex()
	w.expectStartCreate()
	w.expectAcquisition()
	w.expectFinish(status.Failure, "the snapshot's root index changed after assembly; the agent was not started", run.StatusFailure, want)
	res, err := w.run()
	if err == nil || res.Status != run.StatusFailure || res.AgentRan || exists(filepath.Join(w.out, "env")) {
		t.Fatalf("run = %+v, %v; want a failure with no agent", res, err)
	}
	// The decision (proceed) was reached and relayed before the compare.
	if !strings.Contains(readFile(t, w.env["GITHUB_OUTPUT"]), "skipped<<_GitHubActionsFileCommandDelimeter_\nfalse\n") {
		t.Error("the proceed decision was not relayed")
	}
	w.assertNoTrees()
}

// When the agent's copy cannot be made immutable (ownership mode without an unprivileged
// agent identity) the configuration is refused before anything is posted (exit 2).
func TestRunUnenforceableImmutabilityRefusedBeforePosting(t *testing.T) {
	w := newWorld(t, worldOpts{}) // no expectations: any forge request fails the test
	o := w.options()
	o.Immutability, o.AgentUID, o.AgentGID = "ownership", 0, 0
	res, err := run.Run(context.Background(), o)
	if !run.IsConfigError(err) || res != nil || !strings.Contains(err.Error(), "--immutability") {
		t.Fatalf("run = %+v, %v; want a configuration error naming --immutability", res, err)
	}
	w.assertRefusedBeforePosting()
}

// A --tree-dir inside the Git work tree of the working directory (the repository) is refused
// before anything is posted (exit 2); the directory is never created.
func TestRunTreeDirInsideRepositoryRefusedBeforePosting(t *testing.T) {
	wd, err := os.Getwd()
	must(t, err)
	w := newWorld(t, worldOpts{}) // no expectations: any forge request fails the test
	o := w.options()
	o.TreeDir = filepath.Join(wd, "forgectx-tree-never-created")
	res, err := run.Run(context.Background(), o)
	if !run.IsConfigError(err) || res != nil || !strings.Contains(err.Error(), "--tree-dir") || !strings.Contains(err.Error(), "Git work tree") {
		t.Fatalf("run = %+v, %v; want a configuration error naming --tree-dir", res, err)
	}
	if exists(o.TreeDir) {
		t.Error("the refused tree directory was created")
	}
	if got := w.writes(); len(got) != 0 {
		t.Errorf("forge writes %v before the configuration was refused", got)
	}
}

// A hostile diagnostic — a forged status marker, a mention, a link, HTML and invisible
// characters — reaches the status comment only as inert, visible text inside a code span.
func TestRunHostileDiagnosticIsInert(t *testing.T) {
	msg := "<!-- forgectx:status agent=triage --> @octo-org/admins [click](https://evil.example) <img src=x>\u200b\u202e done"
	w := newWorld(t, worldOpts{pre: fmt.Sprintf("printf '%%s\\n' '::error::%s'\nexit 1\n", msg)})
	want := w.expectedIndex()
	w.expectStartCreate()
	w.expectAcquisition()
	final := render(t, status.Failure, "pre-script: "+msg) // exactly what Render makes of it
	w.expectFinish(status.Failure, "pre-script: "+msg, run.StatusFailure, want)
	if _, err := w.run(); err == nil {
		t.Fatal("run succeeded")
	}
	lines := strings.Split(strings.TrimSuffix(final, "\n"), "\n")
	if len(lines) != 2 || strings.Count(final, "<!--") != 1 || strings.ContainsAny(lines[1], "<>\u200b\u202e") {
		t.Fatalf("status body is not a marker line and one inert line:\n%q", final)
	}
	i := strings.Index(lines[1], "`` pre-script:")
	if i < 0 {
		i = strings.Index(lines[1], "` pre-script:")
	}
	if i < 0 || !strings.HasSuffix(lines[1], "`") || !strings.Contains(lines[1][i:], "@octo-org/admins") {
		t.Errorf("the mention and link are not inside the detail's code span: %q", lines[1])
	}
}

// A relay target that cannot be written when the decision is relayed fails the run (a workflow
// gate that disagrees with the CLI's decision is what the relay exists to prevent): ❌, failure
// receipt, no agent, no tree. The pre-flight refuses a target unusable from the start
// (TestRunUnusableGitHubOutputRefusedBeforePosting); here the pre-script replaces the file with
// a directory after it.
func TestRunRelayWriteFailureFailsBeforeAgent(t *testing.T) {
	w := newWorld(t, worldOpts{pre: "rm -f \"{{DIR}}/output\" && mkdir \"{{DIR}}/output\"\n"})
	want := w.expectedIndex()
	w.expectStartCreate()
	w.expectAcquisition()
	w.expectFinish(status.Failure, "the decision could not be relayed to the CI system", run.StatusFailure, want)
	res, err := w.run()
	if err == nil || res.Status != run.StatusFailure || res.AgentRan || exists(filepath.Join(w.out, "env")) {
		t.Fatalf("run = %+v, %v; want a failure with no agent", res, err)
	}
	w.assertNoTrees()
}

// The harness's total timeout ends the run wherever it is (here: mid-agent): ⚠️ timed out,
// a timed_out receipt, exit 1, the agent stopped and every tree removed.
func TestRunTotalTimeoutIsTimedOut(t *testing.T) {
	w := newWorld(t, worldOpts{agentMode: "sleep"})
	want := w.expectedIndex()
	w.expectStartCreate()
	w.expectAcquisition()
	w.expectFinish(status.TimedOut, "the run exceeded its total timeout", run.StatusTimedOut, want)
	h := *w.h
	h.TotalTimeout = 1500 * time.Millisecond
	o := w.options()
	o.Harness = &h
	res, err := runWith(o)
	if err == nil || res.Status != run.StatusTimedOut || res.ExitCode() != run.ExitFailed {
		t.Fatalf("run = %+v, %v; want timed_out", res, err)
	}
	if !exists(filepath.Join(w.out, "term")) || exists(filepath.Join(w.out, "done")) {
		t.Error("the agent was not stopped by SIGTERM")
	}
	w.assertNoTrees()
}

// The skip and pre-script-failure paths keep the fixed order too: start status comment, the
// snapshot, then the completion status comment and the receipt.
func TestRunSkipAndFailureKeepTheLifecycleOrder(t *testing.T) {
	for _, tc := range []struct {
		name, pre, detail string
		st                status.State
		rs                string
	}{
		{"skip", "exit 78\n", "the pre-script requested a skip", status.Skipped, run.StatusSkipped},
		{"pre-script failure", "echo '::error::broken' >&2\nexit 1\n", "pre-script: broken", status.Failure, run.StatusFailure},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, worldOpts{pre: tc.pre})
			want := w.expectedIndex()
			w.expectStartCreate()
			w.expectAcquisition()
			w.expectFinish(tc.st, tc.detail, tc.rs, want)
			before := len(w.fake.Served())
			res, _ := w.run()
			if res == nil || res.Status != tc.rs {
				t.Fatalf("result = %+v", res)
			}
			if got := w.lifecycleOrder(before); !reflect.DeepEqual(got, []string{"lookup", "start", "acquire", "status", "receipt"}) {
				t.Errorf("lifecycle order = %v", got)
			}
			w.assertNoTrees()
		})
	}
}

// A malformed output file after exit 0 fails closed before the decision (nothing relayed, no
// agent); after exit 78 the exit code is authoritative and the run skips, relaying
// skipped=true.
func TestRunMalformedOutputFileFailsClosedUnlessExit78(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		skip         bool
	}{
		{"exit 0", "echo 'skipped=maybe' >> \"$FULLSEND_PRESCRIPT_OUTPUT\"\n", false},
		{"exit 78", "echo 'skipped=maybe' >> \"$FULLSEND_PRESCRIPT_OUTPUT\"\necho 'nothing to do'\nexit 78\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, worldOpts{pre: tc.script})
			want := w.expectedIndex()
			w.expectStartCreate()
			w.expectAcquisition()
			if tc.skip {
				w.expectFinish(status.Skipped, "nothing to do", run.StatusSkipped, want)
			} else {
				_, perr := prescript.Parse(strings.NewReader("skipped=maybe\n"))
				var pe *prescript.ProtocolError
				if !errors.As(perr, &pe) {
					t.Fatalf("test premise: %v", perr)
				}
				w.expectFinish(status.Failure, "pre-script output file: "+pe.Error(), run.StatusFailure, want)
			}
			res, _ := w.run()
			if res == nil || res.AgentRan || (res.Status == run.StatusSkipped) != tc.skip {
				t.Fatalf("result = %+v", res)
			}
			out := readFile(t, w.env["GITHUB_OUTPUT"])
			if tc.skip && !strings.Contains(out, "skipped<<_GitHubActionsFileCommandDelimeter_\ntrue\n") {
				t.Errorf("GITHUB_OUTPUT = %q, want skipped=true", out)
			}
			if !tc.skip && out != runOutputs("failure", "") {
				t.Errorf("GITHUB_OUTPUT = %q; no decision may be relayed before one was reached, only the run's status", out)
			}
			w.assertNoTrees()
		})
	}
}

// A state directory another user could write (group/other bits) or that is not this user's is
// refused before anything is posted (exit 2): the rule stage.Create applies, checked in the
// pre-flight, so the ⏳ start comment is never written over a run that cannot stage.
func TestRunBadStateDirRefusedBeforePosting(t *testing.T) {
	cases := map[string]func(t *testing.T, dir string){
		"group and other writable": func(t *testing.T, dir string) { must(t, os.Chmod(dir, 0o777)) },
		"a symlink":                nil,
		"missing parent":           nil,
	}
	for name, prep := range cases {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, worldOpts{}) // no expectations: any forge request fails the test
			o := w.options()
			state := filepath.Join(w.dir, "state")
			switch name {
			case "a symlink":
				must(t, os.Mkdir(filepath.Join(w.dir, "real-state"), 0o700))
				must(t, os.Symlink(filepath.Join(w.dir, "real-state"), state))
			case "missing parent":
				state = filepath.Join(w.dir, "no-such-parent", "state")
			default:
				must(t, os.Mkdir(state, 0o700))
				prep(t, state)
			}
			o.StateDir = state
			res, err := run.Run(context.Background(), o)
			if !run.IsConfigError(err) || res != nil || !strings.Contains(err.Error(), "--state-dir") {
				t.Fatalf("run = %+v, %v; want a configuration error naming --state-dir", res, err)
			}
			w.assertRefusedBeforePosting()
		})
	}
}

// An agent, pre-script or post-script program that cannot be resolved (a typo in a harness
// command) is refused before anything is posted (exit 2), naming the field and the reason.
func TestRunProgramNotOnPathRefusedBeforePosting(t *testing.T) {
	for _, field := range []string{"agent.command", "pre_script.command", "post_script.command"} {
		t.Run(field, func(t *testing.T) {
			w := newWorld(t, worldOpts{pre: "true\n", post: "true\n"}) // no expectations: any forge request fails the test
			o := w.options()
			h := *w.h
			missing := []string{"forgectx-no-such-program-e2e", "--flag"}
			switch field {
			case "agent.command":
				h.Agent.Command = missing
			case "pre_script.command":
				ps := *h.PreScript
				ps.Command, h.PreScript = missing, &ps
			default:
				ps := *h.PostScript
				ps.Command, h.PostScript = missing, &ps
			}
			o.Harness = &h
			res, err := run.Run(context.Background(), o)
			if !run.IsConfigError(err) || res != nil || !strings.Contains(err.Error(), field+":") || !strings.Contains(err.Error(), "forgectx-no-such-program-e2e was not found on PATH") {
				t.Fatalf("run = %+v, %v; want a configuration error naming %s", res, err, field)
			}
			w.assertRefusedBeforePosting()
		})
	}
}

// A $GITHUB_OUTPUT the decision cannot be appended to (a directory here) failed the run only at
// the relay, after ⏳ had been posted; it is now refused in the pre-flight: exit 2, nothing
// posted, nothing staged.
func TestRunUnusableGitHubOutputRefusedBeforePosting(t *testing.T) {
	w := newWorld(t, worldOpts{}) // no expectations: any forge request fails the test
	w.env["GITHUB_OUTPUT"] = t.TempDir()
	res, err := run.Run(context.Background(), w.options())
	if !run.IsConfigError(err) || res != nil || !strings.Contains(err.Error(), "$GITHUB_OUTPUT") || !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("run = %+v, %v; want a configuration error naming $GITHUB_OUTPUT", res, err)
	}
	w.assertRefusedBeforePosting()
}

// assertRefusedBeforePosting checks that a run refused in the pre-flight made no forge write
// and staged nothing.
func (w *world) assertRefusedBeforePosting() {
	w.t.Helper()
	if got := w.writes(); len(got) != 0 {
		w.t.Errorf("forge writes %v before the configuration was refused", got)
	}
	if ents, err := os.ReadDir(w.env["RUNNER_TEMP"]); err != nil || len(ents) != 0 {
		w.t.Errorf("the refused run staged something: %v, %v", ents, err)
	}
}
