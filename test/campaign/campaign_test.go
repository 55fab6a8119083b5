// Package campaign runs scripts/hostile-campaign.sh against a freshly built forgectx as part of
// the test suite, and measures the peak memory of the tries that feed an endless input.
package campaign

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// tools the campaign needs beyond coreutils' basics; a missing one skips the test with a
// one-line notice.
var tools = []string{"bash", "timeout", "mkfifo", "head", "tr", "grep", "sed"}

// built is the one forgectx binary both tests use (built once: the build is most of the cost).
var built struct {
	once      sync.Once
	bin, repo string
	err       error
	skip      string
	dir       string
}

// build compiles cmd/forgectx into a temporary directory, once per test binary.
func build(t *testing.T) (bin, repo string) {
	t.Helper()
	built.once.Do(func() {
		repo, err := filepath.Abs("../..")
		if err != nil {
			built.err = err
			return
		}
		goBin, err := exec.LookPath("go")
		if err != nil {
			built.skip = "campaign: no go command on PATH to build forgectx with: the hostile campaign is skipped"
			return
		}
		if built.dir, err = os.MkdirTemp("", "forgectx-campaign-"); err != nil {
			built.err = err
			return
		}
		bin := filepath.Join(built.dir, "forgectx")
		cmd := exec.Command(goBin, "build", "-buildvcs=false", "-o", bin, "./cmd/forgectx")
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		built.bin, built.repo = bin, repo
	})
	switch {
	case built.skip != "":
		t.Skip(built.skip)
	case built.err != nil:
		t.Fatal(built.err)
	}
	return built.bin, built.repo
}

// TestMain removes the shared build.
func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// endlessListing answers every request with a JSON comment listing whose one body never
// ends (it is cut at 300 MiB): a response must be refused at its bound while streaming.
func endlessListing() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if _, err := w.Write([]byte(`[{"id":1,"body":"`)); err != nil {
			return
		}
		chunk := bytes.Repeat([]byte("a"), 1<<20)
		for i := 0; i < 300; i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		_, _ = w.Write([]byte(`"}]`))
	}))
}

// silentForge accepts every request and never answers it.
func silentForge() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
}

// TestHostileCampaign runs every try of the campaign: it fails on any try whose outcome is
// not the expected one — a leaked token, an escape sequence on stderr, a hang (timeout), a
// signal not obeyed within 2 s, a read past its memory limit.
func TestHostileCampaign(t *testing.T) {
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("campaign: %s not found: the hostile campaign is skipped", tool)
		}
	}
	bin, repo := build(t)
	big, silent := endlessListing(), silentForge()
	defer big.Close()
	defer silent.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(repo, "scripts", "hostile-campaign.sh"), bin)
	cmd.Env = append(os.Environ(), "FORGECTX_CAMPAIGN_API_BIG="+big.URL, "FORGECTX_CAMPAIGN_API_SILENT="+silent.URL)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	var failed []string
	for _, line := range strings.Split(stdout.String(), "\n") {
		if strings.HasSuffix(line, "| FAIL |") {
			failed = append(failed, line)
		}
	}
	t.Logf("campaign: %s in %s", lastLine(stdout.String()), time.Since(start).Round(time.Second))
	if err != nil || len(failed) > 0 {
		t.Fatalf("campaign: %v; unexpected outcomes:\n%s\nstderr:\n%s", err, strings.Join(failed, "\n"), stderr.String())
	}
	if !strings.Contains(stdout.String(), "SIGTERM to `status reconcile` waiting on a silent forge") ||
		!strings.Contains(stdout.String(), "against an endless comment listing") {
		t.Fatalf("campaign: the loopback-forge tries did not run:\n%s", stderr.String())
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// peakRSS runs bin with args and stdin, and returns its exit code, stderr and peak resident
// memory in MiB (the child's rusage Maxrss).
func peakRSS(t *testing.T, bin string, env []string, stdin string, args ...string) (int, string, float64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	if stdin != "" {
		f, err := os.Open(stdin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdin = f
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	_ = cmd.Run()
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Skip("campaign: no rusage on this platform")
	}
	return cmd.ProcessState.ExitCode(), stderr.String(), float64(ru.Maxrss) / 1024 // Linux: KiB
}

// TestEndlessInputsStayWithinMemory measures the peak memory of the endless inputs: stdin
// /dev/zero as an acquisition stops at its first byte, and an endless comment of a forge
// listing stops at the 1 MiB per-comment bound with its named error.
func TestEndlessInputsStayWithinMemory(t *testing.T) {
	bin, _ := build(t)
	dir := t.TempDir()
	profile := filepath.Join(dir, "profile.json")
	if err := os.WriteFile(profile, []byte(`{"entity_kind":"work_item","included_sources":["comments","entity"],"record_selection":"oldest","check_log_selection":"none","bounds":{"max_records_per_source":5,"max_source_bytes":4096,"max_record_bytes":1024,"max_log_bytes":1024,"max_metadata_string_bytes":64,"max_labels":5}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stderr, mib := peakRSS(t, bin, nil, "/dev/zero", "snapshot", "--from-acquisition", "-", "--profile", profile, "--category", "observation", "--out", filepath.Join(dir, "out"))
	t.Logf("snapshot --from-acquisition - < /dev/zero: exit %d, peak RSS %.1f MiB", code, mib)
	if code != 1 || mib > 64 {
		t.Errorf("exit %d, peak %.1f MiB, stderr %q; want exit 1 within 64 MiB", code, mib, stderr)
	}
	// A regular file of NUL bytes under the 1 GiB bound (sparse: no disk used): the first byte
	// is a syntax error, final at once; the document is not read whole to rank it.
	zeros := filepath.Join(dir, "zeros.json")
	if err := os.WriteFile(zeros, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(zeros, 900<<20); err != nil {
		t.Fatal(err)
	}
	code, stderr, mib = peakRSS(t, bin, nil, "", "snapshot", "--from-acquisition", zeros, "--profile", profile, "--category", "observation", "--out", filepath.Join(dir, "out-zeros"))
	t.Logf("snapshot --from-acquisition <900 MiB regular file of NUL bytes>: exit %d, peak RSS %.1f MiB", code, mib)
	if code != 1 || !strings.Contains(stderr, "invalid character") || mib > 64 {
		t.Errorf("exit %d, peak %.1f MiB, stderr %q; want exit 1 with the syntax error within 64 MiB", code, mib, stderr)
	}
	big := endlessListing()
	defer big.Close()
	code, stderr, mib = peakRSS(t, bin, []string{"GITHUB_TOKEN=campaign-token-value-0123456789"}, "", "status", "reconcile", "--agent", "triage", "--number", "7", "--repo", "o/r", "--comment-author", "bot", "--api-url", big.URL)
	t.Logf("status reconcile against a 300 MiB listing: exit %d, peak RSS %.1f MiB", code, mib)
	// The listing is decoded one comment at a time under its 1 MiB bound, never as a whole
	// 64 MiB page (which held about 343 MiB): the peak stays near the process's base.
	if code != 1 || !strings.Contains(stderr, "a comment of the answer is over the 1048576-byte bound") || mib > 64 {
		t.Errorf("exit %d, peak %.1f MiB, stderr %q; want exit 1 naming the 1048576-byte comment bound within 64 MiB", code, mib, stderr)
	}
}
