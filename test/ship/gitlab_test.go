package ship

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/test/testnotice"
)

// gitlabCILocalVersion is the newest gitlab-ci-local that runs on the machine's Node.js 20
// (4.65 and later use Set.prototype.union, Node.js 22+).
const gitlabCILocalVersion = "4.64.1"

// gitlabCILocal finds gitlab-ci-local ($GITLAB_CI_LOCAL, PATH, the test tool cache) or installs
// it into the cache with npm. It skips the test, with the reason, when it cannot.
func gitlabCILocal(t *testing.T) string {
	t.Helper()
	// Parallel tests must not run two npm installs into the same directory.
	toolInstall.Lock()
	defer toolInstall.Unlock()
	if p := tool("GITLAB_CI_LOCAL", "gitlab-ci-local"); p != "" {
		return p
	}
	dir := filepath.Join(toolCache(t), "gitlab-ci-local-"+gitlabCILocalVersion)
	bin := filepath.Join(dir, "node_modules", ".bin", "gitlab-ci-local")
	if _, err := os.Stat(bin); err != nil {
		if _, err := exec.LookPath("npm"); err != nil {
			testnotice.Skip(t, "GitLab component tests (gitlab-ci-local)", "gitlab-ci-local is not installed and npm is not available to install it")
		}
		must(t, os.MkdirAll(dir, 0o755))
		out, code := runCmd(t, 5*time.Minute, dir, nil, "npm", "install", "--no-audit", "--no-fund", "--loglevel=error", "gitlab-ci-local@"+gitlabCILocalVersion)
		if code != 0 {
			testnotice.Skip(t, "GitLab component tests (gitlab-ci-local)", fmt.Sprintf("npm install gitlab-ci-local@%s failed (registry unreachable?):\n%s", gitlabCILocalVersion, out))
		}
	}
	if out, code := runCmd(t, time.Minute, dir, nil, bin, "--version"); code != 0 || strings.TrimSpace(out) != gitlabCILocalVersion {
		testnotice.Skip(t, "GitLab component tests (gitlab-ci-local)", fmt.Sprintf("gitlab-ci-local does not start on this Node.js (exit %d): %s", code, firstLine(out)))
	}
	return bin
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// gitlabHarness collects the merge request the GitLab fake serves (the profile its cassette was
// recorded with); {{PRE}} is an optional pre-script.
const gitlabHarness = `version: 1
agent:
  name: triage
  category: observation
  command: ["bash", "-c", "test -f \"$FORGECTX_CONTEXT_DIR/index.json\" && env > \"$AGENT_OUT/env\""]
  env: [PATH, AGENT_OUT]
  timeout: 60s
{{PRE}}profiles:
  change_proposal:
    included_sources: [agent_runs, check_logs, checks, comments, entity, reviews]
    record_selection: newest
    check_log_selection: failed
    bounds: {max_records_per_source: 100, max_source_bytes: 4096, max_record_bytes: 8192, max_log_bytes: 4096, max_metadata_string_bytes: 256, max_labels: 20}
`

// TestGitLabComponentJobUnderGitLabCILocal includes templates/forgectx.yml the way GitLab's
// component self-test does (component: $CI_SERVER_FQDN/$CI_PROJECT_PATH/forgectx@$CI_COMMIT_SHA)
// with typed inputs, and runs the job with gitlab-ci-local's shell executor: the inputs become
// job variables, the script passes them as `forgectx run --forge gitlab` flags, and the run
// reads merge request !7 from a loopback GitLab API, posts its status note, runs the agent (or
// skips it), edits the status note to its completion, posts the receipt note, and writes the decision to the
// job's dotenv report.
func TestGitLabComponentJobUnderGitLabCILocal(t *testing.T) {
	t.Parallel()                                         // subprocess-bound: runs beside the other slow ship tests
	for _, b := range []string{"git", "bash", "rsync"} { // gitlab-ci-local copies with rsync
		if _, err := exec.LookPath(b); err != nil {
			testnotice.Skip(t, "GitLab component tests (gitlab-ci-local)", b+" is not installed (gitlab-ci-local copies the project with it)")
		}
	}
	gcl := gitlabCILocal(t)
	bin := forgectxBin(t)
	// dotenv is the report's exact content; {{CONTEXT_DIR}} stands for the FORGECTX_CONTEXT_DIR
	// the agent was given.
	cases := []struct {
		name     string
		pre      string
		harness  string // the harness input, when not the committed .gitlab/forgectx/triage.yml
		dotenv   string
		writes   []string
		jobFails bool
		agentRan bool
	}{
		{name: "proceed: the agent runs; dotenv skipped=false, FORGECTX_STATUS=success and the context directory",
			dotenv: "skipped=false\nFORGECTX_STATUS=success\nFORGECTX_CONTEXT_DIR={{CONTEXT_DIR}}\n", writes: []string{"POST", "PUT", "POST"}, agentRan: true},
		{name: "skip: the pre-script's decision and FORGECTX_STATUS=skipped reach the dotenv report (no context directory)",
			pre:    "pre_script:\n  command: [\"bash\", \"-c\", \"echo skipped=true >> $FULLSEND_PRESCRIPT_OUTPUT; echo reason=already triaged >> $FULLSEND_PRESCRIPT_OUTPUT\"]\n  env: [PATH]\n",
			dotenv: "reason=already triaged\nskipped=true\nFORGECTX_STATUS=skipped\n", writes: []string{"POST", "PUT", "POST"}},
		// forgectx stops at configuration (exit 2), posting and writing nothing: the job
		// fails and the component's fallback reports FORGECTX_STATUS=failure.
		{name: "configuration error: forgectx writes no report, the job's fallback says FORGECTX_STATUS=failure",
			harness: ".gitlab/forgectx/missing.yml", dotenv: "FORGECTX_STATUS=failure\n", writes: []string{}, jobFails: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newGitLabFake(t)
			harness := ".gitlab/forgectx/triage.yml"
			if c.harness != "" {
				harness = c.harness
				f.expectNoRequests()
			}
			dir := t.TempDir()
			pipeline := fmt.Sprintf(`include:
  - component: $CI_SERVER_FQDN/$CI_PROJECT_PATH/forgectx@$CI_COMMIT_SHA
    inputs:
      stage: agents
      version: latest
      harness: %s
      forge: gitlab
      repo: Acme/Platform/widgets
      number: "7"
      kind: change_proposal
      api-url: %s/api/v4
      token-env: SHIP_GITLAB_TOKEN
%s
stages: [agents]
`, harness, f.URL(), agentIdentity())
			repo, _ := newGitLabRepo(t, map[string]string{
				componentPath:                 readFile(t, filepath.Join(root, componentPath)),
				".gitlab/forgectx/triage.yml": strings.Replace(gitlabHarness, "{{PRE}}", c.pre, 1),
				".gitlab-ci.yml":              pipeline,
			})
			home := filepath.Join(dir, "home")
			agentOut := filepath.Join(dir, "agent-out")
			must(t, os.MkdirAll(home, 0o700))
			must(t, os.MkdirAll(agentOut, 0o700))
			reachableByAgent(t, dir, agentOut)
			// GITLAB_CI=true as on GitLab (gitlab-ci-local sets "false"): forgectx then takes its
			// defaults from the predefined variables (receipt id glci-<CI_JOB_ID>-1), and the
			// inputs override the rest.
			env := []string{"HOME=" + home, "PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH"), "TMPDIR=" + os.TempDir()}
			out, code := runCmd(t, 5*time.Minute, repo, env, gcl, "--cwd", ".", "--force-shell-executor", "--no-color",
				"--home", home, "--variable", "GITLAB_CI=true", "--variable", "SHIP_GITLAB_TOKEN="+gitlabToken, "--variable", "AGENT_OUT="+agentOut, "forgectx")
			t.Log(out)
			if c.jobFails {
				if code == 0 || !strings.Contains(out, "FAIL  forgectx") {
					t.Fatalf("gitlab-ci-local exited %d; want the forgectx job to fail", code)
				}
			} else {
				if code != 0 {
					t.Fatalf("gitlab-ci-local exited %d", code)
				}
				if !strings.Contains(out, "PASS  forgectx") {
					t.Error("gitlab-ci-local did not report the forgectx job as passed")
				}
			}
			if !strings.Contains(out, "starting shell (agents)") {
				t.Error("the stage input did not reach the job")
			}
			ws := f.Writes()
			if got := methods(ws); !reflect.DeepEqual(got, c.writes) {
				t.Fatalf("note writes = %v, want %v (start POST, completion PUT, receipt POST)", got, c.writes)
			}
			if len(ws) == 3 && !strings.Contains(ws[2].Body, "glci-") {
				t.Errorf("the receipt note has no GitLab CI receipt id:\n%s", ws[2].Body)
			}
			_, err := os.Stat(filepath.Join(agentOut, "env"))
			if ran := err == nil; ran != c.agentRan {
				t.Fatalf("agent ran = %v, want %v", ran, c.agentRan)
			}
			want := c.dotenv
			if c.agentRan {
				ctxDir := envValue(readFile(t, filepath.Join(agentOut, "env")), "FORGECTX_CONTEXT_DIR")
				if ctxDir == "" {
					t.Fatal("the agent was given no FORGECTX_CONTEXT_DIR")
				}
				want = strings.Replace(want, "{{CONTEXT_DIR}}", ctxDir, 1)
			}
			if got := readFile(t, filepath.Join(repo, "forgectx.env")); got != want {
				t.Errorf("dotenv report = %q, want %q", got, want)
			}
			if c.agentRan && strings.Contains(readFile(t, filepath.Join(agentOut, "env")), gitlabToken) {
				t.Error("the agent's environment carries the forge token")
			}
			if strings.Contains(out, gitlabToken) {
				t.Error("the job log carries the forge token")
			}
		})
	}
}

