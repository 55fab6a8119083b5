package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/pkg/cirelay"
	"github.com/forgectx/forgectx/test/prescripttest"
)

func requireBash(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
}

// forgectxLines returns the lines forgectx itself printed as errors ("forgectx: …"): the
// script's own output shares stderr (the job log) and is not forgectx's message.
func forgectxLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "forgectx: ") {
			out = append(out, l)
		}
	}
	return out
}

// decisionJSON mirrors the documented decision object (docs/prescript.md).
type decisionJSON struct {
	Skipped bool              `json:"skipped"`
	Reason  string            `json:"reason"`
	Outputs map[string]string `json:"outputs"`
}

// decodeDecision requires stdout to be exactly one JSON object with exactly the three fields.
func decodeDecision(t *testing.T, stdout string) decisionJSON {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	var d decisionJSON
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("stdout is not a decision object: %v\n%q", err, stdout)
	}
	if dec.More() || !strings.HasSuffix(stdout, "}\n") || strings.Count(stdout, "\n") != 1 {
		t.Fatalf("stdout holds more than one JSON object: %q", stdout)
	}
	var raw map[string]json.RawMessage
	_ = json.Unmarshal([]byte(stdout), &raw)
	for _, k := range []string{"skipped", "reason", "outputs"} {
		if _, ok := raw[k]; !ok {
			t.Fatalf("decision lacks %q: %s", k, stdout)
		}
	}
	return d
}

// TestPrescriptSpecRows runs every row of the shared spec table as a real bash script through
// `forgectx prescript`: exit 0 with one JSON decision, or exit 1 with one
// "forgectx: pre-script failed: …" line and nothing on stdout.
func TestPrescriptSpecRows(t *testing.T) {
	requireBash(t)
	for _, c := range prescripttest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			script := prescripttest.WriteScript(t, dir, "pre.sh", c.Script)
			code, stdout, stderr := runCLI(t, prescripttest.Env(c.Env), "", "prescript", "--run-dir", dir, "--", "bash", script)
			switch {
			case c.Protocol != nil || c.Fail != nil:
				if code != exitFailed || stdout != "" {
					t.Fatalf("exit %d, stdout %q; want exit 1 and no decision\n%s", code, stdout, stderr)
				}
				lines := forgectxLines(stderr)
				if len(lines) != 1 {
					t.Fatalf("want one forgectx error line, got %q", lines)
				}
				if c.Protocol != nil {
					if want := "forgectx: pre-script failed: " + c.Protocol.Error(); lines[0] != want {
						t.Fatalf("stderr line %q, want %q", lines[0], want)
					}
					return
				}
				diag, ok := strings.CutPrefix(lines[0], "forgectx: pre-script failed: ")
				if !ok {
					t.Fatalf("stderr line %q", lines[0])
				}
				if c.Fail.Diagnostic != "" && diag != c.Fail.Diagnostic {
					t.Errorf("diagnostic %q, want %q", diag, c.Fail.Diagnostic)
				}
				for _, s := range c.Fail.Contains {
					if !strings.Contains(diag, s) {
						t.Errorf("diagnostic %q lacks %q", diag, s)
					}
				}
				for _, s := range c.Fail.Excludes {
					if strings.Contains(diag, s) {
						t.Errorf("diagnostic %q contains %q", diag, s)
					}
				}
			default:
				if code != exitOK {
					t.Fatalf("exit %d\n%s", code, stderr)
				}
				d := decodeDecision(t, stdout)
				if d.Skipped != c.Skipped {
					t.Errorf("skipped %v, want %v", d.Skipped, c.Skipped)
				}
				if c.ReasonExcludes != nil {
					for _, x := range c.ReasonExcludes {
						if d.Reason == "" || strings.Contains(d.Reason, x) {
							t.Errorf("reason %q contains %q", d.Reason, x)
						}
					}
				} else if d.Reason != c.Reason {
					t.Errorf("reason %q, want %q", d.Reason, c.Reason)
				}
				if !reflect.DeepEqual(d.Outputs, c.WantOutputs()) {
					t.Errorf("outputs %v, want %v", d.Outputs, c.WantOutputs())
				}
			}
			if left, _ := os.ReadDir(dir); len(left) != 1 { // only pre.sh remains
				t.Errorf("output file not removed: %d entries in the run dir", len(left))
			}
		})
	}
}

