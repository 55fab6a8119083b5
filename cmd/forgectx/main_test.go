package main

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"
)

// runCLI runs the CLI in-process with the given environment and returns the exit code and the
// two streams. Tests of every command use it.
func runCLI(t *testing.T, envMap map[string]string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	getenv := func(k string) string { return envMap[k] }
	environ := func() []string {
		var kv []string
		for k, v := range envMap {
			kv = append(kv, k+"="+v)
		}
		return kv
	}
	code := run(context.Background(), asRootAgent(args), strings.NewReader(stdin), &out, &errb, getenv, environ)
	return code, out.String(), errb.String()
}

func TestHelpListsEveryCommandWithOneLine(t *testing.T) {
	code, out, _ := runCLI(t, nil, "", "--help")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for name, c := range commands {
		if c.Summary == "" || strings.Contains(c.Summary, "\n") {
			t.Errorf("command %s: summary must be one non-empty line", name)
		}
		if !strings.Contains(out, "  "+name+" ") {
			t.Errorf("--help does not list %s:\n%s", name, out)
		}
	}
}

func TestVersionPrintsVersion(t *testing.T) {
	code, out, _ := runCLI(t, nil, "", "version")
	if code != exitOK || !strings.HasPrefix(out, "forgectx ") {
		t.Fatalf("exit %d, out %q", code, out)
	}
}

// A usage error exits 2 and prints exactly two lines on stderr — what failed, then the one-line
// hint — and nothing on stdout: no flag list, no command list.
func TestUsageErrorsExit2WithOneLineHint(t *testing.T) {
	for _, args := range [][]string{
		{"no-such-command"},
		{"version", "--no-such-flag"},
		{"version", "extra"},
		{"--log-format", "xml", "version"},
		{"--log-level", "loud", "version"},
		{"--log-level", "5", "version"},
		{"--log-level", "", "version"},
		{"--no-such-global", "version"},
		{"help", "no-such-command"},
		{"help", "version", "extra"},
		{"prescript", "--timeout"},
		{"distill", "--max-text", "many"},
	} {
		code, out, errOut := runCLI(t, nil, "", args...)
		if code != exitUsage {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
		lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
		if out != "" || len(lines) != 2 || !strings.HasPrefix(lines[0], "forgectx") ||
			!strings.HasPrefix(lines[1], "Run 'forgectx ") || !strings.HasSuffix(lines[1], " --help' for usage.") {
			t.Errorf("%q: stdout %q, stderr %q; want one error line and the hint", args, out, errOut)
		}
	}
}

// No command at all is a usage error too: the command list goes to stderr, stdout stays empty.
func TestNoCommandListsCommandsOnStderrAndExits2(t *testing.T) {
	code, out, errOut := runCLI(t, nil, "")
	if code != exitUsage || out != "" || !strings.Contains(errOut, "Commands:") || !strings.Contains(errOut, "  prescript ") {
		t.Fatalf("exit %d stdout %q stderr %q", code, out, errOut)
	}
}

func TestHelpCommandPrintsThatCommandsUsage(t *testing.T) {
	code, out, errOut := runCLI(t, nil, "", "help", "prescript")
	if code != exitOK || out != "" || !strings.Contains(errOut, "Usage: forgectx prescript") {
		t.Fatalf("exit %d stdout %q stderr %q", code, out, errOut)
	}
	code, out, _ = runCLI(t, nil, "", "help")
	if code != exitOK || !strings.Contains(out, "Commands:") {
		t.Fatalf("help: exit %d stdout %q", code, out)
	}
}

func TestCommandHelpPrintsUsageOnce(t *testing.T) {
	for name := range commands {
		code, _, errOut := runCLI(t, nil, "", name, "--help")
		if code != exitOK {
			t.Errorf("%s --help: exit %d", name, code)
		}
		if n := strings.Count(errOut, "Usage: forgectx "+name); n != 1 {
			t.Errorf("%s --help printed the usage %d times", name, n)
		}
	}
}

// asRootAgent gives a `run` that names no agent identity an unprivileged one when the tests
// run as root: as root, run refuses (exit 2, before posting) an agent that would inherit UID 0.
func asRootAgent(args []string) []string {
	if os.Geteuid() != 0 || len(args) == 0 || args[0] != "run" || slices.Contains(args, "--agent-uid") {
		return args
	}
	return append(append([]string{}, args...), "--agent-uid", "65534", "--agent-gid", "65534")
}
