//go:build realforge_defects

// A checks defect TestActionsChecks found on the real server, not fixed yet: a job no runner
// has taken yet has no Actions task, so beside a head's other tasks it vanishes from the
// snapshot with no gap. Gitea (and Forgejo) does write a pending commit status for it when it
// creates the run, but the adapter reads commit statuses only when no task matches the head.
// This file drops its build tag when the adapter accounts for such jobs. Run it with:
//
//	FORGECTX_REALFORGE=1 go test -tags realforge_defects ./test/realforge -run TestDefectWaitingJobBesideTasks -v
package realforge

import (
	"testing"
	"time"

	"github.com/forgectx/forgectx/test/realforge/giteaserver"
)

// TestDefectWaitingJobBesideTasks needs a job waiting for a runner, beside a finished task on
// the same head, to be a queued check or a checks gap: never silently absent.
func TestDefectWaitingJobBesideTasks(t *testing.T) {
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
	if _, ok := checks["lint"]; ok {
		return
	}
	for _, g := range s.sum.Summary.Gaps {
		if g.Scope == "checks" {
			return
		}
	}
	t.Fatalf("checks %d (%v) and no checks gap: the waiting lint job vanished silently", len(checks), checks)
}
