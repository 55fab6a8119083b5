package e2e

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/run"
	"github.com/forgectx/forgectx/internal/status"
	"github.com/forgectx/forgectx/test/httpfake"
)

// panicOn returns a getenv that panics the n-th time key is read (fault injection through the
// run's own environment reader) and otherwise answers from w.env.
func (w *world) panicOn(key string, n int) func(string) string {
	var mu sync.Mutex
	seen := 0
	return func(k string) string {
		if k == key {
			mu.Lock()
			seen++
			hit := seen == n
			mu.Unlock()
			if hit {
				panic("injected fault reading " + key + ": " + token)
			}
		}
		return w.env[k]
	}
}

// A panic inside a lifecycle phase is an internal failure, not a crash: the status comment
// becomes ❌ naming the phase, a failure receipt over the consumed index is posted, forgectx
// exits 1, and no host tree, sandbox copy, state entry or mount survives. The panic value
// (which here carries the token) reaches no log.
func TestRunPanicInAPhaseStillFinishesAndCleansUp(t *testing.T) {
	cases := []struct {
		name, key string
		n         int
		phase     string
	}{
		// The pre-flight reads $GITHUB_OUTPUT first (to check it); the relay's read is the
		// second: the host tree and the stage state exist.
		{"relay", "GITHUB_OUTPUT", 2, "relay"},
		// Forge detection reads GITLAB_CI once (no --forge); the event distillation reads it
		// next, after the read-only copy was sealed: the sandbox copy exists too.
		{"agent", "GITLAB_CI", 2, "agent"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, worldOpts{})
			want := w.expectedIndex()
			w.expectStartCreate()
			w.expectAcquisition()
			w.expectFinish(status.Failure, "forgectx failed internally during the "+tc.phase+" phase", run.StatusFailure, want)
			o := w.options()
			o.Getenv = w.panicOn(tc.key, tc.n)
			res, err := runWith(o)
			if err == nil || res == nil || res.Status != run.StatusFailure || res.ExitCode() != run.ExitFailed {
				t.Fatalf("run = %+v, %v; want a failed run", res, err)
			}
			if res.AgentRan || exists(filepath.Join(w.out, "env")) {
				t.Error("the agent ran after an internal failure")
			}
			if out := readFile(t, w.env["GITHUB_OUTPUT"]); tc.phase == "relay" && out != runOutputs("failure", "") {
				t.Errorf("GITHUB_OUTPUT = %q after a relay that never completed (only the run's status may be there)", out)
			}
			if !strings.Contains(w.logBuf.String(), `"phase":"`+tc.phase+`"`) || !strings.Contains(w.logBuf.String(), "internal error") {
				t.Errorf("the internal error is not logged with its phase:\n%s", w.logBuf.String())
			}
			w.assertNoTrees()
			w.assertLogHygiene()
		})
	}
}

// A panic while finishing (here: the receipt's clock) still leaves the status comment final
// and removes every tree; the run, whose receipt could not be posted, fails.
func TestRunPanicWhilePostingReceiptStillCleansUp(t *testing.T) {
	w := newWorld(t, worldOpts{})
	want := w.expectedIndex()
	w.expectStartCreate()
	w.expectAcquisition()
	ok := renderContext(t, status.Success, "", w.contexts[want])
	failed := renderContext(t, status.Failure, "the run receipt could not be posted", w.contexts[want])
	path := fmt.Sprintf("/repos/octo-org/Hello-World/issues/comments/%d", statusID)
	w.fake.ExpectBody("PATCH", path, bodyJSON(t, ok), httpfake200(w, ok))
	w.fake.ExpectBody("PATCH", path, bodyJSON(t, failed), httpfake200(w, failed))
	o := w.options()
	calls := 0
	o.Now = func() time.Time {
		calls++
		if calls == 2 {
			panic("injected clock fault")
		}
		return clock
	}
	res, err := runWith(o)
	if err == nil || res.Status != run.StatusFailure || res.ReceiptPosted || !res.AgentRan {
		t.Fatalf("run = %+v, %v; want a failed run after the agent, without a receipt", res, err)
	}
	w.assertNoTrees()
	w.assertLogHygiene()
}

// assertNoMounts checks that no mount point lies under the tree base (a bind mount of the
// agent's copy must not survive the run).
func (w *world) assertNoMounts() {
	w.t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return // not Linux: no bind mounts are made
	}
	defer f.Close()
	base := w.env["RUNNER_TEMP"]
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && (fields[4] == base || strings.HasPrefix(fields[4], base+"/")) {
			w.t.Errorf("cleanup: mount %s survived the run", fields[4])
		}
	}
}

// A receipt the forge refuses (a 500: never retried, the comment may exist) turns a success
// into a failure: the status comment, already ✅, is corrected to ❌ and forgectx exits 1.
func TestRunReceiptRefusedCorrectsTheStatus(t *testing.T) {
	w := newWorld(t, worldOpts{})
	want := w.expectedIndex()
	w.expectStartCreate()
	w.expectAcquisition()
	ok := renderContext(t, status.Success, "", w.contexts[want])
	failed := renderContext(t, status.Failure, "the run receipt could not be posted", w.contexts[want])
	path := fmt.Sprintf("/repos/octo-org/Hello-World/issues/comments/%d", statusID)
	w.fake.ExpectBody("PATCH", path, bodyJSON(t, ok), httpfake200(w, ok))
	w.fake.ExpectBody("POST", w.commentsPath(), bodyJSON(t, receiptBody(t, run.StatusSuccess, want)), httpfake.ServerError())
	w.fake.ExpectBody("PATCH", path, bodyJSON(t, failed), httpfake200(w, failed))
	res, err := w.run()
	if err == nil || res.Status != run.StatusFailure || res.ExitCode() != run.ExitFailed || res.ReceiptPosted || !res.StatusPosted {
		t.Fatalf("run = %+v, %v", res, err)
	}
	if got := w.writes(); strings.Join(got, ",") != "POST,PATCH,POST,PATCH" {
		t.Errorf("comment writes = %v, want start, ✅, receipt, ❌", got)
	}
	w.assertNoTrees()
}
