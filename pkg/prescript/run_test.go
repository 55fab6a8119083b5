package prescript_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/pkg/prescript"
	"github.com/forgectx/forgectx/test/prescripttest"
)

func requireBash(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
}

func outputsMap(kvs []prescript.KV) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

// TestSpecRows runs every row of the shared spec table as a real bash script through Run.
func TestSpecRows(t *testing.T) {
	requireBash(t)
	for _, c := range prescripttest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			script := prescripttest.WriteScript(t, dir, "pre.sh", c.Script)
			runDir := filepath.Join(dir, "run")
			if err := os.Mkdir(runDir, 0o700); err != nil {
				t.Fatal(err)
			}
			var live bytes.Buffer
			d, err := prescript.Run(context.Background(), prescript.Options{
				RunDir: runDir, Command: prescripttest.Command(script),
				Env:    prescripttest.Environ(prescripttest.Env(c.Env)),
				Stdout: &live, Stderr: &live, Timeout: time.Minute,
			})
			checkOutcome(t, c, d, err)
			// The output file is removed on every path.
			if left, _ := os.ReadDir(runDir); len(left) != 0 {
				t.Errorf("run dir not cleaned up: %d entries left", len(left))
			}
		})
	}
}

func checkOutcome(t *testing.T, c prescripttest.Case, d prescript.Decision, err error) {
	t.Helper()
	switch {
	case c.Protocol != nil:
		var pe *prescript.ProtocolError
		if !errors.As(err, &pe) {
			t.Fatalf("want *ProtocolError %v, got decision %+v, err %v", c.Protocol, d, err)
		}
		if pe.Line != c.Protocol.Line || pe.Rule != c.Protocol.Rule {
			t.Fatalf("got line %d rule %q, want line %d rule %q", pe.Line, pe.Rule, c.Protocol.Line, c.Protocol.Rule)
		}
	case c.Fail != nil:
		var hf *prescript.HardFailure
		if !errors.As(err, &hf) {
			t.Fatalf("want *HardFailure, got decision %+v, err %v", d, err)
		}
		if hf.ExitCode != c.Fail.ExitCode {
			t.Errorf("exit code %d, want %d", hf.ExitCode, c.Fail.ExitCode)
		}
		checkDiagnostic(t, hf.Diagnostic, c.Fail)
	default:
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if d.Skipped != c.Skipped {
			t.Errorf("skipped %v, want %v", d.Skipped, c.Skipped)
		}
		checkReason(t, d.Reason, c)
		if got := outputsMap(d.Outputs); !reflect.DeepEqual(got, c.WantOutputs()) {
			t.Errorf("outputs %v, want %v", got, c.WantOutputs())
		}
	}
}

func checkReason(t *testing.T, reason string, c prescripttest.Case) {
	t.Helper()
	if c.ReasonExcludes != nil {
		if reason == "" {
			t.Errorf("reason is empty")
		}
		for _, x := range c.ReasonExcludes {
			if strings.Contains(reason, x) {
				t.Errorf("reason %q contains %q", reason, x)
			}
		}
		return
	}
	if reason != c.Reason {
		t.Errorf("reason %q, want %q", reason, c.Reason)
	}
}

func checkDiagnostic(t *testing.T, diag string, f *prescripttest.Failure) {
	t.Helper()
	if f.Diagnostic != "" && diag != f.Diagnostic {
		t.Errorf("diagnostic %q, want %q", diag, f.Diagnostic)
	}
	for _, s := range f.Contains {
		if !strings.Contains(diag, s) {
			t.Errorf("diagnostic %q does not contain %q", diag, s)
		}
	}
	for _, s := range f.Excludes {
		if strings.Contains(diag, s) {
			t.Errorf("diagnostic %q contains %q", diag, s)
		}
	}
	if len(diag) > prescript.MaxTextBytes || strings.ContainsAny(diag, "\r\n") {
		t.Errorf("diagnostic is not one line of at most %d bytes (%d bytes)", prescript.MaxTextBytes, len(diag))
	}
}

// runScript runs body under Run with defaults suitable for unit tests.
func runScript(t *testing.T, body string, mod func(*prescript.Options)) (prescript.Decision, string, error) {
	t.Helper()
	requireBash(t)
	dir := t.TempDir()
	opts := prescript.Options{
		RunDir:  dir,
		Command: prescripttest.Command(prescripttest.WriteScript(t, t.TempDir(), "pre.sh", body)),
		Env:     prescripttest.Environ(prescripttest.Env(nil)),
		Timeout: time.Minute,
	}
	if mod != nil {
		mod(&opts)
	}
	d, err := prescript.Run(context.Background(), opts)
	return d, dir, err
}

