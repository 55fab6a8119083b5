package ship

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/test/testnotice"
	"go.yaml.in/yaml/v3"
)

const actionlintVersion = "v1.7.12"

// workflowFiles lists every GitHub/Forgejo workflow the project ships: .github/workflows and
// the example workflows (YAML documents with top-level `on` and `jobs`; harness files and GitLab
// pipelines beside them are not workflows).
func workflowFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{".github/workflows/*.yml", ".github/workflows/*.yaml", "examples/*/*.yml", "examples/*/*.yaml"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		must(t, err)
		for _, f := range m {
			var doc map[string]any
			if err := yaml.Unmarshal([]byte(readFile(t, f)), &doc); err != nil {
				continue // not this test's concern: the owning package tests its own YAML
			}
			_, on := doc["on"]
			_, jobs := doc["jobs"]
			if on && jobs {
				rel, _ := filepath.Rel(root, f)
				files = append(files, rel)
			}
		}
	}
	sort.Strings(files)
	return files
}

// actionlint finds actionlint or installs the pinned version with `go install`; it skips the
// test with the reason when neither works.
func actionlint(t *testing.T) string {
	t.Helper()
	toolInstall.Lock() // parallel tests must not run two go installs at once
	defer toolInstall.Unlock()
	if p := tool("ACTIONLINT", "actionlint"); p != "" {
		if out, code := runCmd(t, time.Minute, root, nil, p, "-version"); code == 0 && strings.HasPrefix(out, actionlintVersion) {
			return p
		}
	}
	out, code := runCmd(t, 8*time.Minute, root, nil, "go", "install", "github.com/rhysd/actionlint/cmd/actionlint@"+actionlintVersion)
	if code != 0 {
		testnotice.Skip(t, "workflow lint (actionlint)", fmt.Sprintf("actionlint %s is not installed and go install failed (module proxy unreachable?):\n%s", actionlintVersion, out))
	}
	if p := tool("", "actionlint"); p != "" {
		return p
	}
	testnotice.Skip(t, "workflow lint (actionlint)", "actionlint was installed but is not in GOPATH/bin")
	return ""
}

