package ship

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
)

// actionRunner executes action.yml's composite steps as a GitHub runner does: each `run:` is
// written to a file and run with `bash --noprofile --norc -eo pipefail FILE` in the workspace;
// `${{ }}` expressions in `env:` are evaluated against the inputs (with their defaults), the
// github context and earlier steps' outputs; each step gets its own $GITHUB_OUTPUT file, parsed
// afterwards in both of GitHub's forms (key=value and key<<DELIMITER); after a failing step only
// `if: always()` steps run, and the action has failed (at the first failing step); each step's
// outcome is `steps.<id>.outcome` (success, failure, or skipped for a step that did not run).
// Expressions other than plain context references, and any other `if:`, fail the test, which
// keeps action.yml within what this harness can prove.
type actionRunner struct {
	t        *testing.T
	a        actionFile
	inputs   map[string]string
	github   map[string]string
	env      map[string]string // the job's environment
	temp     string            // $RUNNER_TEMP
	work     string            // $GITHUB_WORKSPACE
	steps    map[string]map[string]string
	outcome  map[string]string // steps.<id>.outcome
	log      strings.Builder
	failedAt string
	exitCode int
}

var expr = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

func (r *actionRunner) eval(s string) string {
	return expr.ReplaceAllStringFunc(s, func(m string) string {
		ref := expr.FindStringSubmatch(m)[1]
		parts := strings.Split(ref, ".")
		switch {
		case len(parts) == 2 && parts[0] == "inputs":
			if v, ok := r.inputs[parts[1]]; ok {
				return v
			}
			in, ok := r.a.Inputs[parts[1]]
			if !ok {
				r.t.Fatalf("action.yml references undeclared input %q", parts[1])
			}
			if in.Default == nil {
				return ""
			}
			return r.eval(*in.Default)
		case len(parts) == 2 && parts[0] == "github":
			v, ok := r.github[parts[1]]
			if !ok {
				r.t.Fatalf("action.yml references github.%s, which this harness does not provide", parts[1])
			}
			return v
		case len(parts) == 4 && parts[0] == "steps" && parts[2] == "outputs":
			return r.steps[parts[1]][parts[3]]
		case len(parts) == 3 && parts[0] == "steps" && parts[2] == "outcome":
			if _, ok := r.outcome[parts[1]]; !ok {
				r.t.Fatalf("action.yml reads steps.%s.outcome before that step", parts[1])
			}
			return r.outcome[parts[1]]
		}
		r.t.Fatalf("action.yml uses expression %q; only context references are supported", ref)
		return ""
	})
}

// parseOutputFile reads a $GITHUB_OUTPUT file in both of GitHub's forms.
func parseOutputFile(t testing.TB, p string) map[string]string {
	t.Helper()
	out := map[string]string{}
	f, err := os.Open(p)
	must(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if k, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(k, "=") {
			var val []string
			closed := false
			for sc.Scan() {
				if sc.Text() == delim {
					closed = true
					break
				}
				val = append(val, sc.Text())
			}
			if !closed {
				t.Fatalf("$GITHUB_OUTPUT: %s<<%s is never closed", k, delim)
			}
			out[k] = strings.Join(val, "\n")
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("$GITHUB_OUTPUT: line %q is neither key=value nor key<<DELIMITER", line)
		}
		out[k] = v
	}
	must(t, sc.Err())
	return out
}