const gitlabToken = "glpat-shipGitLabToken0123456789"

// newGitLabRepo makes a committed Git repository whose origin is gitlab.example.com/forgectx/
// forgectx, holding files (path → content), as gitlab-ci-local needs for component includes.
func newGitLabRepo(t *testing.T, files map[string]string) (repo, sha string) {
	t.Helper()
	repo = filepath.Join(t.TempDir(), "repo")
	for _, p := range sortedKeys(files) {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(repo, p)), 0o755))
		must(t, os.WriteFile(filepath.Join(repo, p), []byte(files[p]), 0o644))
	}
	home := t.TempDir()
	env := append(os.Environ(), "HOME="+home)
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"config", "user.name", "ship"},
		{"config", "user.email", "ship@example.invalid"},
		{"remote", "add", "origin", "https://gitlab.example.com/forgectx/forgectx.git"},
		{"add", "."},
		{"commit", "-q", "-m", "pipeline"},
	} {
		if out, code := runCmd(t, time.Minute, repo, env, "git", args...); code != 0 {
			t.Fatalf("git %v: %s", args, out)
		}
	}
	out, code := runCmd(t, time.Minute, repo, env, "git", "rev-parse", "HEAD")
	if code != 0 {
		t.Fatal(out)
	}
	return repo, strings.TrimSpace(out)
}

