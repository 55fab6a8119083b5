package ship

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forgectx/forgectx/test/testnotice"
	"go.yaml.in/yaml/v3"
)

// ciImageBuild is the Dockerfile's prebuilt-ci target, built once per test process (it is
// slow: ~50 MB of staged files through vfs storage) and shared by the tests that run in it.
var (
	ciImageOnce sync.Once
	ciImageErr  error
	ciStore     []string // buildah's --storage-driver/--root/--runroot arguments
	ciImageDir  string   // its storage, removed by TestMain
	ciCtrOnce   sync.Once
	ciCtr       string
	ciCtrErr    error
)

const ciImageName = "localhost/forgectx:ship-ci"

// buildah runs buildah with the shared storage and chroot isolation, as the image tests do.
func buildah(t testing.TB, timeout time.Duration, args ...string) (string, int) {
	t.Helper()
	return runCmd(t, timeout, root, append(os.Environ(), "BUILDAH_ISOLATION=chroot"), "buildah", append(append([]string{}, ciStore...), args...)...)
}

// ciImage builds the ci image offline — scripts/image-rootfs.sh stages the binary and CA
// bundle, scripts/ci-rootfs.sh adds busybox, bash and git from this Debian host's packages —
// and returns its name. It skips, saying why, where buildah, root or those packages are missing.
func ciImage(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("buildah"); err != nil {
		testnotice.Skip(t, "container image tests (buildah)", "buildah is not installed (Debian: apt-get install -y buildah; .ci/run installs it when it runs as root)")
	}
	if os.Geteuid() != 0 {
		testnotice.Skip(t, "container image tests (buildah)", "buildah with vfs storage and chroot isolation needs root here (rootless needs subuid mappings)")
	}
	for _, p := range []string{"/bin/busybox", "/usr/bin/bash", "/usr/bin/git"} {
		if _, err := os.Stat(p); err != nil {
			testnotice.Skip(t, "ci image tests (busybox-static)", fmt.Sprintf("%s is missing: the ci image is staged from Debian's busybox-static, bash and git (.ci/run installs busybox-static)", p))
		}
	}
	if out, err := exec.Command("/bin/busybox", "--list").CombinedOutput(); err != nil || !strings.Contains(string(out), "\nsh\n") {
		testnotice.Skip(t, "ci image tests (busybox-static)", fmt.Sprintf("/bin/busybox is not a full busybox (install busybox-static): %v", err))
	}
	ciImageOnce.Do(func() {
		dir, err := os.MkdirTemp("", "forgectx-ship-ci-")
		if err != nil {
			ciImageErr = err
			return
		}
		ciImageDir = dir
		ctx := filepath.Join(dir, "context")
		ciStore = []string{"--storage-driver", "vfs", "--root", filepath.Join(dir, "storage"), "--runroot", filepath.Join(dir, "runroot")}
		// ci-rootfs.sh needs no binary: staging it first overlaps it with the shared release
		// build, which the parallel tests start at the same time.
		if out, code := runCmd(t, 5*time.Minute, root, nil, "bash", filepath.Join(root, "scripts", "ci-rootfs.sh"), filepath.Join(ctx, "rootfs")); code != 0 {
			ciImageErr = &buildError{"ci-rootfs.sh: " + out}
			return
		}
		bin := forgectxBin(t)
		if out, code := runCmd(t, 5*time.Minute, root, nil, "bash", filepath.Join(root, "scripts", "image-rootfs.sh"), bin, ctx); code != 0 {
			ciImageErr = &buildError{"image-rootfs.sh: " + out}
			return
		}
		if out, code := buildah(t, 10*time.Minute, "build", "--isolation", "chroot", "--pull-never", "--target", "prebuilt-ci",
			"--build-arg", "VERSION="+shipVersion, "-f", filepath.Join(root, "Dockerfile"), "-t", ciImageName, ctx); code != 0 {
			ciImageErr = &buildError{"buildah build --target prebuilt-ci: " + out}
		}
		// The staged context is no longer needed; the storage stays for the tests.
		os.RemoveAll(ctx)
	})
	if ciImageErr != nil {
		t.Fatal(ciImageErr)
	}
	return ciImageName
}

type buildError struct{ msg string }

func (e *buildError) Error() string { return e.msg }

// ciContainer is one working container of the ci image, shared by the tests that run in it
// (each `buildah from` copies the whole image under vfs: the slowest step here). Every job
// run in it is its own process tree with its own temporary trees, as jobs on one runner host.
// TestMain removes it with the storage.
func ciContainer(t *testing.T) string {
	t.Helper()
	img := ciImage(t)
	ciCtrOnce.Do(func() {
		out, code := buildah(t, 5*time.Minute, "from", "--pull-never", img)
		if code != 0 {
			ciCtrErr = &buildError{"buildah from: " + out}
			return
		}
		ciCtr = strings.TrimSpace(out)
	})
	if ciCtrErr != nil {
		t.Fatal(ciCtrErr)
	}
	return ciCtr
}

