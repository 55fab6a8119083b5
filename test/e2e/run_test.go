package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/run"
	"github.com/forgectx/forgectx/internal/status"
	"github.com/forgectx/forgectx/test/testnotice"
)

// Proceed path: the lookup finds no status comment, the started comment is created, the
// snapshot is assembled, verified and handed read-only to the agent with a scrubbed
// environment, then the receipt is posted and the status comment edited to ✅ — exactly these
// requests, in this order.
func TestRunProceedPostsStartCommentReceiptAndCompletionEdit(t *testing.T) {
	w := newWorld(t, worldOpts{})
	// A zero-width space in an admitted comment: a filter finding the job summary must list.
	w.sc.Comments[0].Body = "Confirmed\u200b on main."
	want := w.expectedIndex()
	w.expectStartCreate()
	w.expectAcquisition()
	w.expectFinish(status.Success, "", run.StatusSuccess, want)

	before := len(w.fake.Served())
	res, err := w.run()
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if res.Status != run.StatusSuccess || res.ExitCode() != run.ExitOK || !res.AgentRan {
		t.Fatalf("result = %+v", res)
	}
	if got := w.writes(); !reflect.DeepEqual(got, []string{"POST", "PATCH", "POST"}) {
		t.Errorf("comment writes = %v, want start POST, completion PATCH, receipt POST", got)
	}
	// The fixed order (docs/run.md): start status comment, then the snapshot, then the completion status
	// comment and the receipt.
	if got := w.lifecycleOrder(before); !reflect.DeepEqual(got, []string{"lookup", "start", "acquire", "status", "receipt"}) {
		t.Errorf("lifecycle order = %v", got)
	}
	// The agent consumed exactly the assembled index: the receipt's input_revision.
	if got := strings.TrimSpace(readFile(t, filepath.Join(w.out, "index.sha"))); got != want || res.InputRevision != want {
		t.Errorf("agent index sha %s, receipt input_revision %s, assembled %s", got, res.InputRevision, want)
	}
	if got := strings.TrimSpace(readFile(t, filepath.Join(w.out, "modes"))); got != "555\n444\n555" {
		t.Errorf("read-only copy modes = %q, want 555/444/555", got)
	}
	if got := strings.TrimSpace(readFile(t, filepath.Join(w.out, "ro"))); got != "readonly" {
		t.Errorf("the agent could write its snapshot copy (%s)", got)
	}
	// In bind-mount mode the agent's copy was a mount point while it ran (so the "no mount
	// survives" check of assertNoTrees below is not vacuous).
	if strings.Contains(w.logBuf.String(), `"mode":"bind-mount"`) && strings.TrimSpace(readFile(t, filepath.Join(w.out, "mounts"))) == "" {
		t.Error("bind-mount mode, but the agent's copy was not a mount point")
	}
	env := readFile(t, filepath.Join(w.out, "env"))
	for _, forbidden := range []string{token, "GITHUB_TOKEN", w.env["ANTHROPIC_API_KEY"], "GITHUB_OUTPUT", "RUNNER_TEMP"} {
		if strings.Contains(env, forbidden) {
			t.Errorf("agent environment carries %q-like value", forbidden[:6])
		}
	}
	if strings.Contains(env, "TOKEN_COPY") {
		t.Error("a harness-listed variable carrying the forge token reached the agent")
	}
	// No forge credential under any of its common names, nor a copy of one or of the
	// registered secret under a harness-listed name.
	for name, copyName := range forgeCredentials {
		if strings.Contains(env, credentialValue(name)) || strings.Contains(env, name+"=") || strings.Contains(env, copyName+"=") {
			t.Errorf("the agent environment carries %s (or its copy %s)", name, copyName)
		}
	}
	if strings.Contains(env, "COPY_SECRET=") {
		t.Error("a harness-listed copy of the registered secret reached the agent")
	}
	for _, required := range []string{run.EnvContextDir + "=", run.EnvEventExcerpt + "=", "AGENT_OUT=", "MODEL_API_KEY=model-key-the-agent-needs-0123456789"} {
		if !strings.Contains(env, required) {
			t.Errorf("agent environment lacks %s", required)
		}
	}
	var ex map[string]any
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(w.out, "excerpt.json"))), &ex); err != nil || ex["issue"] == nil || ex["action"] == nil {
		t.Errorf("event excerpt = %v (%v), want the distilled issues event (action and issue)", ex, err)
	}
	// The relay ran on the proceed path: skipped=false.
	if out := readFile(t, w.env["GITHUB_OUTPUT"]); !strings.Contains(out, "skipped<<") || !strings.HasSuffix(strings.TrimSpace(out), "false\n_GitHubActionsFileCommandDelimeter_") && !strings.Contains(out, "skipped<<_GitHubActionsFileCommandDelimeter_\nfalse\n") {
		t.Errorf("GITHUB_OUTPUT = %q, want skipped=false", out)
	}
	sum := readFile(t, w.env["GITHUB_STEP_SUMMARY"])
	for _, s := range []string{"✅ forgectx run: agent `triage` on #7 — success", "| decision | proceed (no-prescript) |", "| agent | success in ",
		"| source | acquired | records |", "| comments | 5 |", "authorization_failed", "| receipt | `" + receiptID + "` (posted) |"} {
		if !strings.Contains(sum, s) {
			t.Errorf("job summary lacks %q:\n%s", s, sum)
		}
	}
	// Every source's record counts, every gap with its usability and count, every filter
	// finding with its count.
	rows := []string{}
	for _, src := range res.Summary.Sources {
		rows = append(rows, fmt.Sprintf("| %s | %d | %d | %d | %d | %d | %d |", src.Source, src.Acquired, src.Records, src.WithContent, src.Rejected, src.Omitted, src.Own))
	}
	for _, g := range res.Summary.Gaps {
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %d |", g.Scope, g.Code, g.Usability, g.Count))
	}
	for _, f := range res.Summary.Findings {
		rows = append(rows, fmt.Sprintf("| %s | %d |", f.Code, f.Count))
	}
	if len(res.Summary.Sources) != 3 || len(res.Summary.Gaps) == 0 || len(res.Summary.Findings) == 0 {
		t.Fatalf("test premise: sources, gaps and findings: %+v", res.Summary)
	}
	for _, row := range rows {
		if !strings.Contains(sum, row+"\n") {
			t.Errorf("job summary lacks the row %q:\n%s", row, sum)
		}
	}
	w.assertNoTrees()
	w.assertLogHygiene()
	for _, phase := range []string{`"phase":"scavenge"`, `"phase":"status"`, `"phase":"snapshot"`, `"phase":"pre-script"`, `"phase":"verify"`, `"phase":"agent"`, `"phase":"receipt"`, `"phase":"cleanup"`} {
		if !strings.Contains(w.logBuf.String(), phase) {
			t.Errorf("log lacks progress line %s", phase)
		}
	}
}