// TestGitLabPipelinesValidate: the project's .gitlab-ci.yml and the example pipeline resolve
// the component and pass gitlab-ci-local's GitLab CI schema validation, with the jobs each
// promises. The example includes a released version (@1.0.0); here it is pointed at the
// commit so gitlab-ci-local resolves the component locally instead of fetching it.
func TestGitLabPipelinesValidate(t *testing.T) {
	t.Parallel() // subprocess-bound: runs beside the other slow ship tests
	for _, b := range []string{"git", "bash", "rsync"} {
		if _, err := exec.LookPath(b); err != nil {
			testnotice.Skip(t, "GitLab component tests (gitlab-ci-local)", b+" is not installed (gitlab-ci-local copies the project with it)")
		}
	}
	gcl := gitlabCILocal(t)
	component := readFile(t, filepath.Join(root, componentPath))
	harness := readFile(t, filepath.Join(root, "examples", "harness", "triage.yml"))
	cases := []struct {
		name     string
		pipeline string
		jobs     []string // name and when, as --list-all prints them on a branch pipeline
	}{
		{".gitlab-ci.yml", readFile(t, filepath.Join(root, ".gitlab-ci.yml")),
			[]string{"forgectx never", "test on_success", "component-selftest on_success", "binaries never", "release never"}},
		{"examples/gitlab/.gitlab-ci.yml", readFile(t, filepath.Join(root, "examples", "gitlab", ".gitlab-ci.yml")),
			[]string{"forgectx never", "forgectx-report never"}},
		{installDoc + " ## GitLab", installBlock(t, "## GitLab"), []string{"forgectx never"}},
		{installDoc + " ### forgectx (Components)", installBlock(t, "### forgectx"), []string{"forgectx on_success"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{componentPath: component, "examples/harness/triage.yml": harness, ".gitlab/forgectx/triage.yml": harness}
			repo, sha := newGitLabRepo(t, files)
			pipeline := strings.ReplaceAll(c.pipeline, "/forgectx@1.0.0", "/forgectx@"+sha)
			pipeline = strings.ReplaceAll(pipeline, "$CI_COMMIT_SHA", sha)
			must(t, os.WriteFile(filepath.Join(repo, ".gitlab-ci.yml"), []byte(pipeline), 0o644))
			out, code := runCmd(t, 2*time.Minute, repo, append(os.Environ(), "HOME="+t.TempDir()), gcl, "--cwd", ".", "--no-color", "--list-all")
			if code != 0 || !strings.Contains(out, "json schema validated") {
				t.Fatalf("gitlab-ci-local --list-all (exit %d):\n%s", code, out)
			}
			// Rows: name, description (empty here), stage, when, allow_failure, needs.
			listed := map[string]string{}
			for _, line := range strings.Split(out, "\n") {
				if f := strings.Fields(line); len(f) >= 4 && f[0] != "name" {
					listed[f[0]] = f[2]
				}
			}
			for _, j := range c.jobs {
				name, when, _ := strings.Cut(j, " ")
				if listed[name] != when {
					t.Errorf("job %s: when = %q, want %q\n%s", name, listed[name], when, out)
				}
			}
		})
	}
}

// agentIdentity is the component inputs naming an unprivileged agent when the tests run as root
// (forgectx refuses a root agent), else nothing: the agent runs as the job's user.
func agentIdentity() string {
	if os.Geteuid() != 0 {
		return ""
	}
	return fmt.Sprintf("      agent-uid: \"%d\"\n      agent-gid: \"%d\"\n", unprivilegedUID, unprivilegedUID)
}
