// A checks defect TestActionsChecks found on the real server: a job no runner
// has taken yet has no Actions task, so beside a head's other tasks it vanished from the
// snapshot with no gap. Gitea (and Forgejo) writes a pending commit status for it when it
// creates the run; the adapter now reads the head's statuses always and counts each one no
// head task accounts for as a checks unsupported gap. Run it with:
//
//	FORGECTX_REALFORGE=1 go test ./test/realforge -run TestWaitingJobBesideTasks -v
package realforge

import (
	"testing"
	"time"

	"github.com/forgectx/forgectx/test/realforge/giteaserver"
)

// TestWaitingJobBesideTasks needs a job waiting for a runner, beside a finished task on the
// same head, to be a checks gap (the adapter emits no check for a status): never silently
// absent, and the finished task's own status is no gap.
func TestWaitingJobBesideTasks(t *testing.T) {
	srv := giteaserver.Start(t, giteaserver.Config{})
	owner := srv.CreateUser(t, "owner")
	author := srv.CreateUser(t, "author")
	repo := srv.CreateRepo(t, owner, "widgets")
	srv.AddCollaborator(t, repo, author, "write")
	wf := "on: [pull_request]\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n      - run: true\n" +
		"  lint:\n    runs-on: no-runner-has-this-label\n    steps:\n      - run: true\n"
	head := srv.PushBranch(t, author, repo, "feature", map[string]string{"lib.txt": newFile, ".gitea/workflows/ci.yml": wf})
	pull := srv.CreatePull(t, author, repo, "feature", "Fix the crash", "Changes line three.")
	runner := srv.RegisterRunner(t, "emulated", "ubuntu-latest")
	tk := runner.FetchTask(t, 90*time.Second)
	time.Sleep(1100 * time.Millisecond)
	runner.Finish(t, tk, "success", "ok")
	waitStatuses(t, srv, owner.Token, repo, head, 2) // build's success, lint's pending

	s := mustSnapshot(t, srv.APIURL, srv.Admin.Token, repo.FullName(), pull, checksProfile)
	checks := treeChecks(t, s.out)
	if _, ok := checks["build"]; !ok || len(checks) != 1 {
		t.Fatalf("checks %v, want build's alone", checks)
	}
	if got := s.sum.gap("checks", "unsupported"); got != 1 {
		t.Fatalf("checks unsupported gap count %d, want 1 (the waiting lint job's pending status, build's accounted for); gaps %+v", got, s.sum.Summary.Gaps)
	}
}
