package prescript_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/pkg/prescript"
)

// TestDescribeStartSaysWhy: each way a program fails to start gets its own reason, found by
// actually starting it (the errors are the OS's, not made up).
func TestDescribeStartSaysWhy(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	noInterp := write("no-interp.sh", "#!/nonexistent/bash\necho hi\n", 0o755)
	notExec := write("not-exec.sh", "#!/bin/sh\necho hi\n", 0o644)
	cases := []struct{ argv0, want string }{
		{"forgectx-no-such-agent", "forgectx-no-such-agent was not found on PATH"},
		{filepath.Join(dir, "absent.sh"), "absent.sh does not exist"},
		{noInterp, "its interpreter /nonexistent/bash is missing"},
		{notExec, "not-exec.sh is not executable"},
		{dir, "is a directory"},
	}
	for _, c := range cases {
		err := exec.Command(c.argv0).Start()
		if err == nil {
			t.Fatalf("%s started", c.argv0)
		}
		se := prescript.DescribeStart(c.argv0, "", err)
		if !strings.Contains(se.Reason, c.want) {
			t.Errorf("%s: reason %q, want it to say %q (start error: %v)", c.argv0, se.Reason, c.want, err)
		}
		if !strings.HasPrefix(se.Error(), "start "+filepath.Base(c.argv0)+": ") {
			t.Errorf("%s: Error() = %q", c.argv0, se.Error())
		}
	}
}