// The README quick start: the example runs with no arguments, no network and no token.
func TestPrescriptQuickStartExample(t *testing.T) {
	requireBash(t)
	env := prescripttest.Env(nil)
	code, stdout, stderr := runCLI(t, env, "", "prescript", "--", "../../examples/prescript/skip-if-labelled.sh")
	if want := `{"skipped":true,"reason":"the issue is labelled no-agent","outputs":{"skip_if_labelled_label":"no-agent"}}` + "\n"; code != 0 || stdout != want {
		t.Fatalf("exit %d stdout %q, want %q\n%s", code, stdout, want, stderr)
	}
	if !strings.Contains(stderr, "decision: skip: the issue is labelled 'no-agent' (labels from embedded fixture)") {
		t.Errorf("the script's output did not reach the job log (stderr):\n%s", stderr)
	}
	env["ISSUE_LABELS"] = "bug, docs"
	code, stdout, _ = runCLI(t, env, "", "prescript", "--", "../../examples/prescript/skip-if-labelled.sh")
	if want := `{"skipped":false,"reason":"","outputs":{}}` + "\n"; code != 0 || stdout != want {
		t.Fatalf("exit %d stdout %q, want %q", code, stdout, want)
	}
	env["ISSUE_LABELS"] = "bug, no-agent "
	code, stdout, _ = runCLI(t, env, "", "prescript", "--", "../../examples/prescript/skip-if-labelled.sh")
	if code != 0 || !strings.HasPrefix(stdout, `{"skipped":true,`) {
		t.Fatalf("exit %d stdout %q", code, stdout)
	}
}

func TestPrescriptOtherExamples(t *testing.T) {
	requireBash(t)
	code, stdout, _ := runCLI(t, prescripttest.Env(nil), "", "prescript", "--", "../../examples/prescript/neutral-exit-78.sh")
	if want := `{"skipped":true,"reason":"No issues need scoring","outputs":{}}` + "\n"; code != 0 || stdout != want {
		t.Fatalf("exit %d stdout %q", code, stdout)
	}
	code, stdout, stderr := runCLI(t, prescripttest.Env(map[string]string{"ITERATION": "4"}), "", "prescript", "--", "../../examples/prescript/circuit-breaker.sh")
	if lines := forgectxLines(stderr); code != 1 || stdout != "" || len(lines) != 1 ||
		lines[0] != "forgectx: pre-script failed: Fix iteration 4 exceeds bot cap of 3. Escalating to human." {
		t.Fatalf("exit %d stdout %q stderr %q", code, stdout, stderr)
	}
}

// Outputs in the JSON decision are sorted by key (byte order) and not HTML-escaped.
func TestPrescriptDecisionJSONExactBytes(t *testing.T) {
	requireBash(t)
	dir := t.TempDir()
	script := prescripttest.WriteScript(t, dir, "pre.sh", `printf 'zeta=1\nreason=a <b> & "c"\nmy-agent=2\nZ=3\n_u=4\nskipped=true\n' >> "$O"; echo "script stdout"`)
	code, stdout, stderr := runCLI(t, prescripttest.Env(nil), "", "prescript", "--", "bash", script)
	want := `{"skipped":true,"reason":"a <b> & \"c\"","outputs":{"Z":"3","_u":"4","my-agent":"2","zeta":"1"}}` + "\n"
	if code != 0 || stdout != want {
		t.Fatalf("exit %d stdout\n%s\nwant\n%s", code, stdout, want)
	}
	if !strings.Contains(stderr, "script stdout\n") {
		t.Errorf("script stdout not in the job log")
	}
}

func ghRelayEnv(t *testing.T) (map[string]string, string) {
	path := filepath.Join(t.TempDir(), "github_output")
	return prescripttest.Env(map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": path}), path
}

// Relay exact content on skip and proceed, through the CLI.
func TestPrescriptRelayExactBytes(t *testing.T) {
	requireBash(t)
	const d = cirelay.GitHubDelimiter
	for _, c := range []struct{ name, script, want string }{
		{"skip", `printf 'skipped=true\nreason=dup\nmyagent_pr=7\n' >> "$O"`,
			"reason<<" + d + "\ndup\n" + d + "\nskip-reason<<" + d + "\ndup\n" + d + "\nmyagent_pr<<" + d + "\n7\n" + d + "\nskipped<<" + d + "\ntrue\n" + d + "\n"},
		{"skip via exit 78", `echo "nothing to do"; exit 78`,
			"reason<<" + d + "\nnothing to do\n" + d + "\nskip-reason<<" + d + "\nnothing to do\n" + d + "\nskipped<<" + d + "\ntrue\n" + d + "\n"},
		{"proceed", `:`,
			"reason<<" + d + "\n\n" + d + "\nskip-reason<<" + d + "\n\n" + d + "\nskipped<<" + d + "\nfalse\n" + d + "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env, path := ghRelayEnv(t)
			script := prescripttest.WriteScript(t, t.TempDir(), "pre.sh", c.script)
			code, _, stderr := runCLI(t, env, "", "prescript", "--", "bash", script)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			got, _ := os.ReadFile(path)
			if string(got) != c.want {
				t.Fatalf("GITHUB_OUTPUT\n%q\nwant\n%q", got, c.want)
			}
		})
	}
}

