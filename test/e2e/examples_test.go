package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/forgectx/forgectx/internal/run"
	"github.com/forgectx/forgectx/internal/run/harness"
	"github.com/forgectx/forgectx/internal/status"
)

// The README's workflow (examples/github) performs the whole job against the loopback API: its
// harness, pre-script and stand-in agent, copied where the workflow expects them, proceed on an
// unlabelled issue and skip on one carrying SKIP_LABEL.
func TestExampleGitHubWorkflowRunsEndToEnd(t *testing.T) {
	for _, tc := range []struct {
		name, skipLabel string
		skip            bool
	}{{"proceed", "no-agent", false}, {"skip on label", "bug", true}} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, worldOpts{})
			repo := filepath.Join(w.dir, "workspace")
			dst := filepath.Join(repo, ".github", "forgectx")
			must(t, os.MkdirAll(dst, 0o755))
			for _, f := range []string{"triage.yml", "skip-if-labelled.sh", "agent.sh"} {
				b, err := os.ReadFile(filepath.Join("../../examples/github", f))
				must(t, err)
				must(t, os.WriteFile(filepath.Join(dst, f), b, 0o644))
			}
			t.Chdir(repo)
			h, err := harness.Load(".github/forgectx/triage.yml")
			must(t, err)
			w.h = h
			w.env["SKIP_LABEL"] = tc.skipLabel
			want := w.expectedIndex()
			w.expectStartCreate()
			w.expectAcquisition()
			if tc.skip {
				w.expectFinish(status.Skipped, "labelled bug", run.StatusSkipped, want)
			} else {
				w.expectFinish(status.Success, "", run.StatusSuccess, want)
			}
			o := w.options()
			o.HarnessPath = ".github/forgectx/triage.yml"
			res, err := run.Run(t.Context(), o)
			if err != nil {
				t.Fatalf("run: %v\njob log:\n%s", err, w.jobLog.String())
			}
			if tc.skip != (res.Status == run.StatusSkipped) || tc.skip == res.AgentRan {
				t.Fatalf("result = %+v", res)
			}
			if !tc.skip {
				for _, s := range []string{"records: 2, gaps: [\"comments/authorization_failed\"]", "earlier runs: 0", "event: issue"} {
					if !strings.Contains(w.jobLog.String(), s) {
						t.Errorf("the example agent did not print %q:\n%s", s, w.jobLog.String())
					}
				}
			}
			w.assertNoTrees()
		})
	}
}

// The workflow file is valid YAML that runs forgectx run with the example harness and
// reconciles with the same harness.
func TestExampleWorkflowUsesForgectxRun(t *testing.T) {
	b, err := os.ReadFile("../../examples/github/forgectx.yml")
	must(t, err)
	var wf struct {
		Permissions map[string]string `yaml:"permissions"`
		Jobs        map[string]struct {
			Steps []struct {
				ID  string `yaml:"id"`
				Run string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	must(t, yaml.Unmarshal(b, &wf))
	if wf.Permissions["issues"] != "write" || wf.Permissions["pull-requests"] != "write" || wf.Permissions["actions"] != "read" {
		t.Errorf("permissions = %v", wf.Permissions)
	}
	var runStep, reconcile bool
	for _, s := range wf.Jobs["triage"].Steps {
		runStep = runStep || (s.ID == "forgectx" && strings.Contains(s.Run, " run \\\n") && strings.Contains(s.Run, "--harness .github/forgectx/triage.yml"))
		reconcile = reconcile || strings.Contains(s.Run, "forgectx status reconcile --harness .github/forgectx/triage.yml")
	}
	if !runStep || !reconcile {
		t.Errorf("workflow: forgectx run step %v, reconcile step %v", runStep, reconcile)
	}
}

// The example workflow passes actionlint and its scripts pass shellcheck (when the linters are
// installed; the ship tests install them in CI).
func TestExampleWorkflowLints(t *testing.T) {
	home, _ := os.UserHomeDir()
	for _, lint := range []struct {
		bin  []string
		args []string
	}{
		{[]string{"actionlint", filepath.Join(home, "go", "bin", "actionlint")}, []string{"../../examples/github/forgectx.yml"}},
		{[]string{"shellcheck"}, []string{"../../examples/github/agent.sh", "../../examples/github/skip-if-labelled.sh"}},
	} {
		path := ""
		for _, b := range lint.bin {
			if p, err := exec.LookPath(b); err == nil {
				path = p
				break
			}
		}
		if path == "" {
			t.Logf("%s not installed: skipped", lint.bin[0])
			continue
		}
		out, err := exec.Command(path, lint.args...).CombinedOutput()
		if err != nil {
			t.Errorf("%s: %v\n%s", lint.bin[0], err, out)
		}
	}
}

// The install page's complete workflow (docs/install.md, linked from the README) is
// examples/github/forgectx.yml byte for byte (after the file's three header comment lines), so
// what the tests run is what the docs show.
func TestReadmeShowsTheExampleWorkflow(t *testing.T) {
	readme, err := os.ReadFile("../../docs/install.md")
	must(t, err)
	file, err := os.ReadFile("../../examples/github/forgectx.yml")
	must(t, err)
	lines := strings.SplitAfterN(string(file), "\n", 4)
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "#") || !strings.HasPrefix(lines[2], "#") {
		t.Fatalf("examples/github/forgectx.yml no longer starts with its three comment lines")
	}
	want := lines[3]
	s := string(readme)
	i := strings.Index(s, "## A complete GitHub workflow")
	if i < 0 {
		t.Fatal("docs/install.md has no complete GitHub workflow section")
	}
	j := strings.Index(s[i:], "```yaml\n")
	if j < 0 {
		t.Fatal("the section has no yaml block")
	}
	block := s[i+j+len("```yaml\n"):]
	block = block[:strings.Index(block, "```\n")]
	if block != want {
		t.Errorf("docs/install.md workflow differs from examples/github/forgectx.yml:\n%s", block)
	}
}
