package e2e

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/forgectx/forgectx/internal/run"
	"github.com/forgectx/forgectx/internal/status"
	"github.com/forgectx/forgectx/test/ghscenario"
)

// An abort rule met while the tree is assembled straight into the stage's host directory
// (stage.Build + snapshot.AssembleTo): the author is not a collaborator, so the
// entity body cannot be admitted. The run fails with the abort's scope and code before
// any script or agent starts, consumed no index, and leaves no host tree, no assembly staging
// directory and no stage state.
func TestRunAbortDuringAssemblyLeavesNothing(t *testing.T) {
	w := newWorld(t, worldOpts{pre: "#!/bin/bash\necho ran > {{DIR}}/pre-ran\n"})
	w.sc.Author = ghscenario.Mallory // not a collaborator: the entity body's author is not admitted
	w.expectStartCreate()
	w.expectAcquisition()
	w.expectFinish(status.Failure, "snapshot aborted (entity authorization_failed): no script or agent was started", run.StatusFailure, noInputRevision)
	res, err := w.run()
	var re *run.RunError
	if !errors.As(err, &re) || res.ExitCode() != run.ExitFailed || res.Status != run.StatusFailure {
		t.Fatalf("run = %+v, %v; want a failed run", res, err)
	}
	if res.Summary != nil {
		t.Error("an aborted assembly produced a summary")
	}
	if exists(filepath.Join(w.dir, "pre-ran")) || exists(filepath.Join(w.out, "done")) {
		t.Error("a script or the agent ran after the abort")
	}
	w.assertNoTrees()
	w.assertLogHygiene()
}
