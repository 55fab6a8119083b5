package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/run"
	"github.com/forgectx/forgectx/internal/snapshot/stage"
	"github.com/forgectx/forgectx/internal/status"
	"github.com/forgectx/forgectx/test/testnotice"
)

// In bind-mount mode an agent running as root could remount the read-only copy writable. As
// root without --agent-uid the agent would inherit UID 0: the configuration is refused before
// anything is posted (exit 2), not after the start comment. (procgroup.CheckProcess still
// checks every launched agent, for capabilities a binary grants back.)
func TestRunPrivilegedAgentRefusedBeforePosting(t *testing.T) {
	if os.Geteuid() != 0 {
		testnotice.Skip(t, "unprivileged-agent tests (non-root)", "needs root: the agent would inherit forgectx's privileges")
	}
	w := newWorld(t, worldOpts{agentMode: "sleep"}) // no expectations: any forge request fails the test
	o := w.options()
	o.Immutability, o.AgentUID, o.AgentGID = stage.ModeBindMount, 0, 0 // the agent would inherit root
	res, err := runWith(o)
	if !run.IsConfigError(err) || res != nil || !strings.Contains(err.Error(), "--agent-uid") || !strings.Contains(err.Error(), "UID 0") {
		t.Fatalf("run = %+v, %v; want a configuration error naming --agent-uid", res, err)
	}
	if got := w.writes(); len(got) != 0 {
		t.Errorf("forge writes %v before the configuration was refused", got)
	}
	if ents, err := os.ReadDir(w.env["RUNNER_TEMP"]); err != nil || len(ents) != 0 {
		t.Errorf("the refused run staged something: %v, %v", ents, err)
	}
}

// In bind-mount mode with an agent UID the agent runs as that UID with no capabilities, and
// passes the check; the copy is a read-only mount it cannot write.
func TestRunBindMountAgentRunsUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		testnotice.Skip(t, "unprivileged-agent tests (non-root)", "needs root to run the agent as another user")
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
