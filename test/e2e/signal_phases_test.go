package e2e

import (
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/run"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
	"github.com/forgectx/forgectx/internal/status"
	"github.com/forgectx/forgectx/test/ghscenario"
	"github.com/forgectx/forgectx/test/httpfake"
)

// noInputRevision is the receipt's input_revision of a run that consumed no index: the SHA-256
// of zero bytes.
var noInputRevision = canon.SHA256Hex(nil)

// The phases before the pre-script, each held until the test has signalled forgectx — by the
// loopback forge (a request that stays open until the client gives up) or, where the phase
// makes no request, by run.Options.PhaseHook (a test seam `forgectx run` never sets). For each
// phase and for SIGTERM and SIGINT: exit 1, the status comment ends ⚠️ cancelled (created then
// if the run had posted none), a `cancelled` receipt over exactly the input consumed, the
// decision never relayed unless reached, no tree, no state, no mount, nothing secret on stderr.
func TestRunSignalAtEveryEarlyPhase(t *testing.T) {
	phases := []struct {
		name string
		// arm registers the run's requests up to the held one and returns a channel closed
		// once the run is inside the phase ("" hook: the forge holds it).
		arm  func(w *world) (held <-chan struct{}, hook string)
		want string // the receipt's input_revision: "" the assembled index
		// decided: the pre-script decision (none here: proceed) was relayed before the signal.
		decided bool
	}{
		{name: "scavenge", arm: func(w *world) (<-chan struct{}, string) {
			// Nothing was posted: the finish looks the sticky comment up and creates it.
			w.expectFinishCreate(noInputRevision)
			return nil, "scavenge"
		}, want: noInputRevision},
		{name: "start status comment", arm: func(w *world) (<-chan struct{}, string) {
			w.expectCommentList(nil)
			arrived := make(chan struct{})
			start := render(w.t, status.Started, "")
			w.fake.ExpectBody("POST", w.commentsPath(), bodyJSON(w.t, start), httpfake.Reply{Hang: true, Arrived: arrived})
			// The write never completed (the fake created nothing): the finish looks again.
			w.expectFinishCreate(noInputRevision)
			return arrived, ""
		}, want: noInputRevision},
		{name: "acquisition", arm: func(w *world) (<-chan struct{}, string) {
			w.expectStartCreate()
			arrived := w.expectAcquisitionHeld()
			w.expectFinish(status.Cancelled, "the run was cancelled", run.StatusCancelled, noInputRevision)
			return arrived, ""
		}, want: noInputRevision},
		{name: "sealing", arm: func(w *world) (<-chan struct{}, string) {
			w.expectStartCreate()
			w.expectAcquisition()
			return nil, "verify"
		}, decided: true},
	}
	for _, ph := range phases {
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
			t.Run(ph.name+"/"+sig.String(), func(t *testing.T) {
				w := newWorld(t, worldOpts{})
				w.sc.Comments[0].Body = w.sc.Comments[0].Body + " " + distinctiveBody
				input := ph.want
				if input == "" {
					input = w.expectedIndex()
				}
				held, hook := ph.arm(w)
				if ph.name == "sealing" {
					w.expectFinish(status.Cancelled, "the run was cancelled", run.StatusCancelled, input)
				}
				cfg := helperConfig{}
				if hook != "" {
					cfg.Hold, cfg.HoldFile = hook, filepath.Join(w.dir, "held")
				}
				cmd, stderr := startHelper(t, w, cfg)
				waitHeld(t, cmd, stderr, held, cfg.HoldFile)
				must(t, cmd.Process.Signal(sig))
				err := cmd.Wait()
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != run.ExitFailed {
					t.Fatalf("helper exit = %v, want exit %d; stderr:\n%s", err, run.ExitFailed, stderr.String())
				}
				if exists(filepath.Join(w.out, "env")) {
					t.Error("the agent started after the cancellation")
				}
				wantOut := runOutputs("cancelled", "")
				if ph.decided {
					wantOut = ghEntry("reason", "") + ghEntry("skip-reason", "") + ghEntry("skipped", "false") + wantOut
				}
				if got := readFile(t, w.env["GITHUB_OUTPUT"]); got != wantOut {
					t.Errorf("GITHUB_OUTPUT = %q, want %q", got, wantOut)
				}
				w.assertNoTreesIfStaged()
				all := stderr.String()
				if !strings.Contains(all, `"phase":"cleanup"`) || !strings.Contains(all, `"status":"cancelled"`) {
					t.Fatalf("stderr lacks the structured log of the run:\n%s", all)
				}
				if ph.name == "scavenge" && strings.Contains(all, `"phase":"status"`) {
					t.Error("a run cancelled while scavenging went on to the start status comment")
				}
				assertNothingPlanted(t, w, all)
			})
		}
	}
}