// TestCIImageHasWhatJobsNeed: the ci image runs as root (so forgectx can seal the agent's copy
// by ownership), has the POSIX shell GitLab's runner starts jobs with, bash, git and the CA
// bundle, and an unprivileged 65532 the agent runs as.
func TestCIImageHasWhatJobsNeed(t *testing.T) {
	t.Parallel() // subprocess-bound: runs beside the other slow ship tests
	ctr := ciContainer(t)
	out, code := buildah(t, time.Minute, "inspect", "--type", "image", ciImageName)
	if code != 0 {
		t.Fatalf("buildah inspect: %s", out)
	}
	var img struct {
		OCIv1 struct {
			Config struct {
				User string   `json:"User"`
				Env  []string `json:"Env"`
			} `json:"config"`
		} `json:"OCIv1"`
	}
	must(t, json.Unmarshal([]byte(out), &img))
	if img.OCIv1.Config.User != "0:0" {
		t.Errorf("ci image user = %q, want 0:0 (forgectx as root, the agent as 65532)", img.OCIv1.Config.User)
	}
	script := `set -e
sh -c 'echo posix-sh'
bash -c 'echo "bash $BASH_VERSION" | cut -d. -f1'
git --version
test -s /etc/ssl/certs/ca-certificates.crt && echo ca-bundle
id -u
grep -c '^nonroot:x:65532:65532:' /etc/passwd
forgectx version`
	out, code = buildah(t, 2*time.Minute, "run", "--isolation", "chroot", ctr, "--", "/busybox/sh", "-c", script)
	if code != 0 {
		t.Fatalf("tools in the ci image (exit %d):\n%s", code, out)
	}
	for _, want := range []string{"posix-sh\n", "bash 5\n", "git version ", "ca-bundle\n", "\n0\n", "\n1\n", "forgectx " + shipVersion} {
		if !strings.Contains(out, want) {
			t.Errorf("ci image output lacks %q:\n%s", want, out)
		}
	}
}

// componentInput is `$[[ inputs.NAME ]]` in the component's job.
var componentInput = regexp.MustCompile(`\$\[\[\s*inputs\.([a-z-]+)\s*\]\]`)

// renderComponent interpolates templates/forgectx.yml with inputs as GitLab does on include:
// each `$[[ inputs.X ]]` becomes the given value, else the input's default; a required input
// left out fails the test, as it fails GitLab's pipeline creation. It returns the job's name
// and the job.
func renderComponent(t *testing.T, inputs map[string]string) (string, componentJob) {
	t.Helper()
	spec, _ := loadComponent(t)
	for name := range inputs {
		if _, ok := spec.Spec.Inputs[name]; !ok {
			t.Fatalf("input %q is not a component input", name)
		}
	}
	raw := readFile(t, filepath.Join(root, componentPath))
	_, body, _ := strings.Cut(raw, "\n---\n")
	body = componentInput.ReplaceAllStringFunc(body, func(m string) string {
		name := componentInput.FindStringSubmatch(m)[1]
		if v, ok := inputs[name]; ok {
			return v
		}
		in := spec.Spec.Inputs[name]
		if in.Default == nil {
			t.Fatalf("required input %q was not given", name)
		}
		return *in.Default
	})
	jobs := map[string]componentJob{}
	must(t, yaml.Unmarshal([]byte(body), &jobs))
	if len(jobs) != 1 {
		t.Fatalf("the rendered component has jobs %v, want one", sortedKeys(jobs))
	}
	name := sortedKeys(jobs)[0]
	return name, jobs[name]
}

// exampleGitLabInputs is the component include of examples/gitlab/.gitlab-ci.yml.
func exampleGitLabInputs(t *testing.T) map[string]string {
	t.Helper()
	var p struct {
		Include []struct {
			Component string            `yaml:"component"`
			Inputs    map[string]string `yaml:"inputs"`
		} `yaml:"include"`
	}
	must(t, yaml.Unmarshal([]byte(readFile(t, filepath.Join(root, "examples", "gitlab", ".gitlab-ci.yml"))), &p))
	if len(p.Include) != 1 || !strings.HasPrefix(p.Include[0].Component, "$CI_SERVER_FQDN/forgectx/forgectx/forgectx@") {
		t.Fatalf("examples/gitlab/.gitlab-ci.yml includes %+v, want the forgectx component", p.Include)
	}
	return p.Include[0].Inputs
}