// A relay target that cannot be written fails the run, and no decision is printed.
func TestPrescriptRelayUnwritableTargetFailsTheRun(t *testing.T) {
	requireBash(t)
	env := prescripttest.Env(map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": t.TempDir()}) // a directory
	script := prescripttest.WriteScript(t, t.TempDir(), "pre.sh", `echo skipped=true >> "$O"`)
	code, stdout, stderr := runCLI(t, env, "", "prescript", "--", "bash", script)
	lines := forgectxLines(stderr)
	if code != exitFailed || stdout != "" || len(lines) != 1 || !strings.HasPrefix(lines[0], "forgectx: relay decision: append to GITHUB_OUTPUT: ") {
		t.Fatalf("exit %d stdout %q lines %q", code, stdout, lines)
	}
	if !strings.Contains(stderr, "\n::error::relay decision: append to GITHUB_OUTPUT: ") {
		t.Errorf("no error annotation for the failed relay:\n%s", stderr)
	}
	// A full device: the open succeeds and the write fails.
	if _, err := os.Stat("/dev/full"); err == nil {
		env["GITHUB_OUTPUT"] = "/dev/full"
		code, stdout, _ = runCLI(t, env, "", "prescript", "--", "bash", script)
		if code != exitFailed || stdout != "" {
			t.Fatalf("/dev/full: exit %d stdout %q", code, stdout)
		}
	}
}

// A hard failure relays nothing (no decision was reached) and, under GitHub Actions, prints an
// error annotation.
func TestPrescriptHardFailureUnderGitHubActions(t *testing.T) {
	requireBash(t)
	env, path := ghRelayEnv(t)
	script := prescripttest.WriteScript(t, t.TempDir(), "pre.sh", `echo "100% broken: it broke" >&2; exit 1`)
	code, stdout, stderr := runCLI(t, env, "", "prescript", "--", "bash", script)
	if code != exitFailed || stdout != "" {
		t.Fatalf("exit %d stdout %q", code, stdout)
	}
	if !strings.Contains(stderr, "\n::error::pre-script failed: 100%25 broken: it broke\n") {
		t.Errorf("no error annotation:\n%s", stderr)
	}
	if lines := forgectxLines(stderr); len(lines) != 1 || lines[0] != "forgectx: pre-script failed: 100% broken: it broke" {
		t.Errorf("lines %q", lines)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("GITHUB_OUTPUT written on a hard failure")
	}
	// Outside GitHub Actions there is no annotation.
	delete(env, "GITHUB_ACTIONS")
	_, _, stderr = runCLI(t, env, "", "prescript", "--", "bash", script)
	if strings.Contains(stderr, "::error::pre-script failed") {
		t.Errorf("annotation outside GitHub Actions")
	}
}

func TestPrescriptDotenv(t *testing.T) {
	requireBash(t)
	dir := t.TempDir()
	report := filepath.Join(dir, "prescript.env")
	script := prescripttest.WriteScript(t, dir, "pre.sh", `printf 'skipped=true\nreason=dup of !12\nmyagent_mr=12\n' >> "$O"`)
	code, stdout, stderr := runCLI(t, prescripttest.Env(nil), "", "prescript", "--dotenv", report, "--", "bash", script)
	if code != 0 || !strings.HasPrefix(stdout, `{"skipped":true`) {
		t.Fatalf("exit %d stdout %q\n%s", code, stdout, stderr)
	}
	got, _ := os.ReadFile(report)
	if want := "reason=dup of !12\nmyagent_mr=12\nskipped=true\n"; string(got) != want {
		t.Fatalf("dotenv %q, want %q", got, want)
	}
	// A key GitLab cannot take fails the run.
	script = prescripttest.WriteScript(t, dir, "pre2.sh", `echo 'my-agent=1' >> "$O"`)
	code, stdout, stderr = runCLI(t, prescripttest.Env(nil), "", "prescript", "--dotenv", report, "--", "bash", script)
	if lines := forgectxLines(stderr); code != 1 || stdout != "" || len(lines) != 1 || !strings.Contains(lines[0], `dotenv relay refused key "my-agent"`) {
		t.Fatalf("exit %d stdout %q lines %q", code, stdout, lines)
	}
}

func TestPrescriptSecretEnvFlag(t *testing.T) {
	requireBash(t)
	const value = "conn-value-31337-xyzzy"
	script := prescripttest.WriteScript(t, t.TempDir(), "pre.sh", `echo "cannot connect with $DB_DSN" >&2; exit 1`)
	env := prescripttest.Env(map[string]string{"DB_DSN": value})
	// DB_DSN is not secret-named, so only --secret-env makes its value a secret.
	_, _, stderr := runCLI(t, env, "", "prescript", "--", "bash", script)
	if lines := forgectxLines(stderr); len(lines) != 1 || lines[0] != "forgectx: pre-script failed: cannot connect with "+value {
		t.Fatalf("control without --secret-env: lines %q", lines)
	}
	_, _, stderr = runCLI(t, env, "", "prescript", "--secret-env", "DB_DSN", "--", "bash", script)
	lines := forgectxLines(stderr)
	if len(lines) != 1 || strings.Contains(lines[0], value) || !strings.HasPrefix(lines[0], "forgectx: pre-script failed: cannot connect with ") {
		t.Fatalf("lines %q", lines)
	}
}

// --none: the harness has no pre-script; the proceed decision is relayed and printed.
func TestPrescriptNoPrescriptRelayExactBytes(t *testing.T) {
	const d = cirelay.GitHubDelimiter
	env, path := ghRelayEnv(t)
	report := filepath.Join(t.TempDir(), "prescript.env")
	code, stdout, stderr := runCLI(t, env, "", "prescript", "--none", "--dotenv", report)
	if code != 0 || stdout != `{"skipped":false,"reason":"","outputs":{}}`+"\n" {
		t.Fatalf("exit %d stdout %q\n%s", code, stdout, stderr)
	}
	got, _ := os.ReadFile(path)
	if want := "reason<<" + d + "\n\n" + d + "\nskip-reason<<" + d + "\n\n" + d + "\nskipped<<" + d + "\nfalse\n" + d + "\n"; string(got) != want {
		t.Fatalf("GITHUB_OUTPUT\n%q\nwant\n%q", got, want)
	}
	if got, _ := os.ReadFile(report); string(got) != "skipped=false\n" {
		t.Fatalf("dotenv %q", got)
	}
	if code, _, _ := runCLI(t, env, "", "prescript", "--none", "--", "x.sh"); code != exitUsage {
		t.Fatalf("--none with a SCRIPT: exit %d", code)
	}
}

func TestPrescriptUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"prescript"},
		{"prescript", "--"},
		{"prescript", "--timeout", "0s", "--", "x.sh"},
		{"prescript", "--timeout", "soon", "--", "x.sh"},
		{"prescript", "--no-such-flag", "--", "x.sh"},
	} {
		code, stdout, stderr := runCLI(t, nil, "", args...)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, "Run 'forgectx prescript --help'") {
			t.Errorf("%q: exit %d stdout %q stderr %q", args, code, stdout, stderr)
		}
	}
	code, _, stderr := runCLI(t, nil, "", "prescript", "--help")
	if code != 0 || !strings.Contains(stderr, "--dotenv") || !strings.Contains(stderr, "--secret-env") {
		t.Errorf("--help: exit %d\n%s", code, stderr)
	}
}