// expectFinishCreate registers the finish of a run whose start comment was never written: the
// lookup (no sticky comment), the ⚠️ cancelled comment created, the receipt.
func (w *world) expectFinishCreate(input string) {
	w.expectCommentList(nil)
	final := render(w.t, status.Cancelled, "the run was cancelled")
	w.fake.ExpectBody("POST", w.commentsPath(), bodyJSON(w.t, final),
		httpfake.JSON(201, w.restComment(statusID, statusNode, ghscenario.Actions, final, clock)))
	rb := receiptBody(w.t, run.StatusCancelled, input)
	w.fake.ExpectBody("POST", w.commentsPath(), bodyJSON(w.t, rb),
		httpfake.JSON(201, w.restComment(receiptID1, receiptNode, ghscenario.Actions, rb, clock)))
}

// expectAcquisitionHeld registers the acquisition with its first request (the entity query)
// held open until the client gives up; the others are optional (never made once the first
// fails). The returned channel is closed when the held request arrives.
func (w *world) expectAcquisitionHeld() <-chan struct{} {
	w.t.Helper()
	c, err := ghscenario.Build(w.sc)
	must(w.t, err)
	arrived := make(chan struct{})
	for i, in := range c.Interactions {
		body, err := in.Request.Body.Bytes()
		must(w.t, err)
		u, err := url.Parse(in.Request.URL)
		must(w.t, err)
		if i == 0 {
			w.fake.ExpectBody(in.Request.Method, u.RequestURI(), body, httpfake.Reply{Hang: true, Arrived: arrived})
			continue
		}
		rb, err := in.Response.Body.Bytes()
		must(w.t, err)
		w.fake.ExpectBody(in.Request.Method, u.RequestURI(), body, httpfake.Reply{Status: in.Response.Status, Header: in.Response.Header.Clone(), Body: rb}).Optional()
	}
	return arrived
}