// TestGitLabExampleRunsInTheCIImage: examples/gitlab as its README says — .gitlab-ci.yml, and
// triage.yml, skip-if-labelled.sh and agent.sh in .gitlab/forgectx/ — run as GitLab's Docker
// executor runs the component's job: the job script, interpolated from the example's include
// inputs and the component's defaults, inside the built ci image (buildah, offline) as the
// image's default user, in the project directory, with GitLab's predefined variables for a
// merge request pipeline and the project's two CI/CD variables. No input names an agent UID,
// an immutability mode or a capability: the defaults must work.
func TestGitLabExampleRunsInTheCIImage(t *testing.T) {
	t.Parallel() // subprocess-bound: runs beside the other slow ship tests
	ctr := ciContainer(t)
	inputs := exampleGitLabInputs(t)
	for _, k := range []string{"agent-uid", "agent-gid", "immutability"} {
		if _, ok := inputs[k]; ok {
			t.Fatalf("the example sets %s; the defaults must do", k)
		}
	}
	jobName, job := renderComponent(t, inputs)
	if jobName != "forgectx" || job.Image.Name != "ghcr.io/forgectx/forgectx:"+inputs["version"]+"-ci" {
		t.Errorf("job %q runs image %q, want forgectx in ghcr.io/forgectx/forgectx:%s-ci", jobName, job.Image.Name, inputs["version"])
	}
	for _, c := range []struct {
		name, labels string
		skip         bool
	}{{"proceed: the merge request is not labelled no-agent", "bug,priority::high", false}, {"skip: the merge request is labelled no-agent", "bug,no-agent", true}} {
		t.Run(c.name, func(t *testing.T) {
			f := newGitLabFake(t)
			dir := t.TempDir()
			project := filepath.Join(dir, "widgets")
			must(t, os.MkdirAll(project, 0o755))
			must(t, os.WriteFile(filepath.Join(project, ".gitlab-ci.yml"), []byte(readFile(t, filepath.Join(root, "examples", "gitlab", ".gitlab-ci.yml"))), 0o644))
			copyExample(t, "gitlab", project, ".gitlab/forgectx", "triage.yml", "skip-if-labelled.sh", "agent.sh")
			reachableByAgent(t, filepath.Join(project, ".gitlab", "forgectx"), filepath.Join(project, ".gitlab", "forgectx"))
			must(t, os.Chmod(filepath.Join(project, ".gitlab", "forgectx"), 0o755))
			const projectDir = "/builds/acme/platform/widgets"
			vars := map[string]string{
				// GitLab's predefined variables for merge request !7's pipeline.
				"CI": "true", "GITLAB_CI": "true", "CI_SERVER_URL": f.URL(), "CI_API_V4_URL": f.URL() + "/api/v4",
				"CI_PROJECT_PATH": "Acme/Platform/widgets", "CI_PROJECT_DIR": projectDir, "CI_PIPELINE_SOURCE": "merge_request_event",
				"CI_MERGE_REQUEST_IID": "7", "CI_MERGE_REQUEST_LABELS": c.labels, "CI_JOB_ID": "4242",
				"CI_JOB_URL": "https://gitlab.example.com/Acme/Platform/widgets/-/jobs/4242", "CI_COMMIT_SHA": "6dcb09b5b57875f334f61aebed695e2e4193db5e",
				"CI_JOB_TOKEN": "glcbt-shipJobToken0123456789",
				// The project's CI/CD variables the example asks for.
				"FORGECTX_TOKEN": gitlabToken, "ANTHROPIC_API_KEY": exampleModelKey,
			}
			for k, v := range job.Variables {
				vars[k] = v
			}
			args := []string{"run", "--isolation", "chroot", "--volume", project + ":" + projectDir, "--workingdir", projectDir}
			for _, k := range sortedKeys(vars) {
				args = append(args, "--env", k+"="+vars[k])
			}
			// GitLab's runner starts the job with the image's bash when it has one.
			args = append(args, ctr, "--", "bash", "-c", strings.Join(job.Script, "\n"))
			out, code := buildah(t, 5*time.Minute, args...)
			t.Log(out)
			if code != 0 {
				t.Fatalf("the job script exited %d in the ci image", code)
			}
			checkFinished(t, f, nil, c.skip, "", "glci-4242-1")
			if got := methods(f.Writes()); !reflect.DeepEqual(got, []string{"POST", "PUT", "POST"}) {
				t.Errorf("note writes = %v, want start POST, completion PUT, receipt POST", got)
			}
			dotenv := readFile(t, filepath.Join(project, "forgectx.env"))
			if c.skip {
				if dotenv != "reason=labelled no-agent\nskipped=true\nFORGECTX_STATUS=skipped\n" {
					t.Errorf("dotenv report = %q", dotenv)
				}
				if strings.Contains(out, "agent: uid") {
					t.Error("the agent ran although the pre-script skipped it")
				}
				return
			}
			ctxDir := regexp.MustCompile(`(?m)^FORGECTX_CONTEXT_DIR=(/tmp/\S+)$`).FindStringSubmatch(dotenv)
			if ctxDir == nil || !strings.HasPrefix(dotenv, "skipped=false\nFORGECTX_STATUS=success\nFORGECTX_CONTEXT_DIR=") {
				t.Errorf("dotenv report = %q, want skipped=false, FORGECTX_STATUS=success and the context directory", dotenv)
			}
			// 65532: the component's default agent as root, in the ownership mode auto picked.
			// checkAgentReport refuses every forge credential name, CI_JOB_TOKEN included.
			checkAgentReport(t, out, gitlabToken, "65532")
			if strings.Contains(out, "glcbt-shipJobToken") {
				t.Error("the job log carries CI_JOB_TOKEN's value")
			}
		})
	}
}
