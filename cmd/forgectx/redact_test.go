package main

import (
	"bytes"
	"context"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// invocations lists, per registered command, every command line that takes its own flags
// (subcommands included). TestNoTokenEchoedByAnyFlag fails on a command missing here, so a new
// command is planted too.
var invocations = map[string][][]string{
	"demo":           {{"demo"}},
	"distill":        {{"distill"}},
	"filter":         {{"filter"}},
	"mcp":            {{"mcp"}},
	"prescript":      {{"prescript"}},
	"prompt":         {{"prompt"}},
	"review-context": {{"review-context", "policy", "validate"}, {"review-context", "acquire"}, {"review-context", "run"}},
	"rework":         {{"rework", "input-gate"}},
	"run":            {{"run"}},
	"snapshot":       {{"snapshot"}},
	"stage":          {{"stage", "create"}, {"stage", "verify-copy"}, {"stage", "cleanup"}, {"stage", "scavenge"}},
	"status":         {{"status", "reconcile"}},
	"verify":         {{"verify"}},
	"version":        {{"version"}},
}

// plantedSecret is the value of a secret-looking variable of the test environment: the
// redaction knows it by its literal value, not by its shape.
const plantedSecret = "plain-deploy-secret-4711-xyzzy"

// tokenShapes are values that must never appear on stdout or stderr, whatever flag carries them.
var tokenShapes = []string{
	"ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
	"glpat-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm",
	"github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTU",
	plantedSecret,
}

var flagLine = regexp.MustCompile(`(?m)^\s+-([a-z][a-z0-9-]*)`)

// flagsOf returns the flags `forgectx PREFIX --help` lists.
func flagsOf(t *testing.T, prefix []string) []string {
	t.Helper()
	var out, errb bytes.Buffer
	run(context.Background(), append(append([]string(nil), prefix...), "--help"), strings.NewReader(""), &out, &errb, func(string) string { return "" }, func() []string { return nil })
	var names []string
	for _, m := range flagLine.FindAllStringSubmatch(errb.String()+out.String(), -1) {
		names = append(names, m[1])
	}
	sort.Strings(names)
	return names
}

// TestNoTokenEchoedByAnyFlag plants each token shape as the value of every flag of every
// command (and as a stray argument) and requires that stderr never carries it: flags that
// name a variable refuse a value without echoing it, and every error line and log event
// passes the redaction.
func TestNoTokenEchoedByAnyFlag(t *testing.T) {
	for name := range commands {
		if _, ok := invocations[name]; !ok {
			t.Errorf("command %s has no entry in invocations: its flags are not planted", name)
		}
	}
	t.Chdir(t.TempDir()) // a planted --out or --report lands here
	envMap := map[string]string{"DEPLOY_TOKEN": plantedSecret}
	getenv := func(k string) string { return envMap[k] }
	environ := func() []string { return []string{"DEPLOY_TOKEN=" + plantedSecret} }
	planted := 0
	for _, prefixes := range invocations {
		for _, prefix := range prefixes {
			flags := flagsOf(t, prefix)
			if len(flags) == 0 && prefix[0] != "version" && prefix[0] != "review-context" {
				t.Errorf("%v --help lists no flags", prefix)
			}
			for _, tok := range tokenShapes {
				lines := [][]string{append(append([]string(nil), prefix...), tok)}
				for _, f := range flags {
					if f == "help" || f == "h" {
						continue
					}
					lines = append(lines, append(append([]string(nil), prefix...), "--"+f+"="+tok), append(append([]string(nil), prefix...), "--"+f, tok))
				}
				for _, args := range lines {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					var out, errb bytes.Buffer
					code := run(ctx, args, strings.NewReader(""), &out, &errb, getenv, environ)
					cancel()
					planted++
					// stderr is where errors and logs go; stdout is the command's own
					// output (a tree path the operator chose, an excerpt) and may name it.
					if s := errb.String(); strings.Contains(s, tok) || strings.Contains(s, tok[:16]) {
						t.Errorf("forgectx %s: exit %d, the token is echoed:\n%s", strings.Join(args, " "), code, s)
					}
				}
			}
		}
	}
	if planted < 400 {
		t.Errorf("only %d command lines planted", planted)
	}
}

// TestEnvNameFlagsRefuseValuesWithoutEchoingThem: --token-env and --secret-env take a
// variable's name; anything else is a usage error (exit 2) that names the flag and the rule.
func TestEnvNameFlagsRefuseValuesWithoutEchoingThem(t *testing.T) {
	for _, tc := range []struct {
		args []string
		rule string
	}{
		{[]string{"snapshot", "--token-env", tokenShapes[0]}, "--token-env: the value looks like a credential"},
		{[]string{"run", "--token-env", "my secret value"}, "--token-env: must name an environment variable"},
		{[]string{"status", "reconcile", "--token-env", tokenShapes[1]}, "--token-env: must name an environment variable"},
		{[]string{"filter", "--secret-env", "OK_NAME", "--secret-env", "bad-name"}, "--secret-env: must name an environment variable"},
		{[]string{"prescript", "--secret-env", "1ABC", "--", "true"}, "--secret-env: must name an environment variable"},
		{[]string{"snapshot", "--secret-env", strings.Repeat("A", 129)}, "--secret-env: must name an environment variable"},
	} {
		code, out, errOut := runCLI(t, nil, "", tc.args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, tc.rule) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, out, errOut, tc.rule)
		}
		if strings.Contains(errOut, tc.args[len(tc.args)-1]) && tc.args[len(tc.args)-1] != "true" {
			t.Errorf("%v: the refused value is echoed: %q", tc.args, errOut)
		}
	}
}

// TestErrorLinesEscapeControlCharacters: an unknown flag's name, a path or any value quoted in
// an error reaches the terminal with its control characters escaped.
func TestErrorLinesEscapeControlCharacters(t *testing.T) {
	for _, args := range [][]string{
		{"version", "--x\x1b[31mred"},
		{"snapshot", "--profile", "/nonexistent/\x1b]0;title\x07", "--from-acquisition", "-", "--category", "observation", "--out", "x"},
		{"--log-level", "\x1b[2J", "version"},
	} {
		code, _, errOut := runCLI(t, nil, "", args...)
		if code != exitUsage || strings.ContainsAny(errOut, "\x1b\x07") || !strings.Contains(errOut, `\x1b`) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and escaped control characters", args, code, errOut)
		}
	}
}

// TestLogEventsAreRedacted: a log event passes the same redaction as the error line.
func TestLogEventsAreRedacted(t *testing.T) {
	var b bytes.Buffer
	rw := redactingWriter{w: &b, r: newRedactor(func() []string { return []string{"DEPLOY_TOKEN=" + plantedSecret} })}
	_, _ = rw.Write([]byte("event path=/x/" + tokenShapes[0] + " v=" + plantedSecret + "\n"))
	if strings.Contains(b.String(), tokenShapes[0]) || strings.Contains(b.String(), plantedSecret) || !strings.Contains(b.String(), "[REDACTED:") {
		t.Fatalf("log line not redacted: %q", b.String())
	}
}