// A script that cannot be started fails the run with exit 1.
func TestPrescriptMissingScript(t *testing.T) {
	code, stdout, stderr := runCLI(t, prescripttest.Env(nil), "", "prescript", "--", filepath.Join(t.TempDir(), "absent.sh"))
	if lines := forgectxLines(stderr); code != 1 || stdout != "" || len(lines) != 1 || !strings.HasPrefix(lines[0], "forgectx: pre-script failed: prescript: start absent.sh") {
		t.Fatalf("exit %d stdout %q lines %q", code, stdout, lines)
	}
}

// scriptLine marks every line the test scripts print, so that the rest of stderr is what
// forgectx itself wrote (its logs, its error line, its annotation).
const scriptLine = "~~ "

// forgectxOwnLines returns the stderr lines forgectx wrote itself.
func forgectxOwnLines(stderr string) []string {
	var own []string
	for _, l := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		if l != "" && !strings.HasPrefix(l, scriptLine) {
			own = append(own, l)
		}
	}
	return own
}

// Logging standard: forgectx's own log lines carry counts, codes and key names — never a
// script's output, a file value or a token — at every level, in both formats, on every path.
// A chatty pre-script prints a ghp_ token and the value of a *_TOKEN variable on both streams,
// in annotations, in its output file (values and, token-shaped, a key) and in broken lines; at
// --log-level debug none of it reaches a line forgectx wrote. With --log-format json every such
// line that is a log line is one valid JSON object.
func TestPrescriptLogsNeverCarryScriptTextOrSecrets(t *testing.T) {
	requireBash(t)
	tok, lit := prescripttest.GitHubToken, prescripttest.DeployTokenValue
	chatty := `for i in $(seq 1 200); do echo "~~ chatty out $i token ` + tok + ` and $DEPLOY_TOKEN"; echo "~~ chatty err $i $DEPLOY_TOKEN" >&2; done
echo "~~ chatty ::error::~~ chatty annotation ` + tok + `"
`
	for _, c := range []struct{ name, body string }{
		{"skip via file with token values and a token-shaped key", chatty + `printf 'skipped=true\nreason=author chose ` + tok + `\nmyagent_v=` + lit + `\n` + tok + `=1\n' >> "$O"`},
		{"proceed", chatty + `echo "myagent_k=$DEPLOY_TOKEN" >> "$O"`},
		{"exit 78 with stdout reason", chatty + `echo "~~ chatty last ` + tok + `"; exit 78`},
		{"exit 78 with a broken file", chatty + `echo "broken ` + tok + `" >> "$O"; exit 78`},
		{"hard failure", chatty + `echo "~~ chatty ::error::failed with ` + tok + ` $DEPLOY_TOKEN" >&2; exit 1`},
		{"protocol error", chatty + `printf 'reason=ok\nskipped ` + tok + ` $DEPLOY_TOKEN\n' >> "$O"`},
		{"timeout", chatty + `sleep 20`},
	} {
		for _, format := range []string{"json", "text"} {
			t.Run(c.name+"/"+format, func(t *testing.T) {
				t.Parallel()
				env, _ := ghRelayEnv(t)
				env["DEPLOY_TOKEN"] = lit
				script := prescripttest.WriteScript(t, t.TempDir(), "pre.sh", c.body)
				_, _, stderr := runCLI(t, env, "", "--log-format", format, "--log-level", "debug",
					"prescript", "--timeout", "3s", "--", "bash", script)
				// The live copy reaches the job log redacted (docs/hardening.md): the line is
				// there, the token and the registered value are not, anywhere on stderr.
				if !strings.Contains(stderr, scriptLine+"chatty out 200 token [REDACTED:") {
					t.Fatalf("the script's output did not reach the job log:\n%s", stderr)
				}
				for _, secret := range []string{tok, lit} {
					if strings.Contains(stderr, secret) {
						t.Errorf("the job log carries a secret %q", secret)
					}
				}
				own := forgectxOwnLines(stderr)
				logLines := 0
				for _, l := range own {
					for _, secret := range []string{tok, tok[:12], lit} {
						if strings.Contains(l, secret) {
							t.Errorf("forgectx line carries a secret %q: %s", secret, l)
						}
					}
					// The failure line and its annotation carry the redacted diagnostic by
					// design; log lines carry no script text at all.
					if strings.HasPrefix(l, "forgectx: ") || strings.HasPrefix(l, "::error::") {
						continue
					}
					for _, text := range []string{"chatty", "author chose", "broken"} {
						if strings.Contains(l, text) {
							t.Errorf("log line carries script text %q: %s", text, l)
						}
					}
					logLines++
					if format == "json" {
						var m map[string]any
						if err := json.Unmarshal([]byte(l), &m); err != nil || m["level"] == nil || m["message"] == nil {
							t.Errorf("not a JSON log line: %q (%v)", l, err)
						}
					}
				}
				if logLines == 0 {
					t.Errorf("no log line at debug level; the check proved nothing:\n%s", stderr)
				}
			})
		}
	}
}