// Protocol: "creates an empty file inside the run directory and exports its absolute path".
func TestPrepareEmptyFileInRunDirMode0600AbsolutePath(t *testing.T) {
	runDir := t.TempDir()
	rel, err := filepath.Rel(mustWd(t), runDir)
	if err != nil {
		t.Fatal(err)
	}
	d, _, err := runScript(t, `
case "$FULLSEND_PRESCRIPT_OUTPUT" in /*) ;; *) echo "not absolute" >&2; exit 1;; esac
[ "$(dirname "$FULLSEND_PRESCRIPT_OUTPUT")" = "$WANT_DIR" ] || { echo "wrong dir" >&2; exit 1; }
[ -f "$O" ] && [ ! -s "$O" ] || { echo "not an empty file" >&2; exit 1; }
[ "$(stat -c %a "$O")" = 600 ] || { echo "mode $(stat -c %a "$O")" >&2; exit 1; }
case "$(basename "$O")" in prescript-*.out) ;; *) echo "name" >&2; exit 1;; esac
echo skipped=true >> "$O"`, func(o *prescript.Options) {
		o.RunDir = rel // a relative run dir still exports an absolute path
		o.Env = append(o.Env, "WANT_DIR="+runDir, prescript.EnvOutput+"=/stale/value/from/the/parent")
	})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Skipped || d.Basis != prescript.BasisFile {
		t.Fatalf("decision %+v", d)
	}
}

func mustWd(t *testing.T) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

func TestOutputFileRemovedOnEveryPath(t *testing.T) {
	for name, body := range map[string]string{
		"skip":           `echo skipped=true >> "$O"`,
		"proceed":        `:`,
		"exit 78":        `exit 78`,
		"hard failure":   `exit 1`,
		"protocol error": `echo bad >> "$O"`,
		"timeout":        `sleep 30`,
	} {
		t.Run(name, func(t *testing.T) {
			_, dir, _ := runScript(t, body, func(o *prescript.Options) { o.Timeout = 500 * time.Millisecond })
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("%d entries left in the run dir", len(left))
			}
		})
	}
}

func TestRunDirMustExist(t *testing.T) {
	_, _, err := runScript(t, `:`, func(o *prescript.Options) { o.RunDir = filepath.Join(t.TempDir(), "missing") })
	if err == nil || !strings.Contains(err.Error(), "create output file") {
		t.Fatalf("err = %v", err)
	}
}

func TestMissingScriptIsAnErrorNotADecision(t *testing.T) {
	_, _, err := runScript(t, `:`, func(o *prescript.Options) { o.Command = []string{filepath.Join(t.TempDir(), "nope.sh")} })
	var hf *prescript.HardFailure
	if err == nil || errors.As(err, &hf) || !strings.Contains(err.Error(), "start nope.sh") {
		t.Fatalf("err = %v", err)
	}
}