// Agent failure: ❌ with the exit code (never the agent's output), failure receipt, exit 1.
func TestRunAgentFailureIsFailedWithExitCode(t *testing.T) {
	w := newWorld(t, worldOpts{agentMode: "fail"})
	want := w.expectedIndex()
	w.expectStartCreate()
	w.expectAcquisition()
	w.expectFinish(status.Failure, "the agent exited with code 3", run.StatusFailure, want)
	res, err := w.run()
	var re *run.RunError
	if !errors.As(err, &re) || res.ExitCode() != run.ExitFailed || res.Status != run.StatusFailure {
		t.Fatalf("run = %+v, %v; want a failed run", res, err)
	}
	if strings.Contains(w.logBuf.String(), "agent broke") {
		t.Error("the agent's stderr reached the structured log")
	}
	w.assertNoTrees()
}

// Time-out: the agent outlives agent.timeout; ⚠️ timed out, timed_out receipt, exit 1, the
// agent's process group got SIGTERM.
func TestRunAgentTimeoutIsTimedOut(t *testing.T) {
	w := newWorld(t, worldOpts{agentMode: "sleep", agentTimeout: "1s"})
	want := w.expectedIndex()
	w.expectStartCreate()
	w.expectAcquisition()
	w.expectFinish(status.TimedOut, "the agent timed out after 1s", run.StatusTimedOut, want)
	res, err := w.run()
	if err == nil || res.Status != run.StatusTimedOut || res.ExitCode() != run.ExitFailed {
		t.Fatalf("run = %+v, %v; want timed_out", res, err)
	}
	if !exists(filepath.Join(w.out, "term")) {
		t.Error("the agent did not receive SIGTERM")
	}
	w.assertNoTrees()
}

// Ownership mode (forgectx as root): the copy is root-owned 0555/0444 and the agent runs as an
// unprivileged UID, so it cannot write the copy.
func TestRunOwnershipModeAgentRunsUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		testnotice.Skip(t, "unprivileged-agent tests (non-root)", "ownership mode needs forgectx to run as root")
	}
	w := newWorld(t, worldOpts{})
	// The unprivileged agent must reach its script and its output directory.
	for d := w.dir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		must(t, os.Chmod(d, 0o755))
	}
	must(t, os.Chmod(filepath.Join(w.dir, "agent.sh"), 0o644))
	must(t, os.Chmod(w.out, 0o777))
	must(t, os.Chmod(w.env["RUNNER_TEMP"], 0o755)) // the stage base must be searchable by the agent
	want := w.expectedIndex()
	w.expectStartCreate()
	w.expectAcquisition()
	w.expectFinish(status.Success, "", run.StatusSuccess, want)
	o := w.options()
	o.Immutability, o.AgentUID, o.AgentGID = "ownership", 65534, 65534
	res, err := run.Run(context.Background(), o)
	if err != nil || res.Status != run.StatusSuccess {
		t.Fatalf("run = %+v, %v", res, err)
	}
	if got := strings.TrimSpace(readFile(t, filepath.Join(w.out, "uid"))); got != "65534" {
		t.Errorf("agent uid = %s, want 65534", got)
	}
	if got := strings.TrimSpace(readFile(t, filepath.Join(w.out, "ro"))); got != "readonly" {
		t.Errorf("the unprivileged agent could write its snapshot copy (%s)", got)
	}
	if got := strings.TrimSpace(readFile(t, filepath.Join(w.out, "index.sha"))); got != want {
		t.Errorf("agent index sha %s, want %s", got, want)
	}
	w.assertNoTrees()
}
