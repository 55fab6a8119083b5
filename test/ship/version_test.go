package ship

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// versionedFiles copies what scripts/check-version.sh reads into a fresh directory, so a test
// can plant a disagreement without touching the checkout.
func versionedFiles(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, rel := range []string{"VERSION", "README.md", "action.yml", "scripts/check-version.sh"} {
		copyFile(t, filepath.Join(root, rel), filepath.Join(dir, rel))
	}
	for _, sub := range []string{"docs", "examples", "templates"} {
		must(t, filepath.WalkDir(filepath.Join(root, sub), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !d.Type().IsRegular() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			copyFile(t, p, filepath.Join(dir, rel))
			return nil
		}))
	}
	return dir
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	must(t, err)
	fi, err := os.Stat(from)
	must(t, err)
	must(t, os.MkdirAll(filepath.Dir(to), 0o755))
	must(t, os.WriteFile(to, b, fi.Mode().Perm()))
}

// TestVersionFileIsWhatDocsAndReleaseName: the VERSION file is the one place the release is
// named. scripts/check-version.sh accepts the checkout as it is and the tag equal to VERSION;
// it refuses another tag, and a doc, example or template that installs another release (each
// install form: the action's @ref and version input, the component's @X.Y.Z, the image tag, the
// archive name, go install @ref, the remote include's ref).
func TestVersionFileIsWhatDocsAndReleaseName(t *testing.T) {
	version := releaseVersion(t)
	script := filepath.Join(root, "scripts", "check-version.sh")
	if out, code := runCmd(t, time.Minute, root, nil, "bash", script, version); code != 0 {
		t.Fatalf("check-version.sh %s on the checkout: exit %d\n%s", version, code, out)
	}
	if out, code := runCmd(t, time.Minute, root, nil, "bash", script, "v999.0.0"); code != 1 || !strings.Contains(out, "tag v999.0.0 is not the VERSION file's "+version) {
		t.Errorf("check-version.sh v999.0.0: exit %d, want 1 naming both versions\n%s", code, out)
	}
	bare := strings.TrimPrefix(version, "v")
	plants := []struct{ file, from, to string }{
		{"README.md", "forgectx/forgectx@" + version, "forgectx/forgectx@v0.9.9"},
		{"README.md", "forgectx/forgectx/forgectx@" + bare, "forgectx/forgectx/forgectx@0.9.9"},
		{"README.md", "forgectx/forgectx:" + version, "forgectx/forgectx:v0.9.9"},
		{"README.md", "cmd/forgectx@" + version, "cmd/forgectx@v0.9.9"},
		{"README.md", "--branch " + version, "--branch v0.9.9"},
		{"docs/ship.md", "forgectx_" + version + "_", "forgectx_v0.9.9_"},
		{"docs/ship.md", "forgectx/forgectx/" + version + "/templates", "forgectx/forgectx/v0.9.9/templates"},
		{"examples/forgejo/forgectx.yml", "version: " + version, "version: v0.9.9"},
		{"templates/forgectx.yml", "@" + bare + " → " + version, "@" + bare + " → v0.9.9"},
	}
	for _, p := range plants {
		t.Run(p.file+" "+p.to, func(t *testing.T) {
			dir := versionedFiles(t)
			f := filepath.Join(dir, p.file)
			s := readFile(t, f)
			if !strings.Contains(s, p.from) {
				t.Fatalf("%s does not contain %q any more: update the plant", p.file, p.from)
			}
			must(t, os.WriteFile(f, []byte(strings.Replace(s, p.from, p.to, 1)), 0o644))
			out, code := runCmd(t, time.Minute, dir, nil, "bash", filepath.Join(dir, "scripts", "check-version.sh"))
			if code != 1 || !strings.Contains(out, p.file+":") || !strings.Contains(out, "names v0.9.9") {
				t.Errorf("exit %d, want 1 naming %s and v0.9.9\n%s", code, p.file, out)
			}
		})
	}
	t.Run("malformed VERSION", func(t *testing.T) {
		dir := versionedFiles(t)
		must(t, os.WriteFile(filepath.Join(dir, "VERSION"), []byte("1.0\n"), 0o644))
		if out, code := runCmd(t, time.Minute, dir, nil, "bash", filepath.Join(dir, "scripts", "check-version.sh")); code != 1 || !strings.Contains(out, "VERSION: must be one line vX.Y.Z") {
			t.Errorf("exit %d, want 1 naming the rule\n%s", code, out)
		}
	})
}

