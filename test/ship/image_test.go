package ship

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/test/testnotice"
)

// TestImageBuildsOfflineAndRuns builds the Dockerfile's `prebuilt` target with buildah — vfs
// storage, chroot isolation, no Docker engine, no network: the binary is built on the host and
// staged by scripts/image-rootfs.sh — then runs `forgectx version` and `forgectx demo` inside
// the image as its numeric non-root user, and checks the image's configuration (user, entry
// point, OCI labels, no shell).
func TestImageBuildsOfflineAndRuns(t *testing.T) {
	t.Parallel() // subprocess-bound: runs beside the other slow ship tests
	buildah, err := exec.LookPath("buildah")
	if err != nil {
		testnotice.Skip(t, "container image tests (buildah)", "buildah is not installed (Debian: apt-get install -y buildah; .ci/run installs it when it runs as root)")
	}
	if os.Geteuid() != 0 {
		testnotice.Skip(t, "container image tests (buildah)", "buildah with vfs storage and chroot isolation needs root here (rootless needs subuid mappings)")
	}
	bin := forgectxBin(t)
	dir := t.TempDir()
	ctxDir := filepath.Join(dir, "context")
	if out, code := runCmd(t, time.Minute, root, nil, "bash", filepath.Join(root, "scripts", "image-rootfs.sh"), bin, ctxDir); code != 0 {
		t.Fatalf("image-rootfs.sh: %s", out)
	}
	store := []string{"--storage-driver", "vfs", "--root", filepath.Join(dir, "storage"), "--runroot", filepath.Join(dir, "runroot")}
	bah := func(timeout time.Duration, args ...string) (string, int) {
		t.Helper()
		return runCmd(t, timeout, dir, append(os.Environ(), "BUILDAH_ISOLATION=chroot"), buildah, append(append([]string{}, store...), args...)...)
	}
	t.Cleanup(func() { bah(time.Minute, "rm", "--all") })

	out, code := bah(5*time.Minute, "build", "--isolation", "chroot", "--pull-never", "--target", "prebuilt",
		"--build-arg", "VERSION=v0.0.0-ship", "-f", filepath.Join(root, "Dockerfile"), "-t", "localhost/forgectx:ship", ctxDir)
	if code != 0 {
		t.Fatalf("buildah build (exit %d):\n%s", code, out)
	}

	out, code = bah(time.Minute, "inspect", "--type", "image", "localhost/forgectx:ship")
	if code != 0 {
		t.Fatalf("buildah inspect: %s", out)
	}
	var img struct {
		OCIv1 struct {
			Config struct {
				User       string            `json:"User"`
				Entrypoint []string          `json:"Entrypoint"`
				Labels     map[string]string `json:"Labels"`
				Env        []string          `json:"Env"`
			} `json:"config"`
		} `json:"OCIv1"`
	}
	must(t, json.Unmarshal([]byte(out), &img))
	cfg := img.OCIv1.Config
	if cfg.User != "65532:65532" {
		t.Errorf("image user = %q, want the numeric non-root 65532:65532", cfg.User)
	}
	if strings.Join(cfg.Entrypoint, " ") != "/usr/local/bin/forgectx" {
		t.Errorf("entrypoint = %v", cfg.Entrypoint)
	}
	for _, l := range []string{"org.opencontainers.image.title", "org.opencontainers.image.source", "org.opencontainers.image.description", "org.opencontainers.image.revision", "org.opencontainers.image.created"} {
		if cfg.Labels[l] == "" {
			t.Errorf("OCI label %s is missing", l)
		}
	}
	if cfg.Labels["org.opencontainers.image.version"] != "v0.0.0-ship" {
		t.Errorf("version label = %q, want the VERSION build arg", cfg.Labels["org.opencontainers.image.version"])
	}

	ctr, code := bah(time.Minute, "from", "--pull-never", "localhost/forgectx:ship")
	if code != 0 {
		t.Fatalf("buildah from: %s", ctr)
	}
	ctr = strings.TrimSpace(ctr)
	// What the image holds, before anything ran in it: the CA bundle and the binary.
	mnt, code := bah(time.Minute, "mount", ctr)
	if code != 0 {
		t.Fatalf("buildah mount: %s", mnt)
	}
	mnt = strings.TrimSpace(mnt)
	var files []string
	must(t, filepath.Walk(mnt, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			rel, _ := filepath.Rel(mnt, p)
			files = append(files, rel)
		}
		return nil
	}))
	if strings.Join(files, " ") != "etc/ssl/certs/ca-certificates.crt usr/local/bin/forgectx" {
		t.Errorf("image files = %v, want the CA bundle and the binary only", files)
	}
	if fi, err := os.Stat(filepath.Join(mnt, "tmp")); err != nil || fi.Mode()&os.ModeSticky == 0 || fi.Mode().Perm() != 0o777 {
		t.Errorf("/tmp must be mode 1777: %v %v", fi.Mode(), err)
	}
	runIn := func(args ...string) (string, int) {
		t.Helper()
		return bah(2*time.Minute, append([]string{"run", "--isolation", "chroot", ctr, "--"}, args...)...)
	}
	if out, code := runIn("/usr/local/bin/forgectx", "version"); code != 0 || !strings.HasPrefix(out, "forgectx ") {
		t.Errorf("forgectx version in the image (exit %d): %s", code, out)
	}
	out, code = runIn("/usr/local/bin/forgectx", "demo")
	if code != 0 {
		t.Fatalf("forgectx demo in the image (exit %d):\n%s", code, out)
	}
	for _, want := range []string{"index.json sha256:", "tree: removed", "redact.github-token"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	// No shell.
	if _, code := runIn("/bin/sh", "-c", "true"); code == 0 {
		t.Error("the image has /bin/sh; it should need no shell")
	}
}
