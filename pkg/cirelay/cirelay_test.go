package cirelay

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/forgectx/forgectx/pkg/prescript"
	"github.com/forgectx/forgectx/test/testnotice"
)

func ghEnv(path string) func(string) string {
	return func(k string) string {
		switch k {
		case "GITHUB_ACTIONS":
			return "true"
		case "GITHUB_OUTPUT":
			return path
		}
		return ""
	}
}

const d = GitHubDelimiter

// The relay's exact bytes on every path that reaches the decision ("CI relay").
func TestGitHubRelayExactBytes(t *testing.T) {
	for _, c := range []struct {
		name     string
		decision prescript.Decision
		want     string
	}{
		{"skip: skipped normalised to true, reason re-exported as skip-reason",
			prescript.Decision{Skipped: true, Reason: "an open PR already addresses this issue", Outputs: []prescript.KV{{Key: "myagent_pr", Value: "123"}}, Basis: prescript.BasisFile},
			"reason<<" + d + "\nan open PR already addresses this issue\n" + d + "\n" +
				"skip-reason<<" + d + "\nan open PR already addresses this issue\n" + d + "\n" +
				"myagent_pr<<" + d + "\n123\n" + d + "\n" +
				"skipped<<" + d + "\ntrue\n" + d + "\n"},
		{"proceed: skipped normalised to false",
			prescript.Decision{Basis: prescript.BasisFile},
			"reason<<" + d + "\n\n" + d + "\n" +
				"skip-reason<<" + d + "\n\n" + d + "\n" +
				"skipped<<" + d + "\nfalse\n" + d + "\n"},
		{"no pre-script: skipped=false",
			prescript.NoPrescript(),
			"reason<<" + d + "\n\n" + d + "\n" +
				"skip-reason<<" + d + "\n\n" + d + "\n" +
				"skipped<<" + d + "\nfalse\n" + d + "\n"},
		{"exit 78 with outputs sorted, values with = and # kept",
			prescript.Decision{Skipped: true, Reason: "No issues need scoring", Outputs: []prescript.KV{{Key: "a", Value: "x=y"}, {Key: "b-c", Value: "#1"}}, Basis: prescript.BasisExitNeutral},
			"reason<<" + d + "\nNo issues need scoring\n" + d + "\n" +
				"skip-reason<<" + d + "\nNo issues need scoring\n" + d + "\n" +
				"a<<" + d + "\nx=y\n" + d + "\n" +
				"b-c<<" + d + "\n#1\n" + d + "\n" +
				"skipped<<" + d + "\ntrue\n" + d + "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "github_output")
			if err := os.WriteFile(path, []byte("earlier=step\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := Relay(Options{Getenv: ghEnv(path)}, c.decision)
			if err != nil || !res.GitHub || res.Dotenv {
				t.Fatalf("res %+v err %v", res, err)
			}
			got, _ := os.ReadFile(path)
			if string(got) != "earlier=step\n"+c.want {
				t.Fatalf("GITHUB_OUTPUT =\n%q\nwant\n%q", got, "earlier=step\n"+c.want)
			}
		})
	}
}

func TestRelayNoPrescript(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	if _, err := RelayNoPrescript(Options{Getenv: ghEnv(path)}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if !strings.HasSuffix(string(got), "skipped<<"+d+"\nfalse\n"+d+"\n") {
		t.Fatalf("%q", got)
	}
}

// "When running under GitHub Actions (GITHUB_ACTIONS=true and GITHUB_OUTPUT set)": otherwise
// nothing is written.
func TestGitHubRelayOnlyUnderGitHubActions(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	for name, env := range map[string]map[string]string{
		"GITHUB_ACTIONS unset": {"GITHUB_OUTPUT": path},
		"GITHUB_ACTIONS=false": {"GITHUB_ACTIONS": "false", "GITHUB_OUTPUT": path},
		"GITHUB_ACTIONS=1":     {"GITHUB_ACTIONS": "1", "GITHUB_OUTPUT": path},
		"GITHUB_OUTPUT unset":  {"GITHUB_ACTIONS": "true"},
		"GITHUB_OUTPUT empty":  {"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": ""},
	} {
		res, err := Relay(Options{Getenv: func(k string) string { return env[k] }}, prescript.Decision{Skipped: true})
		if err != nil || res.GitHub {
			t.Errorf("%s: res %+v err %v", name, res, err)
		}
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("relay wrote outside GitHub Actions: %v", err)
	}
}

// "If a relay target exists but writing fails, the run fails."
func TestGitHubRelayWriteFailureFails(t *testing.T) {
	dir := t.TempDir()
	targets := map[string]string{
		"target is a directory":        dir,
		"target's directory is absent": filepath.Join(dir, "missing", "out"),
	}
	for name, path := range targets {
		t.Run(name, func(t *testing.T) {
			_, err := Relay(Options{Getenv: ghEnv(path)}, prescript.Decision{Skipped: true})
			if err == nil || !strings.Contains(err.Error(), "append to GITHUB_OUTPUT") {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

// Values that could smuggle entries are refused before anything is written.
func TestGitHubRelayRefusesSmuggling(t *testing.T) {
	for _, c := range []struct {
		name string
		dec  prescript.Decision
		key  string
	}{
		{"LF in a value", prescript.Decision{Reason: "x\nskipped<<EOF"}, "reason"},
		{"bare CR in a value", prescript.Decision{Outputs: []prescript.KV{{Key: "k", Value: "a\rskipped=true"}}}, "k"},
		{"delimiter as a value", prescript.Decision{Outputs: []prescript.KV{{Key: "k", Value: GitHubDelimiter}}}, "k"},
		{"delimiter inside a value", prescript.Decision{Reason: "see " + GitHubDelimiter}, "reason"},
		{"delimiter as a key", prescript.Decision{Outputs: []prescript.KV{{Key: GitHubDelimiter, Value: "v"}}}, GitHubDelimiter},
		{"heredoc marker in a key", prescript.Decision{Outputs: []prescript.KV{{Key: "k<<X", Value: "v"}}}, "k<<X"},
		{"= in a key", prescript.Decision{Outputs: []prescript.KV{{Key: "k=v", Value: "v"}}}, "k=v"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out")
			_, err := Relay(Options{Getenv: ghEnv(path)}, c.dec)
			var re *RefusedError
			if !errors.As(err, &re) || re.Key != c.key || re.Target != "GITHUB_OUTPUT" {
				t.Fatalf("err = %v", err)
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("something was written before the refusal")
			}
			if strings.Contains(err.Error(), "skipped=true") || strings.Contains(err.Error(), "skipped<<EOF") {
				t.Fatalf("refusal echoes the value: %v", err)
			}
		})
	}
}

// skip-reason is owned by the relay: a script output of that name is not written.
func TestGitHubRelaySkipReasonShadowsScriptOutput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	res, err := Relay(Options{Getenv: ghEnv(path)}, prescript.Decision{Skipped: true, Reason: "real", Outputs: []prescript.KV{{Key: "skip-reason", Value: "forged"}}})
	if err != nil || len(res.Shadowed) != 1 || res.Shadowed[0] != "skip-reason" {
		t.Fatalf("res %+v err %v", res, err)
	}
	got, _ := os.ReadFile(path)
	if strings.Contains(string(got), "forged") || strings.Count(string(got), "skip-reason<<") != 1 {
		t.Fatalf("%q", got)
	}
}

func TestDotenvExactBytes(t *testing.T) {
	for _, c := range []struct {
		name string
		dec  prescript.Decision
		want string
	}{
		{"skip", prescript.Decision{Skipped: true, Reason: "an open PR already addresses this issue", Outputs: []prescript.KV{{Key: "MYAGENT_PR", Value: "123"}, {Key: "myagent_url", Value: "https://x/?a=b"}}},
			"reason=an open PR already addresses this issue\nMYAGENT_PR=123\nmyagent_url=https://x/?a=b\nskipped=true\n"},
		{"proceed: empty values omitted", prescript.Decision{Outputs: []prescript.KV{{Key: "empty", Value: ""}}}, "skipped=false\n"},
		{"no pre-script", prescript.NoPrescript(), "skipped=false\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "prescript.env")
			if err := os.WriteFile(path, []byte("stale=1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := Relay(Options{Getenv: func(string) string { return "" }, DotenvPath: path}, c.dec)
			if err != nil || !res.Dotenv || res.GitHub {
				t.Fatalf("res %+v err %v", res, err)
			}
			got, _ := os.ReadFile(path)
			if string(got) != c.want {
				t.Fatalf("dotenv = %q, want %q", got, c.want)
			}
		})
	}
}

// GitLab's dotenv rules are enforced; a violation fails and writes nothing.
func TestDotenvRulesEnforced(t *testing.T) {
	many := make([]prescript.KV, DefaultDotenvMaxVariables)
	for i := range many {
		many[i] = prescript.KV{Key: "k" + strings.Repeat("x", i), Value: "v"}
	}
	for _, c := range []struct {
		name string
		dec  prescript.Decision
		rule string
	}{
		{"key with a hyphen fails GitLab's key pattern", prescript.Decision{Outputs: []prescript.KV{{Key: "my-key", Value: "v"}}}, "key does not match"},
		{"key longer than 255 bytes", prescript.Decision{Outputs: []prescript.KV{{Key: strings.Repeat("k", 256), Value: "v"}}}, "longer than 255"},
		{"multi-line value", prescript.Decision{Reason: "a\nb"}, "single line"},
		{"value with CR", prescript.Decision{Reason: "a\rb"}, "single line"},
		{"value not UTF-8", prescript.Decision{Reason: "\xff"}, "UTF-8"},
		{"value with surrounding whitespace", prescript.Decision{Reason: " r"}, "whitespace"},
		{"more variables than the limit", prescript.Decision{Outputs: many}, "variables exceed"}, // +skipped = 21
		{"file larger than 5 KiB", prescript.Decision{Reason: strings.Repeat("r", DefaultDotenvMaxBytes)}, "bytes, over"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "prescript.env")
			_, err := Relay(Options{DotenvPath: path, Getenv: func(string) string { return "" }}, c.dec)
			var re *RefusedError
			if !errors.As(err, &re) || re.Target != "dotenv" || !strings.Contains(re.Rule, c.rule) {
				t.Fatalf("err = %v, want rule containing %q", err, c.rule)
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Fatal("a refused report was written")
			}
		})
	}
}

func TestDotenvLimitsConfigurable(t *testing.T) {
	b, err := RenderDotenv([]prescript.KV{{Key: "a", Value: "1"}, {Key: "b", Value: "2"}}, DotenvLimits{MaxVariables: 2, MaxBytes: 8})
	if err != nil || string(b) != "a=1\nb=2\n" {
		t.Fatalf("%q %v", b, err)
	}
	if _, err := RenderDotenv([]prescript.KV{{Key: "a", Value: "1"}, {Key: "b", Value: "2"}}, DotenvLimits{MaxBytes: 7}); err == nil {
		t.Fatal("8 bytes over a 7-byte limit accepted")
	}
	if _, err := RenderDotenv([]prescript.KV{{Key: "a", Value: "1"}, {Key: "a", Value: "2"}}, DotenvLimits{}); err == nil {
		t.Fatal("duplicate key accepted")
	}
}

func TestDotenvWriteFailureFails(t *testing.T) {
	dir := t.TempDir()
	for name, path := range map[string]string{
		"target is a directory":        dir,
		"target's directory is absent": filepath.Join(dir, "missing", "x.env"),
	} {
		if _, err := Relay(Options{DotenvPath: path, Getenv: func(string) string { return "" }}, prescript.Decision{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("temporary files left behind: %d", len(left))
	}
}

// Both targets are validated before either is written: a dotenv refusal leaves
// $GITHUB_OUTPUT untouched.
func TestRelayValidatesBothTargetsFirst(t *testing.T) {
	dir := t.TempDir()
	gh := filepath.Join(dir, "github_output")
	_, err := Relay(Options{Getenv: ghEnv(gh), DotenvPath: filepath.Join(dir, "x.env")},
		prescript.Decision{Outputs: []prescript.KV{{Key: "has-hyphen", Value: "v"}}})
	if err == nil {
		t.Fatal("no error")
	}
	if _, err := os.Stat(gh); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("GITHUB_OUTPUT written despite the dotenv refusal")
	}
}

// mkNullNode makes the test's own character device 1:3 (never a system device), or skips the
// test with a notice when not root.
func mkNullNode(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		testnotice.Skip(t, "device-node cases (non-root)", "not root: cannot mknod a character device")
	}
	if err := syscall.Mknod(path, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		testnotice.Skip(t, "device-node cases (non-root)", fmt.Sprintf("mknod not permitted: %v", err))
	}
}

// Regression: --dotenv naming a device node used to rename a temporary file over it
// (as root, `--dotenv /dev/null` destroyed /dev/null). The relay now fails, names the
// target and leaves the node alone; the same for $GITHUB_OUTPUT.
func TestRelayNeverReplacesADeviceNode(t *testing.T) {
	dir := t.TempDir()
	dev := filepath.Join(dir, "T")
	mkNullNode(t, dev)
	for name, opts := range map[string]Options{
		"dotenv":        {DotenvPath: dev, Getenv: func(string) string { return "" }},
		"GITHUB_OUTPUT": {Getenv: ghEnv(dev)},
	} {
		_, err := Relay(opts, prescript.Decision{})
		if err == nil || !strings.Contains(err.Error(), dev+": is a character device") {
			t.Errorf("%s: err = %v, want a refusal naming %s", name, err, dev)
		}
		fi, lerr := os.Lstat(dev)
		if lerr != nil || fi.Mode()&os.ModeCharDevice == 0 {
			t.Fatalf("%s: the device node was replaced (%v, %v)", name, fi.Mode(), lerr)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d entries in the directory, want only the node", len(ents))
	}
}

// Regression: a relay error names the target the operator gave, not a temporary file.
func TestDotenvErrorNamesTheTarget(t *testing.T) {
	target := filepath.Join(t.TempDir(), "nonexistent", "prescript.env")
	_, err := Relay(Options{DotenvPath: target, Getenv: func(string) string { return "" }}, prescript.Decision{})
	if err == nil || !strings.Contains(err.Error(), target+": its directory") || strings.Contains(err.Error(), ".forgectx-") {
		t.Fatalf("err = %v, want it to name %s and no temporary file", err, target)
	}
}