// run executes the steps and returns the action's outputs.
func (r *actionRunner) run() map[string]string {
	r.t.Helper()
	r.steps = map[string]map[string]string{}
	r.outcome = map[string]string{}
	for i, s := range r.a.Runs.Steps {
		if s.Uses != "" || (s.If != "" && s.If != "always()") {
			r.t.Fatalf("step %d: uses, and if other than always(), are not supported by this harness", i)
		}
		if r.failedAt != "" && s.If != "always()" {
			r.outcome[s.ID] = "skipped"
			continue
		}
		dir := filepath.Join(r.temp, fmt.Sprintf("_step%d", i))
		must(r.t, os.MkdirAll(dir, 0o700))
		script := filepath.Join(dir, "script.sh")
		must(r.t, os.WriteFile(script, []byte(s.Run), 0o600))
		outFile := filepath.Join(dir, "output")
		must(r.t, os.WriteFile(outFile, nil, 0o600))
		env := map[string]string{}
		for k, v := range r.env {
			env[k] = v
		}
		env["GITHUB_OUTPUT"] = outFile
		for _, k := range sortedKeys(s.Env) {
			env[k] = r.eval(s.Env[k])
		}
		var envList []string
		for _, k := range sortedKeys(env) {
			envList = append(envList, k+"="+env[k])
		}
		out, code := runCmd(r.t, 5*time.Minute, r.work, envList, "bash", "--noprofile", "--norc", "-eo", "pipefail", script)
		fmt.Fprintf(&r.log, "== step %s (exit %d)\n%s\n", s.ID, code, out)
		r.steps[s.ID] = parseOutputFile(r.t, outFile)
		r.outcome[s.ID] = "success"
		if code != 0 {
			r.outcome[s.ID] = "failure"
			if r.failedAt == "" {
				r.failedAt, r.exitCode = s.ID, code
			}
		}
	}
	outputs := map[string]string{}
	for _, name := range sortedKeys(r.a.Outputs) {
		outputs[name] = r.eval(r.a.Outputs[name].Value)
	}
	return outputs
}

const actionToken = "ghs_shipActionTokenValue0123456789abcdefAB"

// newActionRunner prepares a runner: workspace with a harness, RUNNER_TEMP, the job's env.
func newActionRunner(t *testing.T, forgeURL, harness string, inputs map[string]string) *actionRunner {
	t.Helper()
	dir := t.TempDir()
	r := &actionRunner{t: t, a: loadAction(t), inputs: inputs, temp: filepath.Join(dir, "runner-temp"), work: filepath.Join(dir, "workspace")}
	must(t, os.MkdirAll(filepath.Join(r.work, ".forgectx"), 0o755))
	must(t, os.MkdirAll(r.temp, 0o755)) // forgectx's stage base: the agent must search it
	must(t, os.WriteFile(filepath.Join(r.work, ".forgectx", "harness.yml"), []byte(harness), 0o644))
	summary := filepath.Join(dir, "step-summary")
	must(t, os.WriteFile(summary, nil, 0o600))
	r.github = map[string]string{"token": actionToken, "action_path": root, "action_ref": "main", "repository": "octo-org/Hello-World"}
	r.env = map[string]string{
		"PATH": os.Getenv("PATH"), "HOME": filepath.Join(dir, "home"), "CI": "true", "GITHUB_ACTIONS": "true",
		"GITHUB_ACTION_PATH": root, "GITHUB_ACTION_REF": "main", "GITHUB_WORKSPACE": r.work,
		"GITHUB_REPOSITORY": "octo-org/Hello-World", "GITHUB_SERVER_URL": "https://github.com",
		"GITHUB_API_URL": "https://api.github.invalid", "GITHUB_RUN_ID": "4242", "GITHUB_RUN_ATTEMPT": "1",
		"GITHUB_SHA": "6dcb09b5b57875f334f61aebed695e2e4193db5e", "GITHUB_STEP_SUMMARY": summary,
		"GITHUB_EVENT_NAME": "workflow_dispatch", "RUNNER_TEMP": r.temp, "RUNNER_OS": runnerOS(), "RUNNER_ARCH": runnerArch(),
		"AGENT_OUT": filepath.Join(dir, "agent-out"),
	}
	for _, kv := range goEnv() {
		k, v, _ := strings.Cut(kv, "=")
		r.env[k] = v
	}
	must(t, os.MkdirAll(r.env["HOME"], 0o700))
	must(t, os.MkdirAll(r.env["AGENT_OUT"], 0o700))
	// The agent sources this probe: it lists the agent's ancestors (command names), from its
	// parent up to this test process, which started the step's shell.
	r.env["AGENT_PROBE"] = filepath.Join(dir, "ancestors.sh")
	r.env["SHIP_TEST_PID"] = fmt.Sprint(os.Getpid())
	must(t, os.WriteFile(r.env["AGENT_PROBE"], []byte(ancestorsProbe), 0o644))
	reachableByAgent(t, dir, r.env["AGENT_OUT"])
	if os.Geteuid() == 0 {
		// As root, name an unprivileged agent (forgectx refuses a root one), as a root
		// container job must.
		r.inputs["agent-uid"], r.inputs["agent-gid"] = fmt.Sprint(unprivilegedUID), fmt.Sprint(unprivilegedUID)
	}
	return r
}

