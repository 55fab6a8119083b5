package ship

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/forgectx/forgectx/internal/run/harness"
	"github.com/forgectx/forgectx/test/testnotice"
)

// The example directories, copied into a fresh repository as their own comments say and run as
// their CI runs them, against a loopback forge. Each proves, from the outside: the agent ran on
// a read-only snapshot copy as an unprivileged user without the forge token (and with the model
// key the example passes it), the status comment was started and finished and the receipt
// posted, and the outputs (GitHub, Forgejo) or the dotenv report (GitLab) were relayed. The
// stand-in agent.sh reports what it was given: its UID, whether a write into the copy failed,
// and the names (never the values) of its environment.

// exampleStep is the forgectx step of an example workflow: its with: inputs and env:.
type exampleStep struct {
	With map[string]string
	Env  map[string]string
}

func exampleForgectxStep(t *testing.T, workflow string) exampleStep {
	t.Helper()
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				ID   string            `yaml:"id"`
				Uses string            `yaml:"uses"`
				With map[string]string `yaml:"with"`
				Env  map[string]string `yaml:"env"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	must(t, yaml.Unmarshal([]byte(readFile(t, filepath.Join(root, workflow))), &wf))
	for _, j := range sortedKeys(wf.Jobs) {
		for _, s := range wf.Jobs[j].Steps {
			if s.ID == "forgectx" {
				if !strings.Contains(s.Uses, "forgectx/forgectx@") {
					t.Fatalf("%s: the forgectx step uses %q, not the action", workflow, s.Uses)
				}
				return exampleStep{With: s.With, Env: s.Env}
			}
		}
	}
	t.Fatalf("%s has no step with id forgectx", workflow)
	return exampleStep{}
}

// copyExample copies files of examples/<dir> into repo/<dest>, keeping their modes.
func copyExample(t *testing.T, dir, repo, dest string, files ...string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Join(repo, dest), 0o755))
	for _, f := range files {
		src := filepath.Join(root, "examples", dir, f)
		fi, err := os.Stat(src)
		must(t, err)
		must(t, os.WriteFile(filepath.Join(repo, dest, f), []byte(readFile(t, src)), fi.Mode().Perm()))
	}
}

// secretValue stands for a `${{ secrets.X }}` the example reads.
var secretExpr = regexp.MustCompile(`^\$\{\{ secrets\.([A-Z_]+) \}\}$`)

const exampleModelKey = "sk-ant-shipExampleModelKey0123456789abcdef"

// agentReport is what the example's stand-in agent printed, checked against the contract.
func checkAgentReport(t *testing.T, log, token string, wantUID string) {
	t.Helper()
	for _, want := range []string{"agent: uid " + wantUID + ", the snapshot copy is read-only", "agent: a model API key is set"} {
		if !strings.Contains(log, want) {
			t.Errorf("the example agent did not print %q", want)
		}
	}
	if strings.Contains(log, "WRITABLE") {
		t.Error("the agent could write into its snapshot copy")
	}
	m := regexp.MustCompile(`agent: environment: (.*)`).FindStringSubmatch(log)
	if m == nil {
		t.Fatal("the example agent printed no environment line")
	}
	names := strings.Fields(m[1])
	for _, want := range []string{"ANTHROPIC_API_KEY", "FORGECTX_CONTEXT_DIR", "FORGECTX_EVENT_EXCERPT", "PATH"} {
		if !contains(names, want) {
			t.Errorf("the agent's environment lacks %s: %v", want, names)
		}
	}
	for _, n := range names {
		if harness.IsForgeCredentialName(n) || n == "FORGECTX_TOKEN" {
			t.Errorf("the agent was given the credential variable %s", n)
		}
	}
	for _, secret := range []string{token, exampleModelKey} {
		if strings.Contains(log, secret) {
			t.Error("the job log carries a credential's value")
		}
	}
}

// TestGitHubExampleRunsAsCopied: examples/github as its README says — forgectx-action.yml as
// the workflow, triage.yml, skip-if-labelled.sh and agent.sh in .github/forgectx/ — run as a
// hosted runner runs it: the composite action's steps under bash, a non-root runner user with
// passwordless sudo (the sudo shim: the action's `sudo: auto` path, PATH replaced as
// secure_path does), the issues event payload, GITHUB_API_URL pointing at the loopback GitHub.
// The forgectx step's with: and env: come from the workflow file; only version (the test's own
// release build) and the secrets' values are the test's.
func TestGitHubExampleRunsAsCopied(t *testing.T) {
	t.Parallel() // subprocess-bound: runs beside the other slow ship tests
	step := exampleForgectxStep(t, "examples/github/forgectx-action.yml")
	for _, c := range []struct {
		name, skipLabel string
		skip            bool
	}{{"proceed: unlabelled for SKIP_LABEL", "", false}, {"skip: the issue carries SKIP_LABEL", "bug", true}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeForge(t)
			inputs := map[string]string{}
			for k, v := range step.With {
				inputs[k] = v
			}
			inputs["version"], inputs["download-url"] = shipVersion, serveShipRelease(t)
			r := newActionRunner(t, f.URL(), harnessWith(""), inputs)
			copyExample(t, "github", r.work, ".github/forgectx", "triage.yml", "skip-if-labelled.sh", "agent.sh")
			reachableByAgent(t, filepath.Join(r.work, ".github", "forgectx"), filepath.Join(r.work, ".github", "forgectx"))
			must(t, os.Chmod(filepath.Join(r.work, ".github", "forgectx"), 0o755))
			for k, v := range step.Env {
				if m := secretExpr.FindStringSubmatch(v); m != nil {
					v = "ship-secret-" + m[1]
					if m[1] == "ANTHROPIC_API_KEY" {
						v = exampleModelKey
					}
				}
				r.env[k] = v
			}
			if c.skipLabel != "" {
				r.env["SKIP_LABEL"] = c.skipLabel // ghscenario's issue is labelled bug
			}
			event := filepath.Join(r.temp, "event.json")
			b, _ := json.Marshal(map[string]any{"action": "opened", "issue": map[string]any{"number": f.sc.Number, "labels": []any{}}})
			must(t, os.WriteFile(event, b, 0o644))
			for k, v := range map[string]string{"GITHUB_EVENT_NAME": "issues", "GITHUB_EVENT_PATH": event, "GITHUB_API_URL": f.URL()} {
				r.env[k] = v
			}
			sudoLog := filepath.Join(r.temp, "sudo.log")
			runnerUID, _ := useSudoShim(t, r, sudoLog)
			before := snapshotDir(t, r.work)
			out := r.run()
			t.Log(r.log.String())
			if r.failedAt != "" {
				t.Fatalf("step %q failed with exit %d", r.failedAt, r.exitCode)
			}
			checkFinished(t, f, out, c.skip, "labelled bug", "gha-4242-1")
			if c.skip {
				if strings.Contains(r.log.String(), "agent: uid") {
					t.Error("the agent ran although the pre-script skipped it")
				}
			} else {
				checkAgentReport(t, r.log.String(), actionToken, runnerUID)
			}
			if _, err := os.Stat(sudoLog); err != nil {
				t.Errorf("the action did not go through sudo (sudo: auto on a non-root runner): %v", err)
			}
			if after := snapshotDir(t, r.work); !reflect.DeepEqual(before, after) {
				t.Errorf("the run changed the workspace:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// checkFinished: start, completion and receipt writes, the receipt's id and status, and the
// action outputs for a proceed or a skip.
func checkFinished(t *testing.T, f *fakeForge, out map[string]string, skip bool, reason, receiptID string) {
	t.Helper()
	ws := f.Writes()
	if got := methods(ws); len(got) != 3 || got[0] != "POST" || got[2] != "POST" {
		t.Fatalf("comment writes = %v, want the start status, its completion, then the receipt", got)
	}
	status := "success"
	if skip {
		status = "skipped"
	}
	if !strings.Contains(ws[2].Body, receiptID) || !strings.Contains(ws[2].Body, `"status":"`+status+`"`) && !strings.Contains(ws[2].Body, `"status": "`+status+`"`) {
		t.Errorf("the receipt does not record %s with status %s:\n%s", receiptID, status, ws[2].Body)
	}
	if out == nil {
		return
	}
	want := map[string]string{"skipped": "false", "skip-reason": "", "status": "success"}
	if skip {
		want = map[string]string{"skipped": "true", "skip-reason": reason, "status": "skipped"}
	}
	ctxDir := out["context-dir"]
	delete(out, "context-dir")
	if !reflect.DeepEqual(out, want) {
		t.Errorf("outputs = %v, want %v", out, want)
	}
	if skip == (ctxDir != "") {
		t.Errorf("context-dir = %q with skip %v", ctxDir, skip)
	}
}

// TestForgejoExampleRunsAsCopied: examples/forgejo as its README says — forgectx.yml as the
// workflow, the harness and scripts in .forgejo/forgectx/ — run as Forgejo's runner runs the
// action in the example's root Node.js (Debian) container: FORGEJO_ACTIONS and the GITHUB_* compatibility
// variables, the issues event payload (its labels decide the pre-script), the repository admin's
// token from a secret (identity found with GET /user) and the example's agent-uid/agent-gid.
func TestForgejoExampleRunsAsCopied(t *testing.T) {
	t.Parallel() // subprocess-bound: runs beside the other slow ship tests
	if os.Geteuid() != 0 {
		testnotice.Skip(t, "Forgejo example run (non-root)", "the Forgejo example runs its job as root in a container (agent-uid 65534); this test needs root")
	}
	step := exampleForgectxStep(t, "examples/forgejo/forgectx.yml")
	for _, c := range []struct {
		name   string
		labels []string
		skip   bool
	}{{"proceed: the event carries no no-agent label", []string{"bug"}, false}, {"skip: the event is labelled no-agent", []string{"bug", "no-agent"}, true}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newForgejoFakeAsAdmin(t)
			inputs := map[string]string{}
			for k, v := range step.With {
				inputs[k] = v
			}
			token := secretExpr.FindStringSubmatch(inputs["token"])
			if token == nil {
				t.Fatalf("the example's token input %q is not a secret", inputs["token"])
			}
			const adminToken = "forgejoAdminToken0123456789abcdef01234567"
			inputs["token"] = adminToken
			inputs["version"], inputs["download-url"] = shipVersion, serveShipRelease(t)
			r := newActionRunner(t, f.URL(), harnessWith(""), inputs)
			// newActionRunner names 65534 as root; the example's own agent-uid/gid must say it.
			if step.With["agent-uid"] == "" || step.With["agent-gid"] == "" {
				t.Fatal("the Forgejo example's job runs as root and must set agent-uid and agent-gid")
			}
			r.inputs["agent-uid"], r.inputs["agent-gid"] = step.With["agent-uid"], step.With["agent-gid"]
			copyExample(t, "forgejo", r.work, ".forgejo/forgectx", "triage.yml", "skip-if-labelled.sh", "agent.sh")
			must(t, os.Chmod(filepath.Join(r.work, ".forgejo", "forgectx"), 0o755))
			reachableByAgent(t, filepath.Join(r.work, ".forgejo", "forgectx"), filepath.Join(r.work, ".forgejo", "forgectx"))
			for k, v := range step.Env {
				if m := secretExpr.FindStringSubmatch(v); m != nil && m[1] == "ANTHROPIC_API_KEY" {
					v = exampleModelKey
				}
				r.env[k] = v
			}
			var labels []any
			for i, l := range c.labels {
				labels = append(labels, map[string]any{"id": i + 1, "name": l})
			}
			event := filepath.Join(r.temp, "event.json")
			b, _ := json.Marshal(map[string]any{"action": "opened", "issue": map[string]any{"number": 7, "pull_request": nil, "labels": labels}})
			must(t, os.WriteFile(event, b, 0o644))
			for k, v := range map[string]string{"FORGEJO_ACTIONS": "true", "GITHUB_SERVER_URL": f.URL(), "GITHUB_REPOSITORY": "Acme/Widgets",
				"GITHUB_EVENT_NAME": "issues", "GITHUB_EVENT_PATH": event, "FORGEJO_EVENT_PATH": event, "GITHUB_RUN_ID": "77", "GITHUB_API_URL": f.URL() + "/api/v1"} {
				r.env[k] = v
			}
			out := r.run()
			t.Log(r.log.String())
			if r.failedAt != "" {
				t.Fatalf("step %q failed with exit %d", r.failedAt, r.exitCode)
			}
			checkFinished(t, f, out, c.skip, "labelled no-agent", "fja-77-1")
			if c.skip {
				if strings.Contains(r.log.String(), "agent: uid") {
					t.Error("the agent ran although the pre-script skipped it")
				}
			} else {
				checkAgentReport(t, r.log.String(), adminToken, step.With["agent-uid"])
			}
		})
	}
}

// TestExampleHarnessesLoad: every harness in the example directories is valid, names only files
// of its own directory (as copied: the path prefix the directory's README gives), and (the
// triage agents) passes the model key to the agent without withholding it.
func TestExampleHarnessesLoad(t *testing.T) {
	for _, c := range []struct{ dir, prefix, glob string }{{"github", ".github/forgectx/", "triage*.yml"}, {"gitlab", ".gitlab/forgectx/", "triage*.yml"},
		{"forgejo", ".forgejo/forgectx/", "triage*.yml"}, {"rework", ".forgejo/forgectx/", "harness.yml"}} {
		m, err := filepath.Glob(filepath.Join(root, "examples", c.dir, c.glob))
		must(t, err)
		if len(m) == 0 {
			t.Fatalf("examples/%s has no harness", c.dir)
		}
		for _, p := range m {
			h, err := harness.Load(p)
			if err != nil {
				t.Errorf("%s: %v", p, err)
				continue
			}
			for _, argv := range [][]string{h.Agent.Command, preCommand(h)} {
				for _, a := range argv {
					if strings.Contains(a, "/") && !strings.HasPrefix(a, c.prefix) {
						t.Errorf("%s: %q is not a file of the example's own directory (%s…)", p, a, c.prefix)
					}
					if rel, ok := strings.CutPrefix(a, c.prefix); ok {
						if _, err := os.Stat(filepath.Join(root, "examples", c.dir, rel)); err != nil {
							t.Errorf("%s: %s is not in examples/%s: %v", p, a, c.dir, err)
						}
					}
				}
			}
			if c.dir != "rework" && (!contains(h.Agent.Env, "ANTHROPIC_API_KEY") || contains(h.Secrets, "ANTHROPIC_API_KEY")) {
				t.Errorf("%s: the agent must be given ANTHROPIC_API_KEY (agent.env, not secrets)", p)
			}
		}
	}
}

func preCommand(h *harness.Harness) []string {
	if h.PreScript == nil {
		return nil
	}
	return h.PreScript.Command
}
