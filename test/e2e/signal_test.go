package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/forgectx/forgectx/pkg/run"
	"github.com/forgectx/forgectx/pkg/status"
)

// helperConfig is what the parent test hands the re-executed helper process.
type helperConfig struct {
	Env     map[string]string
	Harness string
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
	o.Stdout, o.Stderr = os.Stderr, os.Stderr
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	res, err := run.Run(ctx, o)
	stop()
	os.Stderr.WriteString(w.logBuf.String())
	switch {
	case run.IsConfigError(err):
		os.Exit(run.ExitConfig)
	case res == nil:
		os.Exit(4)
	}
	os.Exit(res.ExitCode())
}

// SIGTERM mid-agent (a cancelled GitHub Actions job): the agent's process group receives
// SIGTERM, the status comment becomes ⚠️ cancelled, a cancelled receipt is posted, every tree
// is removed and forgectx exits 1.
func TestRunSIGTERMMidAgent(t *testing.T) {
	w := newWorld(t, worldOpts{agentMode: "sleep"})
	want := w.expectedIndex()
	w.expectStartCreate()
	w.expectAcquisition()
	w.expectFinish(status.Cancelled, "the run was cancelled while the agent ran", run.StatusCancelled, want)

	cfgPath := filepath.Join(w.dir, "helper.json")
	b, _ := json.Marshal(helperConfig{Env: w.env, Harness: filepath.Join(w.dir, "harness.yml")})
	must(t, os.WriteFile(cfgPath, b, 0o600))
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "FORGECTX_E2E_HELPER=1", "FORGECTX_E2E_HELPER_CONFIG="+cfgPath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	must(t, cmd.Start())
	deadline := time.Now().Add(30 * time.Second)
	for !exists(filepath.Join(w.out, "started")) {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("the agent never started; helper stderr:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Only forgectx gets the signal, as from the runner; it must pass it on to the agent.
	must(t, cmd.Process.Signal(syscall.SIGTERM))
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != run.ExitFailed {
		t.Fatalf("helper exit = %v, want exit %d; stderr:\n%s", err, run.ExitFailed, stderr.String())
	}
	if !exists(filepath.Join(w.out, "term")) {
		t.Error("the agent did not receive SIGTERM")
	}
	if exists(filepath.Join(w.out, "done")) {
		t.Error("the agent ran to completion despite the cancellation")
	}
	w.assertNoTrees()
}