func TestActionlintCleanOnEveryWorkflow(t *testing.T) {
	t.Parallel() // subprocess-bound: runs beside the other slow ship tests
	al := actionlint(t)
	files := workflowFiles(t)
	for _, want := range []string{".github/workflows/test.yml", ".github/workflows/lint.yml", ".github/workflows/image.yml",
		".github/workflows/release.yml", "examples/github/forgectx-action.yml", "examples/github/forgectx-claude.yml", "examples/forgejo/forgectx.yml"} {
		if !contains(files, want) {
			t.Errorf("workflow %s is missing", want)
		}
	}
	if _, err := exec.LookPath("shellcheck"); err != nil {
		t.Log("NOTICE: shellcheck is not installed: actionlint checks run: scripts without it (.ci/run installs it with apt)")
	}
	out, code := runCmd(t, 3*time.Minute, root, nil, al, append([]string{"-no-color"}, files...)...)
	if code != 0 {
		t.Fatalf("actionlint %s (exit %d):\n%s", strings.Join(files, " "), code, out)
	}
	// lint.yml runs actionlint with its own file list: it must name exactly these workflows
	// (it once globbed a harness file and was red).
	var lint struct {
		Jobs map[string]struct {
			Steps []struct {
				Name, Run string
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	must(t, yaml.Unmarshal([]byte(readFile(t, filepath.Join(root, ".github", "workflows", "lint.yml"))), &lint))
	var listed []string
	for _, s := range lint.Jobs["actionlint"].Steps {
		if s.Name != "actionlint" {
			continue
		}
		for _, line := range strings.Split(s.Run, "\n") {
			if _, args, ok := strings.Cut(line, `/bin/actionlint" `); ok {
				for _, pattern := range strings.Fields(args) {
					if strings.HasPrefix(pattern, "-") {
						continue
					}
					m, err := filepath.Glob(filepath.Join(root, pattern))
					must(t, err)
					for _, p := range m {
						rel, _ := filepath.Rel(root, p)
						listed = append(listed, rel)
					}
				}
			}
		}
	}
	sort.Strings(listed)
	if strings.Join(listed, " ") != strings.Join(files, " ") {
		t.Errorf("lint.yml's actionlint step lints %v, want exactly the workflows %v", listed, files)
	}
}

// TestShellcheckWrapperScripts runs shellcheck on the scripts actionlint does not see: the
// composite action's steps (bash), the component's job script (POSIX sh: the ci image's
// busybox) and scripts/*.sh.
func TestShellcheckWrapperScripts(t *testing.T) {
	t.Parallel() // subprocess-bound: runs beside the other slow ship tests
	sc, err := exec.LookPath("shellcheck")
	if err != nil {
		testnotice.Skip(t, "wrapper script lint (shellcheck)", "shellcheck is not installed (Debian: apt-get install -y shellcheck; .ci/run installs it when it runs as root)")
	}
	dir := t.TempDir()
	type script struct{ name, shell, body string }
	var scripts []script
	for _, s := range loadAction(t).Runs.Steps {
		scripts = append(scripts, script{"action.yml step " + s.ID, "bash", s.Run})
	}
	_, jobs := loadComponent(t)
	for _, name := range sortedKeys(jobs) {
		scripts = append(scripts, script{componentPath + " job " + name, "sh", strings.Join(jobs[name].Script, "\n")})
	}
	for i, s := range scripts {
		p := filepath.Join(dir, "script"+string(rune('a'+i))+".sh")
		must(t, os.WriteFile(p, []byte(s.body), 0o600))
		if out, code := runCmd(t, time.Minute, dir, nil, sc, "--shell="+s.shell, "--severity=style", p); code != 0 {
			t.Errorf("shellcheck %s:\n%s", s.name, out)
		}
	}
	m, err := filepath.Glob(filepath.Join(root, "scripts", "*.sh"))
	must(t, err)
	if len(m) == 0 {
		t.Fatal("no scripts/*.sh")
	}
	// The example directories' scripts, which adopters copy (each names its shell by #!).
	ex, err := filepath.Glob(filepath.Join(root, "examples", "*", "*.sh"))
	must(t, err)
	m = append(m, ex...)
	if out, code := runCmd(t, time.Minute, root, nil, sc, append([]string{"--severity=style"}, m...)...); code != 0 {
		t.Errorf("shellcheck scripts/*.sh:\n%s", out)
	}
}

// installDoc is the page that shows each forge's workflow or pipeline in full (the README
// links it from its Install section).
const installDoc = "docs/install.md"

// installBlock returns the first ```yaml block under the installDoc heading (e.g. "## GitHub").
func installBlock(t *testing.T, heading string) string {
	t.Helper()
	doc := readFile(t, filepath.Join(root, installDoc))
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("%s has no %q section", installDoc, heading)
	}
	rest := doc[i:]
	start := strings.Index(rest, "```yaml\n")
	if start < 0 {
		t.Fatalf("%s %s has no yaml block", installDoc, heading)
	}
	rest = rest[start+len("```yaml\n"):]
	end := strings.Index(rest, "```")
	if end < 0 {
		t.Fatalf("%s %s: unterminated yaml block", installDoc, heading)
	}
	return rest[:end]
}

// TestReadmeUsageWorkflowsLint: the install page's GitHub and Forgejo examples are complete workflows
// that actionlint passes (the Forgejo one with full-URL `uses:`, which only Forgejo resolves).
func TestReadmeUsageWorkflowsLint(t *testing.T) {
	t.Parallel() // subprocess-bound: runs beside the other slow ship tests
	al := actionlint(t)
	for _, c := range []struct{ heading, ignore string }{
		{"## GitHub", ""},
		{"## Forgejo", `specifying action "https://[^"]+" in invalid format`},
	} {
		dir := t.TempDir()
		must(t, os.MkdirAll(filepath.Join(dir, ".github", "workflows"), 0o755))
		cfg := filepath.Join(dir, "actionlint.yaml")
		must(t, os.WriteFile(cfg, []byte("self-hosted-runner:\n  labels: [docker]\n"), 0o644))
		p := filepath.Join(dir, ".github", "workflows", "readme.yml")
		must(t, os.WriteFile(p, []byte(installBlock(t, c.heading)), 0o644))
		args := []string{"-no-color", "-config-file", cfg}
		if c.ignore != "" {
			args = append(args, "-ignore", c.ignore)
		}
		if out, code := runCmd(t, time.Minute, dir, nil, al, append(args, p)...); code != 0 {
			t.Errorf("actionlint on %s %s (exit %d):\n%s", installDoc, c.heading, code, out)
		}
	}
}
