package ship

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// release is a loopback release download server in the layout scripts/release-build.sh writes:
// <base>/<version>/forgectx_<version>_<os>_<arch>.tar.gz and checksums.txt, and GitHub's
// <base-without-/download>/latest/download/... alias.
type release struct {
	srv      *httptest.Server
	version  string
	files    map[string][]byte
	mu       sync.Mutex
	requests []string
}

func tarGz(t testing.TB, name string, content []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	must(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(content)), Typeflag: tar.TypeReg}))
	_, err := tw.Write(content)
	must(t, err)
	must(t, tw.Close())
	must(t, gz.Close())
	return buf.Bytes()
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// newRelease serves a release whose archive for this machine holds binary.
func newRelease(t *testing.T, version string, binary []byte) *release {
	t.Helper()
	r := &release{version: version, files: map[string][]byte{}}
	var sums strings.Builder
	for _, p := range []string{"darwin_amd64", "darwin_arm64", "linux_amd64", "linux_arm64"} {
		name := fmt.Sprintf("forgectx_%s_%s.tar.gz", version, p)
		content := []byte("#!/bin/sh\necho other platform\n")
		if p == runtime.GOOS+"_"+runtime.GOARCH {
			content = binary
		}
		r.files[name] = tarGz(t, "forgectx", content)
		fmt.Fprintf(&sums, "%s  %s\n", sha(r.files[name]), name)
	}
	r.files["checksums.txt"] = []byte(sums.String())
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.requests = append(r.requests, req.URL.Path)
		r.mu.Unlock()
		name := filepath.Base(req.URL.Path)
		dir := filepath.Dir(req.URL.Path)
		if dir != "/releases/download/"+version && dir != "/releases/latest/download" {
			http.NotFound(w, req)
			return
		}
		b, ok := r.files[name]
		if !ok {
			http.NotFound(w, req)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// serveShipRelease serves the shared release build (shipRelease) on loopback in GitHub's
// download layout and returns the download-url the action and install.sh take.
func serveShipRelease(t testing.TB) string {
	t.Helper()
	dist := shipRelease(t)
	srv := httptest.NewServer(http.StripPrefix("/releases/download/"+shipVersion+"/", http.FileServer(http.Dir(dist))))
	t.Cleanup(srv.Close)
	return srv.URL + "/releases/download"
}

func (r *release) asset() string {
	return fmt.Sprintf("forgectx_%s_%s_%s.tar.gz", r.version, runtime.GOOS, runtime.GOARCH)
}

func runInstall(t *testing.T, extraEnv []string, args ...string) (string, int, string) {
	t.Helper()
	binDir := filepath.Join(t.TempDir(), "bin")
	env := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TMPDIR=" + t.TempDir()}, extraEnv...)
	out, code := runCmd(t, time.Minute, root, env, "bash", append([]string{filepath.Join(root, "scripts", "install.sh"), "--bin-dir", binDir}, args...)...)
	return out, code, filepath.Join(binDir, "forgectx")
}

func TestInstallVerifiesSHA256(t *testing.T) {
	t.Parallel() // subprocess-bound: runs beside the other slow ship tests
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("SKIP: install.sh supports Linux and macOS runners")
	}
	binary := []byte("#!/bin/sh\necho forgectx v1.2.3\n")
	good := newRelease(t, "v1.2.3", binary)

	t.Run("a release archive whose digest matches checksums.txt is installed", func(t *testing.T) {
		out, code, bin := runInstall(t, nil, "--version", "v1.2.3", "--download-url", good.srv.URL+"/releases/download")
		if code != 0 {
			t.Fatalf("install.sh exited %d: %s", code, out)
		}
		if got := readFile(t, bin); got != string(binary) {
			t.Errorf("installed %q", got)
		}
		if fi, _ := os.Stat(bin); fi.Mode().Perm()&0o111 == 0 {
			t.Error("the installed binary is not executable")
		}
		if !strings.Contains(out, "sha256 "+sha(good.files[good.asset()])) {
			t.Errorf("install.sh does not report the verified digest: %s", out)
		}
	})
	t.Run("latest resolves through the latest/download alias", func(t *testing.T) {
		out, code, bin := runInstall(t, nil, "--version", "latest", "--download-url", good.srv.URL+"/releases/download")
		if code != 0 || readFile(t, bin) != string(binary) {
			t.Fatalf("install.sh latest exited %d: %s", code, out)
		}
	})
	t.Run("a pinned --sha256 that matches is accepted", func(t *testing.T) {
		out, code, _ := runInstall(t, nil, "--version", "v1.2.3", "--sha256", sha(good.files[good.asset()]), "--download-url", good.srv.URL+"/releases/download")
		if code != 0 {
			t.Fatalf("install.sh exited %d: %s", code, out)
		}
	})

	tampered := newRelease(t, "v1.2.3", binary)
	tampered.files[tampered.asset()] = tarGz(t, "forgectx", []byte("#!/bin/sh\necho evil\n"))
	fails := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{name: "an archive that does not match checksums.txt is refused", args: []string{"--version", "v1.2.3", "--download-url", tampered.srv.URL + "/releases/download"}, want: "verify: SHA-256 of " + tampered.asset()},
		{name: "a pinned --sha256 that differs from the release is refused", args: []string{"--version", "v1.2.3", "--sha256", strings.Repeat("0", 64), "--download-url", good.srv.URL + "/releases/download"}, want: "verify: --sha256 does not match"},
		{name: "a malformed --sha256 is refused", args: []string{"--version", "v1.2.3", "--sha256", "abc"}, want: "--sha256: must be 64 lowercase hexadecimal digits"},
		{name: "a version that is not a release is refused", args: []string{"--version", "main"}, want: "--version: must be vX.Y.Z, latest or source"},
		{name: "a missing release is a download failure", args: []string{"--version", "v9.9.9", "--download-url", good.srv.URL + "/releases/download"}, want: "download: "},
		{name: "an unsupported runner architecture is refused", env: []string{"RUNNER_ARCH=ARM"}, args: []string{"--version", "v1.2.3", "--download-url", good.srv.URL + "/releases/download"}, want: "runner architecture: ARM is not supported"},
		{name: "an unsupported runner OS is refused", env: []string{"RUNNER_OS=Windows"}, args: []string{"--version", "v1.2.3", "--download-url", good.srv.URL + "/releases/download"}, want: "runner OS: Windows is not supported"},
		{name: "an unknown argument is refused", args: []string{"--version", "v1.2.3", "--frobnicate"}, want: "unknown argument --frobnicate"},
	}
	for _, c := range fails {
		t.Run(c.name, func(t *testing.T) {
			out, code, bin := runInstall(t, c.env, c.args...)
			if code != 1 || !strings.Contains(out, c.want) {
				t.Fatalf("install.sh exited %d, want 1 with %q:\n%s", code, c.want, out)
			}
			if _, err := os.Stat(bin); err == nil {
				t.Error("a binary was installed despite the failure")
			}
		})
	}
}

