package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/pkg/run"
	"github.com/forgectx/forgectx/pkg/stage"
	"github.com/forgectx/forgectx/pkg/status"
)

// The launched agent is checked with stage.CheckAgentProcess in both seal modes, not only in
// ownership mode: in bind-mount mode an agent running as root (or with CAP_SYS_ADMIN) could
// remount the read-only copy writable. Such an agent is killed at once — the sleeping agent
// neither finishes nor holds the run up — and the run fails with a code-only diagnostic, a
// failure receipt and no tree left. (Ownership mode always starts the agent as the agent UID
// with no groups; its check is the same call.)
func TestRunPrivilegedAgentStoppedInBindMountMode(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the agent inherits forgectx's privileges")
	}
	w := newWorld(t, worldOpts{agentMode: "sleep"})
	want := w.expectedIndex()
	w.expectStartCreate()
	w.expectAcquisition()
	w.expectFinish(status.Failure, "the agent process was not unprivileged and was stopped", run.StatusFailure, want)
	o := w.options()
	o.Immutability, o.AgentUID, o.AgentGID = stage.ModeBindMount, 0, 0 // the agent inherits root
	began := time.Now()
	res, err := runWith(o)
	if err == nil || res == nil || res.Status != run.StatusFailure {
		t.Fatalf("run = %+v, %v; want a failure", res, err)
	}
	if d := time.Since(began); d > 15*time.Second {
		t.Errorf("the run took %s: the privileged agent was not killed at once", d)
	}
	if exists(filepath.Join(w.out, "done")) {
		t.Error("the privileged agent ran to completion")
	}
	if !strings.Contains(w.logBuf.String(), `"mode":"bind-mount"`) || !strings.Contains(w.logBuf.String(), "agent process is not unprivileged") {
		t.Errorf("the refusal is not logged with its mode:\n%s", w.logBuf.String())
	}
	w.assertNoTrees()
}

// In bind-mount mode with an agent UID the agent runs as that UID with no capabilities, and
// passes the check; the copy is a read-only mount it cannot write.
func TestRunBindMountAgentRunsUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	w := newWorld(t, worldOpts{})
	want := w.expectedIndex()
	w.expectStartCreate()
	w.expectAcquisition()
	w.expectFinish(status.Success, "", run.StatusSuccess, want)
	o := w.options()
	if o.Immutability != stage.ModeBindMount || o.AgentUID != agentUID {
		t.Fatalf("test premise: options %v uid %d", o.Immutability, o.AgentUID)
	}
	res, err := runWith(o)
	if err != nil || res.Status != run.StatusSuccess {
		t.Fatalf("run = %+v, %v", res, err)
	}
	if !strings.Contains(w.logBuf.String(), `"mode":"bind-mount"`) {
		t.Fatalf("not a bind-mount run:\n%s", w.logBuf.String())
	}
	if got := strings.TrimSpace(readFile(t, filepath.Join(w.out, "uid"))); got != strconv.Itoa(agentUID) {
		t.Errorf("agent uid = %s, want %d", got, agentUID)
	}
	if got := strings.TrimSpace(readFile(t, filepath.Join(w.out, "ro"))); got != "readonly" {
		t.Errorf("the agent could write its bind-mounted copy (%s)", got)
	}
	w.assertNoTrees()
}
