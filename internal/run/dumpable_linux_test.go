//go:build linux

package run

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/forgectx/forgectx/test/testnotice"
)

// TestHardenProcessHidesEnvironFromSameUser: after HardenProcess the process is not dumpable,
// so a process of the same (non-root) user cannot read its /proc/<pid>/environ, where the
// forge token lives. Run in a child re-exec'd as an unprivileged user so the check means
// something when the suite runs as root.
func TestHardenProcessHidesEnvironFromSameUser(t *testing.T) {
	if os.Getenv("FORGECTX_DUMPABLE_CHILD") == "1" {
		if err := HardenProcess(); err != nil {
			os.Exit(3)
		}
		if d, err := processDumpable(); err != nil || d {
			os.Exit(4)
		}
		// A same-user reader (cat runs as our uid) must be refused.
		out, err := exec.Command("cat", "/proc/"+itoa(os.Getpid())+"/environ").Output()
		if err == nil && strings.Contains(string(out), "FORGECTX_SECRET_PROBE") {
			os.Exit(5)
		}
		os.Exit(0)
	}
	if os.Getuid() != 0 {
		testnotice.Skip(t, "non-dumpable test (non-root)", "needs root to start the child as an unprivileged user")
	}
	// The test binary sits in a 0700 build directory; the unprivileged child needs a copy it
	// can execute.
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	exe := dir + "/run.test"
	if err := os.WriteFile(exe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestHardenProcessHidesEnvironFromSameUser$")
	cmd.Dir = dir
	cmd.Env = []string{"FORGECTX_DUMPABLE_CHILD=1", "FORGECTX_SECRET_PROBE=s3cr3t-probe-value", "PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("child exit %d (3: prctl failed, 4: still dumpable, 5: environ readable by the same user): %s", ee.ExitCode(), out)
		}
		t.Skipf("cannot start the unprivileged child here: %v", err)
	}
}

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	for {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(b[n:])
		}
	}
}