// TestReleaseBuildInstallsThroughInstallScript: what scripts/release-build.sh publishes is what
// scripts/install.sh (and so the composite action) downloads and verifies, and the installed
// binary reports the release version.
func TestReleaseBuildInstallsThroughInstallScript(t *testing.T) {
	t.Parallel() // subprocess-bound: runs beside the other slow ship tests
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("SKIP: install.sh supports Linux and macOS runners")
	}
	dist := shipRelease(t) // release-build.sh v0.0.1 for this machine, shared with the other tests
	asset := fmt.Sprintf("forgectx_v0.0.1_%s_%s.tar.gz", runtime.GOOS, runtime.GOARCH)
	sums := readFile(t, filepath.Join(dist, "checksums.txt"))
	archive, err := os.ReadFile(filepath.Join(dist, asset))
	must(t, err)
	if sums != sha(archive)+"  "+asset+"\n" {
		t.Fatalf("checksums.txt = %q, want the archive's digest and name", sums)
	}
	srv := httptest.NewServer(http.StripPrefix("/releases/download/v0.0.1/", http.FileServer(http.Dir(dist))))
	defer srv.Close()
	out, code, bin := runInstall(t, nil, "--version", "v0.0.1", "--download-url", srv.URL+"/releases/download")
	if code != 0 {
		t.Fatalf("install.sh exited %d: %s", code, out)
	}
	if v, code := runCmd(t, time.Minute, root, nil, bin, "version"); code != 0 || strings.TrimSpace(v) != "forgectx v0.0.1" {
		t.Errorf("installed binary reports %q (exit %d)", v, code)
	}
}
