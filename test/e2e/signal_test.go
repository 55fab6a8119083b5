package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/run"
	"github.com/forgectx/forgectx/internal/status"
)

// helperConfig is what the parent test hands the re-executed helper process.
type helperConfig struct {
	Env     map[string]string
	Harness string
	// Hold names a lifecycle phase (run.Options.PhaseHook): at its start the helper writes
	// HoldFile and waits for the run's context to end (the signal) before the phase runs.
	Hold, HoldFile string
	// StateDir overrides the stage state root (the two-process test shares one).
	StateDir string
}

// TestHelperProcess is not a test: re-executed by TestRunSIGTERMMidAgent with
// FORGECTX_E2E_HELPER=1, it is `forgectx run` as its own process, cancelled by SIGTERM the way
// cmd/forgectx's main is (signal.NotifyContext), exiting with the run's exit code.
func TestHelperProcess(t *testing.T) {
	if os.Getenv("FORGECTX_E2E_HELPER") != "1" {
		t.Skip("helper process for TestRunSIGTERMMidAgent")
	}
	var cfg helperConfig
	b, err := os.ReadFile(os.Getenv("FORGECTX_E2E_HELPER_CONFIG"))
	if err == nil {
		err = json.Unmarshal(b, &cfg)
	}
	if err != nil {
		os.Exit(3)
	}
	w := &world{env: cfg.Env, jobLog: &syncBuffer{}, logBuf: &syncBuffer{}}
	o := w.options()
	o.HarnessPath = cfg.Harness
	// As in cmd/forgectx: the structured log and the job log both go to stderr.
	o.Stdout, o.Stderr, o.Log = os.Stderr, os.Stderr, zerolog.New(os.Stderr)
	if cfg.StateDir != "" {
		o.StateDir = cfg.StateDir
	}
	if cfg.Hold != "" {
		o.PhaseHook = func(ctx context.Context, phase string) {
			if phase != cfg.Hold {
				return
			}
			if err := os.WriteFile(cfg.HoldFile, []byte(phase), 0o600); err != nil {
				os.Exit(5)
			}
			<-ctx.Done()
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	res, err := run.Run(ctx, o)
	stop()
	switch {
	case run.IsConfigError(err):
		os.Exit(run.ExitConfig)
	case res == nil:
		os.Exit(4)
	}
	os.Exit(res.ExitCode())
}

// distinctiveBody is planted in an admitted comment: the agent sees it, no log line may.
const distinctiveBody = "zebra-quartz-7731 distinctive comment text"

// SIGTERM or SIGINT mid-agent (a cancelled GitHub Actions job; the runner sends SIGINT first,
// then SIGTERM): the agent's process group receives SIGTERM, the status comment becomes
// ⚠️ cancelled, a cancelled receipt is posted, every tree is removed and forgectx exits 1. All
// of forgectx's stderr (structured log and job log) is then searched for the forge token,
// the planted forge credentials, the registered secret and a distinctive comment body: none
// may appear.
func TestRunSIGTERMMidAgent(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			testSignal(t, sig, worldOpts{agentMode: "sleep"}, "the run was cancelled while the agent ran", "agent")
		})
	}
}

// SIGTERM or SIGINT while the pre-script runs: the script's process group gets SIGTERM, then SIGKILL
// after the grace (pkg/prescript), ⚠️ cancelled, a cancelled receipt over the index the script was shown,
// nothing relayed (no decision), no agent, no tree.
func TestRunSIGTERMMidPrescript(t *testing.T) {
	pre := `sleep 30 &
echo $! > "{{DIR}}/agent-out/sleep.pid"
echo started > "{{DIR}}/agent-out/started"
wait
`
	// The runner sends SIGINT first, then SIGTERM: either one alone cancels the same way.
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			testSignal(t, sig, worldOpts{pre: pre}, "the run was cancelled", "pre-script")
		})
	}
}

// SIGTERM or SIGINT while the post-script runs (the agent finished): the post-script's group
// is stopped, ⚠️ cancelled, a cancelled receipt, every tree removed.
func TestRunSignalMidPostscript(t *testing.T) {
	post := `sleep 30 &
echo $! > "{{DIR}}/agent-out/sleep.pid"
echo started > "{{DIR}}/agent-out/post-started"
wait
`
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			testSignal(t, sig, worldOpts{post: post}, "the run was cancelled while the post-script ran", "post-script")
		})
	}
}

