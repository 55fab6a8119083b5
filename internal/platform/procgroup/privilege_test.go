package procgroup_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/platform/procgroup"
)

func TestCheckAgentProcessStatus(t *testing.T) {
	ok := "Name:\tagent\nUid:\t65534\t65534\t65534\t65534\nCapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t000001ffffffffff\nCapAmb:\t0000000000000000\n"
	cases := []struct {
		name, status string
		ok           bool
	}{
		{"unprivileged", ok, true},
		{"root uid", strings.Replace(ok, "Uid:\t65534\t65534\t65534\t65534", "Uid:\t65534\t0\t65534\t65534", 1), false},
		{"CAP_DAC_OVERRIDE effective", strings.Replace(ok, "CapEff:\t0000000000000000", "CapEff:\t0000000000000002", 1), false},
		{"CAP_FOWNER permitted", strings.Replace(ok, "CapPrm:\t0000000000000000", "CapPrm:\t0000000000000008", 1), false},
		{"CAP_SYS_ADMIN ambient", strings.Replace(ok, "CapAmb:\t0000000000000000", "CapAmb:\t0000000000200000", 1), false},
		{"CAP_NET_BIND_SERVICE only", strings.Replace(ok, "CapEff:\t0000000000000000", "CapEff:\t0000000000000400", 1), true},
		{"missing lines", "Name:\tagent\n", false},
	}
	for _, tc := range cases {
		err := procgroup.CheckStatus(1, tc.status)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if os.Geteuid() == 0 {
		if err := procgroup.CheckProcess(os.Getpid()); err == nil {
			t.Error("this root test process must fail the agent check")
		}
	}
}

func TestCheckAgentExecutable(t *testing.T) {
	p := filepath.Join(t.TempDir(), "agent")
	os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755)
	if err := procgroup.CheckExecutable(p); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, 0o755|os.ModeSetuid)
	if err := procgroup.CheckExecutable(p); err == nil {
		t.Fatal("a set-user-ID agent binary must be refused")
	}
}