// The script's stdout and stderr reach the job log live, byte for byte.
func TestStreamsReachTheJobLog(t *testing.T) {
	var out, errb bytes.Buffer
	_, _, err := runScript(t, `printf 'to stdout\n'; printf 'to stderr\n' >&2; printf 'no newline'`, func(o *prescript.Options) {
		o.Stdout, o.Stderr = &out, &errb
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != "to stdout\nno newline" || errb.String() != "to stderr\n" {
		t.Fatalf("stdout %q, stderr %q", out.String(), errb.String())
	}
}

// A chatty script: 32 MiB of output still yields the right last line, and nothing keeps it.
func TestChattyScriptStreamsWithoutBuffering(t *testing.T) {
	var n countingWriter
	_, _, err := runScript(t, `yes 'chatter chatter chatter' | head -c 33554432; echo; echo "::error::the real reason"; yes tail | head -n 1000; exit 1`, func(o *prescript.Options) {
		o.Stdout, o.Stderr = &n, &n
	})
	var hf *prescript.HardFailure
	if !errors.As(err, &hf) || hf.Diagnostic != "the real reason" {
		t.Fatalf("err = %v", err)
	}
	if n < 32<<20 {
		t.Fatalf("job log got %d bytes", n)
	}
}

type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

// A job log that fails must not break the script or the decision.
func TestFailingJobLogDoesNotBreakTheScript(t *testing.T) {
	d, _, err := runScript(t, `echo hello; echo skipped=true >> "$O"`, func(o *prescript.Options) { o.Stdout = failingWriter{} })
	if err != nil || !d.Skipped {
		t.Fatalf("decision %+v, err %v", d, err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("log closed") }

// A script killed by a signal is a hard failure with ExitCode -1 and the signal as status.
func TestKilledBySignalIsAHardFailure(t *testing.T) {
	_, _, err := runScript(t, `kill -TERM $$`, nil)
	var hf *prescript.HardFailure
	if !errors.As(err, &hf) || hf.ExitCode != -1 || hf.Status != "signal: terminated" || hf.Diagnostic != "signal: terminated and printed nothing" || hf.FromOutput {
		t.Fatalf("err = %#v", err)
	}
}

func TestTimeoutIsAHardFailure(t *testing.T) {
	start := time.Now()
	_, _, err := runScript(t, `echo "waiting for the API"; sleep 30`, func(o *prescript.Options) { o.Timeout = 300 * time.Millisecond })
	var hf *prescript.HardFailure
	if !errors.As(err, &hf) || !hf.TimedOut || hf.Diagnostic != "timed out after 300ms; waiting for the API" {
		t.Fatalf("err = %#v", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatalf("took %s", time.Since(start))
	}
}

// A background child holding the script's stdout open does not hang the gate.
func TestBackgroundChildDoesNotHangTheGate(t *testing.T) {
	start := time.Now()
	d, _, err := runScript(t, `sleep 30 & echo skipped=true >> "$O"`, func(o *prescript.Options) { o.WaitDelay = 200 * time.Millisecond })
	if err != nil || !d.Skipped {
		t.Fatalf("decision %+v, err %v", d, err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatalf("took %s", time.Since(start))
	}
}

// Version skew, "New script, old CLI": without FULLSEND_PRESCRIPT_OUTPUT the guarded script
// succeeds and writes nothing (the agent runs anyway); the unguarded one fails.
func TestVersionSkewNewScriptOldCLI(t *testing.T) {
	requireBash(t)
	dir := t.TempDir()
	guarded := prescripttest.WriteScript(t, dir, "guarded.sh", prescripttest.GuardedScript)
	cmd := exec.Command("bash", guarded)
	cmd.Env = prescripttest.Environ(prescripttest.Env(nil))
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil || len(out) != 0 {
		t.Fatalf("guarded script under an old CLI: err %v, output %q", err, out)
	}
	unguarded := prescripttest.WriteScript(t, dir, "unguarded.sh", `echo skipped=true >> "${FULLSEND_PRESCRIPT_OUTPUT:-}"`)
	cmd = exec.Command("bash", unguarded)
	cmd.Env = prescripttest.Environ(prescripttest.Env(nil))
	if err := cmd.Run(); err == nil {
		t.Fatal("unguarded script under an old CLI should fail (>> to an empty path)")
	}
}

// Version skew, "Old script, new CLI": never writes → empty file → proceed.
func TestVersionSkewOldScriptNewCLI(t *testing.T) {
	d, _, err := runScript(t, `echo "legacy pre-script: all good"`, nil)
	if err != nil || d.Skipped || d.Basis != prescript.BasisFile || d.Reason != "" || len(d.Outputs) != 0 {
		t.Fatalf("decision %+v, err %v", d, err)
	}
}

// Error messages name the line and the rule, never echo a value.
func TestProtocolErrorNeverEchoesAValue(t *testing.T) {
	const secret = "hunter2-value-never-printed"
	for _, body := range []string{
		`echo "skipped ` + secret + `" >> "$O"`,
		`echo "SKIPPED=` + secret + `" >> "$O"`,
		`echo "` + secret + `.x=1" >> "$O"`,
		`echo "skipped=` + secret + `" >> "$O"`,
		`printf 'reason=` + secret + `\r\n' >> "$O"`,
		`echo "` + secret + `<<EOF" >> "$O"`,
	} {
		_, _, err := runScript(t, body, nil)
		var pe *prescript.ProtocolError
		if !errors.As(err, &pe) || pe.Line != 1 {
			t.Fatalf("%s: err = %v", body, err)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error echoes the value: %v", err)
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("%s line 1: %s", prescript.EnvOutput, pe.Rule)) {
			t.Errorf("error does not name line and rule: %v", err)
		}
	}
}

// Redaction also uses names given in SecretEnvNames, not only *_TOKEN.
func TestSecretEnvNamesRedacted(t *testing.T) {
	const value = "custom-secret-4242-abcd"
	_, _, err := runScript(t, `echo "db password is $DB_PASS" >&2; exit 1`, func(o *prescript.Options) {
		o.Env = append(o.Env, "DB_PASS="+value)
		o.SecretEnvNames = []string{"DB_PASS"}
	})
	var hf *prescript.HardFailure
	if !errors.As(err, &hf) || strings.Contains(hf.Diagnostic, value) || !strings.HasPrefix(hf.Diagnostic, "db password is ") {
		t.Fatalf("err = %v", err)
	}
	if len(hf.Redactions) == 0 {
		t.Errorf("no redaction findings reported")
	}
	// Control: DB_PASS is not secret-named, so without SecretEnvNames its value stays.
	_, _, err = runScript(t, `echo "db password is $DB_PASS" >&2; exit 1`, func(o *prescript.Options) {
		o.Env = append(o.Env, "DB_PASS="+value)
	})
	if !errors.As(err, &hf) || hf.Diagnostic != "db password is "+value {
		t.Fatalf("control: err = %v", err)
	}
}

func TestNoPrescriptProceeds(t *testing.T) {
	d := prescript.NoPrescript()
	if d.Skipped || d.Basis != prescript.BasisNoPrescript || d.Reason != "" || d.Outputs != nil {
		t.Fatalf("%+v", d)
	}
}