// waitHeld returns once the run is inside the held phase: the forge request arrived (held) or
// the phase hook wrote holdFile.
func waitHeld(t *testing.T, cmd *exec.Cmd, stderr *syncBuffer, held <-chan struct{}, holdFile string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		if holdFile != "" && exists(holdFile) {
			return
		}
		select {
		case <-held:
			return
		case <-deadline:
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("the run never reached the held phase; stderr:\n%s", stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// assertNoTreesIfStaged is assertNoTrees for runs that may have ended before the stage state
// root was first created: a missing root is as clean as an empty one.
func (w *world) assertNoTreesIfStaged() {
	w.t.Helper()
	if _, err := os.Stat(filepath.Join(w.env["RUNNER_TEMP"], "forgectx-stage")); errors.Is(err, os.ErrNotExist) {
		ents, err := os.ReadDir(w.env["RUNNER_TEMP"])
		must(w.t, err)
		for _, e := range ents {
			w.t.Errorf("cleanup: %s left behind in the tree base", e.Name())
		}
		w.assertNoMounts()
		return
	}
	w.assertNoTrees()
}

// assertNothingPlanted checks forgectx's stderr (structured log and job log) for the forge
// token, the planted forge credentials, the registered secret and the distinctive comment body.
func assertNothingPlanted(t *testing.T, w *world, all string) {
	t.Helper()
	planted := map[string]string{"forge token": token, "registered secret": w.env["ANTHROPIC_API_KEY"], "comment body": distinctiveBody}
	for name := range forgeCredentials {
		planted[name] = credentialValue(name)
	}
	for what, s := range planted {
		if strings.Contains(all, s) {
			t.Errorf("forgectx's stderr contains the %s", what)
		}
	}
}

// Two `forgectx run` processes sharing one --state-dir (two jobs on one runner host). There is
// no lock, and none is promised (docs/failures.md): the stages never collide (each has its own
// random id under the shared root), and the scavenger tells a live owner from a dead one by
// PID, kernel start time and boot ID. Run A is held inside its agent with its tree staged;
// run B starts, scavenges (A's stage counts as live and stays), runs to completion and exits
// 0 while A's host tree still exists; A is released and exits 0. Both post their own receipt;
// afterwards the shared state root is empty and neither tree base holds anything.
func TestRunTwoProcessesShareStateDir(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	a, b := newWorld(t, worldOpts{agentMode: "gate"}), newWorld(t, worldOpts{})
	for _, w := range []*world{a, b} {
		want := w.expectedIndex()
		w.expectStartCreate()
		w.expectAcquisition()
		w.expectFinish(status.Success, "", run.StatusSuccess, want)
	}
	cmdA, errA := startHelper(t, a, helperConfig{StateDir: state})
	defer func() {
		if cmdA.ProcessState == nil {
			_ = cmdA.Process.Kill()
			_ = cmdA.Wait()
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !exists(filepath.Join(a.out, "started")) {
		if time.Now().After(deadline) {
			t.Fatalf("run A's agent never started; stderr:\n%s", errA.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	liveA := stageEntries(t, state)
	if len(liveA) != 1 {
		t.Fatalf("state root while A runs = %v, want A's one stage", liveA)
	}
	hostA := filepath.Join(a.env["RUNNER_TEMP"], "forgectx-ctx-"+liveA[0]+"-host")

	cmdB, errB := startHelper(t, b, helperConfig{StateDir: state})
	if err := cmdB.Wait(); err != nil {
		t.Fatalf("run B = %v, want exit 0; stderr:\n%s", err, errB.String())
	}
	sc := scavengeLine(t, errB.String())
	if sc["live"] != float64(1) || sc["removed"] != float64(0) {
		t.Errorf("run B's scavenge = %v; want A's stage seen live and left alone", sc)
	}
	if !exists(hostA) {
		t.Error("run B removed run A's live host tree")
	}
	if got := stageEntries(t, state); len(got) != 1 || got[0] != liveA[0] {
		t.Errorf("state root after B = %v, want only A's live stage %s", got, liveA[0])
	}

	must(t, os.WriteFile(filepath.Join(a.out, "release"), nil, 0o644))
	if err := cmdA.Wait(); err != nil {
		t.Fatalf("run A = %v, want exit 0; stderr:\n%s", err, errA.String())
	}
	if !exists(filepath.Join(a.out, "done")) {
		t.Error("run A's agent did not finish")
	}
	if got := stageEntries(t, state); len(got) != 0 {
		t.Errorf("shared state root after both runs = %v, want it empty", got)
	}
	for name, w := range map[string]*world{"A": a, "B": b} {
		ents, err := os.ReadDir(w.env["RUNNER_TEMP"])
		must(t, err)
		for _, e := range ents {
			t.Errorf("run %s left %s in its tree base", name, e.Name())
		}
	}
	assertNothingPlanted(t, a, errA.String())
	assertNothingPlanted(t, b, errB.String())
}

// stageEntries lists the stage ids under a state root.
func stageEntries(t *testing.T, state string) []string {
	t.Helper()
	ents, err := os.ReadDir(state)
	must(t, err)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// scavengeLine is the run's structured scavenge line (counts) from its stderr.
func scavengeLine(t *testing.T, stderr string) map[string]any {
	t.Helper()
	for _, l := range strings.Split(stderr, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["message"] == "forgectx run: abandoned trees scavenged" {
			return m
		}
	}
	t.Fatalf("no scavenge line in:\n%s", stderr)
	return nil
}