// TestReleaseWorkflowChecksVersionFirst: the release workflow runs check-version.sh with the
// pushed tag before it builds or publishes anything, so a tag other than VERSION (or docs naming
// another release) never becomes a release.
func TestReleaseWorkflowChecksVersionFirst(t *testing.T) {
	var wf struct {
		Jobs map[string]struct {
			Steps []actionStep `yaml:"steps"`
		} `yaml:"jobs"`
	}
	must(t, yaml.Unmarshal([]byte(readFile(t, filepath.Join(root, ".github", "workflows", "release.yml"))), &wf))
	check, build, publish := -1, -1, -1
	for i, s := range wf.Jobs["binaries"].Steps {
		switch {
		case strings.Contains(s.Run, "scripts/check-version.sh"):
			if s.Run != `bash scripts/check-version.sh "$VERSION"` || s.Env["VERSION"] != "${{ github.ref_name }}" {
				t.Errorf("the check step runs %q with VERSION=%q, want the script given the tag", s.Run, s.Env["VERSION"])
			}
			check = i
		case strings.Contains(s.Run, "scripts/release-build.sh"):
			build = i
		case strings.Contains(s.Run, "gh release create"):
			publish = i
		}
	}
	if check < 0 || build < 0 || publish < 0 || check > build || check > publish {
		t.Fatalf("release.yml binaries steps: check-version at %d, build at %d, publish at %d: the check must come first", check, build, publish)
	}
}

// TestGitLabReleaseChecksVersionFirst: the catalog release's binaries job (X.Y.Z tags) checks
// the tag against VERSION before it builds.
func TestGitLabReleaseChecksVersionFirst(t *testing.T) {
	var p map[string]any
	must(t, yaml.Unmarshal([]byte(readFile(t, filepath.Join(root, ".gitlab-ci.yml"))), &p))
	job, _ := p["binaries"].(map[string]any)
	script, _ := job["script"].([]any)
	if len(script) < 2 || script[0] != `bash scripts/check-version.sh "v$CI_COMMIT_TAG"` || !strings.Contains(fmt.Sprint(script[1]), "scripts/release-build.sh") {
		t.Fatalf(".gitlab-ci.yml binaries script = %q, want check-version.sh with the tag before release-build.sh", script)
	}
}

// TestReleaseArchiveShipsLicense: every release archive holds the binary, the Apache-2.0
// LICENSE and the README (release-build.sh fails rather than ship an archive without the
// licence), and the README names the licence.
func TestReleaseArchiveShipsLicense(t *testing.T) {
	t.Parallel() // shares the release build with the other slow ship tests
	license := readFile(t, filepath.Join(root, "LICENSE"))
	if !strings.Contains(license, "Apache License\n                           Version 2.0, January 2004") {
		t.Fatalf("LICENSE is not the Apache License 2.0 text")
	}
	if !strings.Contains(readFile(t, filepath.Join(root, "README.md")), "Apache License 2.0") {
		t.Errorf("README.md does not name the licence")
	}
	dist := shipRelease(t)
	f, err := os.Open(filepath.Join(dist, fmt.Sprintf("forgectx_%s_%s_%s.tar.gz", shipVersion, runtime.GOOS, runtime.GOARCH)))
	must(t, err)
	defer f.Close()
	gz, err := gzip.NewReader(f)
	must(t, err)
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		must(t, err)
		names = append(names, h.Name)
		if h.Name == "LICENSE" {
			b, err := io.ReadAll(tr)
			must(t, err)
			if string(b) != license {
				t.Errorf("the archive's LICENSE differs from the repository's")
			}
		}
	}
	sort.Strings(names)
	if strings.Join(names, " ") != "LICENSE README.md forgectx" {
		t.Errorf("archive holds %v, want LICENSE, README.md and forgectx", names)
	}
}

// TestReleaseBuildRefusesWithoutLicense: a checkout without LICENSE cannot produce an archive
// that silently ships none.
func TestReleaseBuildRefusesWithoutLicense(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "scripts"), 0o755))
	copyFile(t, filepath.Join(root, "scripts", "release-build.sh"), filepath.Join(dir, "scripts", "release-build.sh"))
	copyFile(t, filepath.Join(root, "README.md"), filepath.Join(dir, "README.md"))
	// A stand-in go on PATH: this test is about the packaging step, not the compile.
	bin := filepath.Join(dir, "bin")
	must(t, os.MkdirAll(bin, 0o755))
	must(t, os.WriteFile(filepath.Join(bin, "go"), []byte("#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && { : > \"$2\"; exit 0; }; shift; done\n"), 0o755))
	path, _ := exec.LookPath("bash")
	env := append(os.Environ(), "PATH="+bin+":"+filepath.Dir(path)+":/usr/bin:/bin", "FORGECTX_PLATFORMS=linux/amd64", "SOURCE_DATE_EPOCH=0")
	out, code := runCmd(t, time.Minute, dir, env, "bash", filepath.Join(dir, "scripts", "release-build.sh"), "v0.0.1", filepath.Join(dir, "dist"))
	if code == 0 {
		t.Fatalf("release-build.sh without LICENSE exited 0:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "dist", "forgectx_v0.0.1_linux_amd64.tar.gz")); err == nil {
		t.Errorf("an archive was written without LICENSE")
	}
}