// ancestorsProbe prints one command name per ancestor of the sourcing shell, nearest first,
// stopping below $SHIP_TEST_PID; "unreached" when the walk hits PID 1 (or /proc is missing)
// without meeting it.
const ancestorsProbe = `p=$PPID
while [ "$p" != "$SHIP_TEST_PID" ]; do
  if [ "$p" -le 1 ] || [ ! -r "/proc/$p/status" ]; then echo unreached; break; fi
  cat "/proc/$p/comm"
  p=$(awk '/^PPid:/ { print $2 }' "/proc/$p/status")
done
`

// shipHarness is a harness whose agent records that it ran and what it was given.
const shipHarness = `version: 1
agent:
  name: triage
  category: observation
  command: ["bash", "-c", "test -f \"$FORGECTX_CONTEXT_DIR/index.json\" && env > \"$AGENT_OUT/env\" && . \"$AGENT_PROBE\" > \"$AGENT_OUT/ancestors\" && ${AGENT_TOOL:-true} && sleep ${AGENT_SLEEP:-0} && exit ${AGENT_EXIT:-0}"]
  env: [PATH, AGENT_OUT, AGENT_EXIT, AGENT_SLEEP, AGENT_PROBE, AGENT_TOOL, SHIP_TEST_PID]
  timeout: 60s
{{PRE}}profiles:
  work_item:
    included_sources: [agent_runs, comments, entity]
    record_selection: newest
    check_log_selection: none
    bounds:
      max_records_per_source: 200
      max_source_bytes: 4096
      max_record_bytes: 65536
      max_log_bytes: 262144
      max_metadata_string_bytes: 512
      max_labels: 50
bots:
  - id: BOT_kgDOAn-Zag
    login: github-actions[bot]
    bot_role: triage
`

func harnessWith(pre string) string {
	if pre == "" {
		return strings.Replace(shipHarness, "{{PRE}}", "", 1)
	}
	return strings.Replace(shipHarness, "{{PRE}}", "pre_script:\n  command: [\"bash\", \"-c\", "+pre+"]\n  env: [PATH]\n  timeout: 30s\n", 1)
}

// snapshotDir lists a directory tree (names and sizes) to prove a run left it untouched.
func snapshotDir(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	must(t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, fmt.Sprintf("%s %d %v", rel, fi.Size(), fi.Mode()))
		return nil
	}))
	sort.Strings(out)
	return out
}