// testSignal runs forgectx run as its own process and signals it once the phase (agent,
// pre-script or post-script) has started.
func testSignal(t *testing.T, sig syscall.Signal, wo worldOpts, detail string, phase string) {
	agent := phase == "agent"
	w := newWorld(t, wo)
	w.sc.Comments[0].Body = w.sc.Comments[0].Body + " " + distinctiveBody
	want := w.expectedIndex()
	w.expectStartCreate()
	w.expectAcquisition()
	w.expectFinish(status.Cancelled, detail, run.StatusCancelled, want)

	cmd, stderr := startHelper(t, w, helperConfig{})
	deadline := time.Now().Add(30 * time.Second)
	startedFile := "started"
	if phase == "post-script" {
		startedFile = "post-started"
	}
	for !exists(filepath.Join(w.out, startedFile)) {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("the agent never started; helper stderr:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The agent saw the planted comment (so the log check below is not vacuous).
	if agent && !strings.Contains(readFile(t, filepath.Join(w.out, "all-files")), distinctiveBody) {
		t.Fatal("test premise: the agent's snapshot lacks the planted comment body")
	}
	// Only forgectx gets the signal, as from the runner; it must pass it on to the agent.
	must(t, cmd.Process.Signal(sig))
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != run.ExitFailed {
		t.Fatalf("helper exit = %v, want exit %d; stderr:\n%s", err, run.ExitFailed, stderr.String())
	}
	if agent && !exists(filepath.Join(w.out, "term")) {
		t.Error("the agent did not receive SIGTERM")
	}
	if phase != "post-script" && exists(filepath.Join(w.out, "done")) {
		t.Error("the agent ran to completion despite the cancellation")
	}
	if phase == "post-script" {
		pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(w.out, "sleep.pid"))))
		if err != nil {
			t.Fatal(err)
		}
		if alive(pid) {
			t.Errorf("the post-script's child %d outlived the run", pid)
		}
	}
	if phase == "pre-script" {
		pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(w.out, "sleep.pid"))))
		if err != nil {
			t.Fatal(err)
		}
		if alive(pid) {
			t.Errorf("the pre-script's child %d outlived the run", pid)
		}
		if exists(filepath.Join(w.out, "env")) {
			t.Error("the agent started after a cancelled pre-script")
		}
		if out := readFile(t, w.env["GITHUB_OUTPUT"]); out != runOutputs("cancelled", "") {
			t.Errorf("GITHUB_OUTPUT = %q; a cancelled pre-script reached no decision (only the run's status is relayed)", out)
		}
	}
	w.assertNoTrees()

	all := stderr.String()
	if !strings.Contains(all, `"phase":"cleanup"`) || !strings.Contains(all, `"status":"cancelled"`) {
		t.Fatalf("stderr lacks the structured log of the run:\n%s", all)
	}
	assertNothingPlanted(t, w, all)
}

// startHelper starts `forgectx run` over w as its own process (TestHelperProcess) with cfg
// (its Env and Harness filled from w).
func startHelper(t *testing.T, w *world, cfg helperConfig) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cfg.Env, cfg.Harness = w.env, filepath.Join(w.dir, "harness.yml")
	cfgPath := filepath.Join(w.dir, "helper.json")
	b, _ := json.Marshal(cfg)
	must(t, os.WriteFile(cfgPath, b, 0o600))
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "FORGECTX_E2E_HELPER=1", "FORGECTX_E2E_HELPER_CONFIG="+cfgPath)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	must(t, cmd.Start())
	return cmd, stderr
}

// alive reports whether pid is a running (not zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil && !errors.Is(err, os.ErrNotExist)
	}
	// The state follows the parenthesised command name.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// Two runs at once sharing one --state-dir (two jobs on one runner host): each creates its
// stage under the shared state root (which neither has created yet), neither scavenges the
// other's live tree, both finish with their own receipt, and the state root is left empty.
func TestRunConcurrentRunsShareStateDir(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	worlds := []*world{newWorld(t, worldOpts{}), newWorld(t, worldOpts{})}
	opts := make([]run.Options, len(worlds))
	for i, w := range worlds {
		want := w.expectedIndex()
		w.expectStartCreate()
		w.expectAcquisition()
		w.expectFinish(status.Success, "", run.StatusSuccess, want)
		opts[i] = w.options()
		opts[i].StateDir = state
	}
	errs := make([]error, len(worlds))
	results := make([]*run.Result, len(worlds))
	done := make(chan int)
	for i := range worlds {
		go func(i int) {
			results[i], errs[i] = runWith(opts[i])
			done <- i
		}(i)
	}
	for range worlds {
		<-done
	}
	for i, w := range worlds {
		if errs[i] != nil || results[i] == nil || results[i].Status != run.StatusSuccess || !results[i].ReceiptPosted {
			t.Errorf("run %d = %+v, %v\n%s", i, results[i], errs[i], w.logBuf.String())
		}
		if results[i] != nil && results[i].Scavenged != 0 {
			t.Errorf("run %d scavenged %d trees: the other run's live tree is not abandoned", i, results[i].Scavenged)
		}
		trees, err := os.ReadDir(w.env["RUNNER_TEMP"])
		must(t, err)
		for _, e := range trees {
			if strings.HasPrefix(e.Name(), "forgectx-ctx-") {
				t.Errorf("run %d left tree %s", i, e.Name())
			}
		}
	}
	ents, err := os.ReadDir(state)
	if err != nil || len(ents) != 0 {
		t.Errorf("shared state dir after both runs: %v, %v; want it empty", ents, err)
	}
}
