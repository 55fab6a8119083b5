//go:build linux

package procgroup

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// A child holding the leader's stdout open does not keep Wait busy: the group is killed when
// the leader exits, so Wait returns long before WaitDelay.
func TestKillWhenLeaderExitsEndsTheGroupPromptly(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	var out bytes.Buffer
	cmd := exec.Command("sh", "-c", "(sleep 60) & echo started")
	cmd.Stdout = &out
	cmd.WaitDelay = 30 * time.Second
	setGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	killWhenLeaderExits(cmd)
	err := cmd.Wait()
	_ = kill(cmd)
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("Wait took %s (err %v): the background child kept the stream open", d, err)
	}
	if !strings.Contains(out.String(), "started") {
		t.Errorf("output %q lost", out.String())
	}
	if cmd.SysProcAttr == nil || !cmd.SysProcAttr.Setpgid {
		t.Error("setGroup did not put the command in its own process group")
	}
}

// Signal on a command that never started is a no-op, not a panic or an error.
func TestSignalBeforeStartIsANoOp(t *testing.T) {
	if err := kill(exec.Command("true")); err != nil {
		t.Fatal(err)
	}
}