func TestCompositeActionFromSource(t *testing.T) {
	t.Parallel()                                  // subprocess-bound: runs beside the other slow ship tests
	finished := []string{"POST", "PATCH", "POST"} // start, completion, receipt
	cases := []struct {
		name         string
		pre          string
		agentExit    string
		agentSleep   string
		agentTimeout string // replaces the harness's agent timeout (60s)
		harness      string // the harness input, when not the workspace's .forgectx/harness.yml
		wantCode     int    // the run step's exit code; 0: no step fails
		wantOut      map[string]string
		wantWrites   []string
		agentRan     bool
		sudo         bool   // run with sudo: "true" through a recording sudo shim
		forgejo      bool   // a Forgejo Actions job: defaults from its environment
		forge        string // the forge input (a Forgejo job leaves it to forgectx's detection)
	}{
		{name: "proceed: the agent runs, status success", wantOut: map[string]string{"skipped": "false", "skip-reason": "", "status": "success"},
			wantWrites: finished, agentRan: true},
		{name: "skip via the pre-script output file: status skipped, reason relayed",
			pre:     `"echo skipped=true >> \"$FULLSEND_PRESCRIPT_OUTPUT\"; echo reason=the issue is labelled no-agent >> \"$FULLSEND_PRESCRIPT_OUTPUT\""`,
			wantOut: map[string]string{"skipped": "true", "skip-reason": "the issue is labelled no-agent", "status": "skipped"}, wantWrites: finished},
		{name: "agent failure: the step fails, status failure", agentExit: "3", wantCode: 1,
			wantOut: map[string]string{"skipped": "false", "skip-reason": "", "status": "failure"}, wantWrites: finished, agentRan: true},
		// The run step fails with exit 1 as for any failure: only forgectx's own status output
		// can say timed_out, so this proves the action re-exports it instead of deriving it.
		{name: "agent time-out: status timed_out is forgectx's, not derived from the exit code", agentSleep: "30", agentTimeout: "1s", wantCode: 1,
			wantOut: map[string]string{"skipped": "false", "skip-reason": "", "status": "timed_out"}, wantWrites: finished, agentRan: true},
		// A configuration error stops forgectx before its run begins: it posts and writes
		// nothing, so status falls back to the run step's outcome.
		{name: "configuration error: forgectx writes no outputs, status falls back to failure", harness: ".forgectx/missing.yml", wantCode: 2,
			wantOut: map[string]string{"skipped": "", "skip-reason": "", "status": "failure"}, wantWrites: []string{}},
		{name: "Forgejo Actions: forgectx detects Forgejo and takes repository, number and API from the job environment", forgejo: true,
			wantOut: map[string]string{"skipped": "false", "skip-reason": "", "status": "success"}, wantWrites: finished, agentRan: true},
		{name: "Forgejo Actions with the explicit forge: forgejo", forgejo: true, forge: "forgejo",
			wantOut: map[string]string{"skipped": "false", "skip-reason": "", "status": "success"}, wantWrites: finished, agentRan: true},
		{name: "sudo: true execs sudo -n -E forgectx with the runner user as the agent", sudo: true,
			wantOut: map[string]string{"skipped": "false", "skip-reason": "", "status": "success"}, wantWrites: finished, agentRan: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var f *fakeForge
			var r *actionRunner
			h := harnessWith(c.pre)
			if c.agentTimeout != "" {
				h = strings.Replace(h, "  timeout: 60s\n", "  timeout: "+c.agentTimeout+"\n", 1)
			}
			if c.forgejo {
				// Only what Forgejo's runner provides: the token's identity is the only input
				// besides the harness (and, in one case, the explicit forge).
				f = newForgejoFake(t)
				r = newActionRunner(t, f.URL(), h, map[string]string{
					"harness": ".forgectx/harness.yml", "version": shipVersion, "download-url": serveShipRelease(t), "comment-author-id": "-2",
				})
				if c.forge != "" {
					r.inputs["forge"] = c.forge
				}
				event := filepath.Join(r.temp, "event.json")
				must(t, os.WriteFile(event, []byte(`{"action":"opened","issue":{"number":7,"pull_request":null}}`), 0o600))
				for k, v := range map[string]string{"FORGEJO_ACTIONS": "true", "GITHUB_SERVER_URL": f.URL(), "GITHUB_REPOSITORY": "Acme/Widgets",
					"GITHUB_EVENT_NAME": "issues", "GITHUB_EVENT_PATH": event, "GITHUB_RUN_ID": "77", "GITHUB_API_URL": f.URL() + "/api/v1"} {
					r.env[k] = v
				}
			} else {
				f = newFakeForge(t)
				r = newActionRunner(t, f.URL(), h, map[string]string{
					"harness": ".forgectx/harness.yml", "version": shipVersion, "download-url": serveShipRelease(t), "repo": "octo-org/Hello-World",
					"number": fmt.Sprint(f.sc.Number), "kind": "work_item", "api-url": f.URL(),
				})
			}
			r.env["AGENT_EXIT"], r.env["AGENT_SLEEP"] = c.agentExit, c.agentSleep
			if c.harness != "" {
				r.inputs["harness"] = c.harness
				f.expectNoRequests()
			}
			sudoLog := filepath.Join(r.temp, "sudo.log")
			runnerUID, runnerGID := fmt.Sprint(os.Getuid()), fmt.Sprint(os.Getgid())
			if c.sudo {
				runnerUID, runnerGID = useSudoShim(t, r, sudoLog)
				// The agent's tool lives only on the runner's PATH (as setup-node or the tool
				// cache put it there): the agent finds it only if that PATH survived sudo.
				tools := filepath.Join(t.TempDir(), "hostedtoolcache")
				must(t, os.MkdirAll(tools, 0o755))
				must(t, os.WriteFile(filepath.Join(tools, "ship-agent-tool"), []byte("#!/bin/sh\ntouch \"$AGENT_OUT/tool-ran\"\n"), 0o755))
				reachableByAgent(t, tools, tools)
				r.env["PATH"] = tools + string(os.PathListSeparator) + r.env["PATH"]
				r.env["AGENT_TOOL"] = "ship-agent-tool"
			}
			before := snapshotDir(t, r.work)
			out := r.run()
			t.Log(r.log.String())
			if c.wantCode != 0 {
				if r.failedAt != "run" || r.exitCode != c.wantCode {
					t.Fatalf("failed at step %q with exit %d, want the run step with exit %d", r.failedAt, r.exitCode, c.wantCode)
				}
			} else if r.failedAt != "" {
				t.Fatalf("step %q failed with exit %d", r.failedAt, r.exitCode)
			}
			// context-dir is the copy the agent was given (checked below); the rest exactly.
			ctxDir, hasCtxDir := out["context-dir"]
			delete(out, "context-dir")
			if !hasCtxDir {
				t.Error("the action has no context-dir output")
			}
			if !reflect.DeepEqual(out, c.wantOut) {
				t.Errorf("outputs = %v, want %v", out, c.wantOut)
			}
			if got := methods(f.Writes()); !reflect.DeepEqual(got, c.wantWrites) {
				t.Errorf("comment writes = %v, want %v", got, c.wantWrites)
			}
			ws := f.Writes()
			// Start status, completion status, then the receipt (docs/run.md, "Receipts": it is
			// posted right after the completion status).
			if c.forgejo && len(ws) == 3 && !strings.Contains(ws[2].Body, "fja-77-1") {
				t.Errorf("the receipt has no Forgejo Actions receipt id fja-77-1:\n%s", ws[2].Body)
			}
			if len(ws) == 3 && !strings.Contains(ws[2].Body, "\"status\": \""+c.wantOut["status"]+"\"") && !strings.Contains(ws[2].Body, `"status":"`+c.wantOut["status"]+`"`) {
				t.Errorf("the receipt does not record status %s:\n%s", c.wantOut["status"], ws[2].Body)
			}
			envFile := filepath.Join(r.env["AGENT_OUT"], "env")
			_, err := os.Stat(envFile)
			if ran := err == nil; ran != c.agentRan {
				t.Fatalf("agent ran = %v, want %v", ran, c.agentRan)
			}
			if c.agentRan {
				env := readFile(t, envFile)
				if strings.Contains(env, actionToken) || strings.Contains(env, "FORGECTX_TOKEN") {
					t.Error("the agent's environment carries the forge token")
				}
				// context-dir is the FORGECTX_CONTEXT_DIR the agent was given, already removed.
				if want := envValue(env, "FORGECTX_CONTEXT_DIR"); want == "" || ctxDir != want {
					t.Errorf("output context-dir = %q, want the agent's FORGECTX_CONTEXT_DIR %q", ctxDir, want)
				}
				if _, err := os.Lstat(ctxDir); !os.IsNotExist(err) {
					t.Errorf("context-dir %q still exists after the step (err %v)", ctxDir, err)
				}
				// Nothing here is the agent's to rename (a root-owned $RUNNER_TEMP under a sticky
				// /tmp), so its copy stays in $RUNNER_TEMP (docs/ship.md, "GitHub: the composite action").
				if rt := r.temp + string(filepath.Separator); os.Geteuid() == 0 && !strings.HasPrefix(ctxDir, rt) {
					t.Errorf("context-dir %q is not under $RUNNER_TEMP %s", ctxDir, r.temp)
				}
				// The step's shell ran as the agent's user with FORGECTX_TOKEN in its
				// environment; it must have exec'd forgectx (through sudo or not), so
				// forgectx is the agent's only ancestor below the runner (this test).
				if runtime.GOOS == "linux" {
					if got := strings.Fields(readFile(t, filepath.Join(r.env["AGENT_OUT"], "ancestors"))); !reflect.DeepEqual(got, []string{"forgectx"}) {
						t.Errorf("the agent's ancestors below the runner are %q, want only forgectx: the step's shell (holding the token) is still alive", got)
					}
				}
			}
			if !c.agentRan && ctxDir != "" {
				t.Errorf("output context-dir = %q, want empty: no agent was launched", ctxDir)
			}
			if strings.Contains(r.log.String(), actionToken) {
				t.Error("the job log carries the forge token")
			}
			// The binary came from the action's own checkout, into $RUNNER_TEMP.
			if bin := r.steps["install"]["bin"]; bin != filepath.Join(r.temp, "forgectx-bin", "forgectx") {
				t.Errorf("install output bin = %q, want it under $RUNNER_TEMP", bin)
			}
			if !strings.Contains(r.log.String(), "forgectx "+shipVersion) {
				t.Errorf("the install step did not report the installed release's version %s", shipVersion)
			}
			if c.sudo {
				args := strings.Split(strings.TrimSpace(readFile(t, sudoLog)), "\n")
				uid, gid := runnerUID, runnerGID
				// env PATH=…: sudo's secure_path would otherwise drop the runner's tool
				// directories, and the agent (or its tools) would not be found.
				if len(args) < 6 || args[2] != "env" || args[3] != "PATH="+r.env["PATH"] || args[4] != r.steps["install"]["bin"] || args[5] != "run" ||
					!strings.Contains(strings.Join(args, " "), "--agent-uid "+uid+" --agent-gid "+gid) {
					t.Errorf("sudo was called with %q, want -n -E env PATH=<the runner's PATH> BIN run ... --agent-uid %s --agent-gid %s", args, uid, gid)
				}
				if _, err := os.Stat(filepath.Join(r.env["AGENT_OUT"], "tool-ran")); err != nil {
					t.Errorf("the agent did not find its tool on the runner's PATH after sudo: %v", err)
				}
				if ppid := strings.TrimSpace(readFile(t, sudoLog+".ppid")); ppid != fmt.Sprint(os.Getpid()) {
					t.Errorf("sudo's parent is PID %s, not the runner (%d): the step's shell did not exec sudo and keeps the token", ppid, os.Getpid())
				}
			}
			if after := snapshotDir(t, r.work); !reflect.DeepEqual(before, after) {
				t.Errorf("the action changed the workspace:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// TestCompositeActionRefusesBadVersion: the install step fails closed, naming the rule, before
// any download, on a version that is neither a release nor source, and on an empty version when
// the action's ref is not a release tag (a pinned commit SHA says nothing about the binary).
func TestCompositeActionRefusesBadVersion(t *testing.T) {
	cases := []struct{ version, ref, want string }{
		{"main", "v1.0.0", "--version: must be vX.Y.Z, latest or source"},
		{"", "de0fac2e4500dabe0009e67214ff5f5447ce83dd", "set version (vX.Y.Z, latest or source): the action's ref 'de0fac2e4500dabe0009e67214ff5f5447ce83dd' is not a release tag"},
	}
	for _, c := range cases {
		r := newActionRunner(t, "http://127.0.0.1:9", harnessWith(""), map[string]string{"harness": ".forgectx/harness.yml", "version": c.version})
		r.env["GITHUB_ACTION_REF"] = c.ref
		out := r.run()
		// The status step still runs (if: always()) and reports the failure.
		if out["status"] != "failure" || r.outcome["run"] != "skipped" {
			t.Errorf("version %q: status = %q with the run step %q, want failure with it skipped", c.version, out["status"], r.outcome["run"])
		}
		if r.failedAt != "install" {
			t.Fatalf("version %q ref %q: failed at %q, want install", c.version, c.ref, r.failedAt)
		}
		if !strings.Contains(r.log.String(), c.want) {
			t.Errorf("version %q ref %q: log lacks %q:\n%s", c.version, c.ref, c.want, r.log.String())
		}
		if _, err := os.Stat(filepath.Join(r.temp, "forgectx-bin", "forgectx")); err == nil {
			t.Errorf("version %q: a binary was installed", c.version)
		}
	}
}

// TestActionRunStepExecsForgectx: structurally, the only step given the token ends by exec'ing
// forgectx (through sudo or not), so no shell of the runner user — the agent's user under sudo —
// outlives the start of forgectx holding FORGECTX_TOKEN in its /proc/<pid>/environ.
func TestActionRunStepExecsForgectx(t *testing.T) {
	a := loadAction(t)
	for _, s := range a.Runs.Steps {
		_, hasToken := s.Env["FORGECTX_TOKEN"]
		if s.ID != "run" {
			if hasToken {
				t.Errorf("step %q is given FORGECTX_TOKEN; only the run step may be", s.ID)
			}
			continue
		}
		if !hasToken {
			t.Error("the run step is not given FORGECTX_TOKEN")
		}
		var last string
		for _, line := range strings.Split(s.Run, "\n") {
			if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
				last = l
			}
		}
		if last != `exec "${runner[@]}" "$FORGECTX_BIN" "${args[@]}"` {
			t.Errorf("the run step's last command is %q, want it to exec forgectx", last)
		}
		if n := strings.Count(s.Run, "$FORGECTX_BIN"); n != 1 {
			t.Errorf("the run step starts forgectx %d times, want once (the exec)", n)
		}
	}
}

// useSudoShim runs the action as on a hosted runner: a non-root runner user with passwordless
// sudo. A recording `sudo` shim, first on PATH, checks for -n -E and runs the command as this
// process's user (standing in for root), with PATH replaced as sudo's secure_path does (Ubuntu's
// default), so only an explicit PATH keeps the runner's tool directories. Its parent PID, in
// sudoLog.ppid, shows whether the step's shell exec'd it (the parent is then this test process).
// The agent's identity then defaults to the runner user's, so agent-uid/gid are dropped from
// the inputs. As root, an `id` shim makes the step see the runner user 65534 (for callers that
// are root only: an unprivileged caller — the agent itself — gets the real id). It returns the
// runner user's UID and GID.
func useSudoShim(t *testing.T, r *actionRunner, sudoLog string) (uid, gid string) {
	t.Helper()
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "sudo"), []byte("#!/bin/bash\necho \"$PPID\" > "+sudoLog+".ppid\nprintf '%s\\n' \"$@\" > "+sudoLog+"\n[ \"$1\" = -n ] && [ \"$2\" = -E ] || exit 97\nshift 2\nPATH=/usr/sbin:/usr/bin:/sbin:/bin exec \"$@\"\n"), 0o755))
	r.env["PATH"] = dir + string(os.PathListSeparator) + r.env["PATH"]
	r.inputs["sudo"] = "true"
	delete(r.inputs, "agent-uid")
	delete(r.inputs, "agent-gid")
	uid, gid = fmt.Sprint(os.Getuid()), fmt.Sprint(os.Getgid())
	if os.Geteuid() == 0 {
		uid, gid = fmt.Sprint(unprivilegedUID), fmt.Sprint(unprivilegedUID)
		reachableByAgent(t, dir, dir)
		must(t, os.Chmod(dir, 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "id"), []byte("#!/bin/bash\nif [ \"$(/usr/bin/id -u)\" != 0 ]; then exec /usr/bin/id \"$@\"; fi\ncase \"$1\" in -u|-g) echo "+uid+" ;; *) exit 97 ;; esac\n"), 0o755))
	}
	return uid, gid
}

// envValue returns NAME's value in `env` output (NAME=VALUE lines), "" when absent.
func envValue(env, name string) string {
	for _, line := range strings.Split(env, "\n") {
		if v, ok := strings.CutPrefix(line, name+"="); ok {
			return v
		}
	}
	return ""
}
