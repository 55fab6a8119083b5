package e2e

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"github.com/forgectx/forgectx/internal/run"
)

// run.Run used as a library, with nothing else in the process catching signals: the
// lifecycle's own signal guard turns a SIGTERM or SIGINT into the run's cancellation (as
// review-context run's does), so the finish still posts the ⚠️ cancelled comment and a
// `cancelled` receipt and removes every tree, instead of the process dying mid-phase.
func TestRunGuardsSignalsInProcess(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			w := newWorld(t, worldOpts{})
			w.expectFinishCreate(noInputRevision)
			o := w.options()
			o.PhaseHook = func(ctx context.Context, phase string) {
				if phase != "scavenge" {
					return
				}
				must(t, syscall.Kill(syscall.Getpid(), sig))
				<-ctx.Done()
			}
			res, err := runWith(o)
			var re *run.RunError
			if !errors.As(err, &re) || res == nil || res.Status != run.StatusCancelled || !res.ReceiptPosted || !res.StatusPosted {
				t.Fatalf("run = %+v, %v; want cancelled with the status comment and receipt posted", res, err)
			}
			if res.ExitCode() != run.ExitFailed {
				t.Errorf("exit code %d, want %d", res.ExitCode(), run.ExitFailed)
			}
			w.assertNoTreesIfStaged()
		})
	}
}
