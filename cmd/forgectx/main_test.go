package main

import (
	"bytes"
	"context"
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
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb, getenv, environ)
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

func TestUsageErrorsExit2WithOneLineHint(t *testing.T) {
	for _, args := range [][]string{
		{"no-such-command"},
		{"version", "--no-such-flag"},
		{"version", "extra"},
		{"--log-format", "xml", "version"},
		{"--log-level", "loud", "version"},
		{},
	} {
		code, _, errOut := runCLI(t, nil, "", args...)
		if code != exitUsage {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
		if len(args) > 0 && !strings.Contains(errOut, "--help") {
			t.Errorf("%q: stderr has no hint: %q", args, errOut)
		}
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
