package realforge

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/status"
	"github.com/forgectx/forgectx/test/realforge/giteaserver"
)

// ciWorkflow runs on every push to main. The test server has no runner, so each run it starts
// stays queued ("waiting" inside Gitea) until it is cancelled: a live run, as reconcile sees it.
const ciWorkflow = `on:
  push:
    branches: [main]
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - run: echo build
`

// TestStatusReconcileForgejo is `forgectx status reconcile --forge forgejo` against a real
// Gitea, as on GitHub: a status comment a killed run left ⏳ started is finalised to ⚠️
// cancelled once its Actions run is over or gone, and left alone while the run is queued (no
// runner exists on the test server, so a real run stays queued until it is cancelled through
// the web UI's cancel form). Each agent's comment is reconciled on its own. Gitea 1.25 lists
// a repository's runs only to its owner or a site admin: a repository admin's reconcile leaves
// the comment alone (undetermined), never guesses. Gitea 1.27 lists them to a repository admin
// too, whose reconcile then decides as the owner's does.
func TestStatusReconcileForgejo(t *testing.T) {
	srv := giteaserver.Start(t, giteaserver.Config{})
	owner := srv.CreateUser(t, "owner")
	admin := srv.CreateUser(t, "repo-admin")
	author := srv.CreateUser(t, "author")
	repo := srv.CreateRepo(t, owner, "widgets")
	srv.AddCollaborator(t, repo, admin, "admin")
	srv.AddCollaborator(t, repo, author, "write")
	srv.PutFile(t, owner, repo, "main", "lib.txt", oldFile)
	srv.PushBranch(t, author, repo, "feature", map[string]string{"lib.txt": newFile})
	srv.PutFile(t, owner, repo, "main", ".gitea/workflows/ci.yml", ciWorkflow)
	runIndex := waitForRun(t, srv, owner, repo)
	pr := srv.CreatePull(t, author, repo, "feature", "Fix the crash", "Changes line three.")

	pipe := filter.New(nil)
	post := func(as *giteaserver.User, agent, link string) int64 {
		body, err := status.Render(pipe, status.Status{Agent: agent, State: status.Started, RunURL: link})
		if err != nil {
			t.Fatal(err)
		}
		return srv.Comment(t, as, repo, pr, body)
	}
	runLink := func(n int64) string { return fmt.Sprintf("%s/%s/actions/runs/%d", srv.URL, repo.FullName(), n) }
	// Gitea lists a repository's runs only to its owner (or a site admin): the lifecycle runs
	// as the owner; the repository admin's comment shows the fail-safe side.
	gone := post(owner, "gone", runLink(runIndex+50)) // a run this repository never had
	queued := post(owner, "queued", runLink(runIndex))
	refused := post(admin, "gone", runLink(runIndex+50))

	reconcile := func(as *giteaserver.User, agent string) map[string]int {
		t.Helper()
		r := forgectx(t, map[string]string{"FORGECTX_TOKEN": as.Token}, "status", "reconcile", "--forge", "forgejo",
			"--agent", agent, "--repo", repo.FullName(), "--number", fmt.Sprint(pr), "--api-url", srv.APIURL,
			"--token-env", "FORGECTX_TOKEN")
		if r.code != 0 {
			t.Fatalf("status reconcile --forge forgejo --agent %s as %s: exit %d\n%s", agent, as.Login, r.code, tailStr(r.stderr, 1500))
		}
		if strings.Contains(r.stderr, as.Token) {
			t.Fatal("the token appears in reconcile's log")
		}
		var got map[string]int
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("reconcile stdout %q: %v", r.stdout, err)
		}
		return got
	}
	state := func(id int64) status.State {
		t.Helper()
		var c struct{ Body string }
		srv.MustDo(t, owner.Token, "", "GET", fmt.Sprintf("/repos/%s/issues/comments/%d", repo.FullName(), id), nil, &c)
		st, ok := status.ParseStatus(c.Body)
		if !ok {
			t.Fatalf("comment %d is no status comment any more: %q", id, firstLine(c.Body))
		}
		return st.State
	}

	// Gitea 1.25 refuses a repository admin the runs listing; 1.27 lists them to it. Either way
	// the reconcile follows what the server answers: refused → undetermined (the comment left
	// alone), listed → the never-existing run's comment is finalised.
	if code := srv.Do(t, admin.Token, "", "GET", "/repos/"+repo.FullName()+"/actions/runs", nil, nil); code/100 == 2 {
		t.Logf("gitea %s lists the repository's runs to a repository admin (HTTP %d)", srv.Version, code)
		if got := reconcile(admin, "gone"); got["finalized"] != 1 || got["comments"] != 1 {
			t.Errorf("reconcile by a repository admin the runs are listed to = %v, want the comment of a run that never existed finalised", got)
		}
		if st := state(refused); st == status.Started {
			t.Errorf("the comment of a run that never existed is still %q", st)
		}
	} else {
		if got := reconcile(admin, "gone"); got["undetermined"] != 1 || got["finalized"] != 0 || got["comments"] != 1 {
			t.Errorf("reconcile with a token refused the runs listing (HTTP %d) = %v, want the comment left alone (undetermined)", code, got)
		}
		if st := state(refused); st != status.Started {
			t.Errorf("the comment whose run could not be looked up is %q, want it still started", st)
		}
	}
	if got := reconcile(owner, "gone"); got["finalized"] != 1 || got["started"] != 1 || got["comments"] != 1 {
		t.Errorf("reconcile of a run that never existed = %v, want it finalised", got)
	}
	if st := state(gone); st != status.Cancelled {
		t.Errorf("the gone run's comment is %q after reconcile, want cancelled", st)
	}
	if got := reconcile(owner, "queued"); got["running"] != 1 || got["finalized"] != 0 {
		t.Errorf("reconcile of a queued run = %v, want it left alone", got)
	}
	if st := state(queued); st != status.Started {
		t.Errorf("the queued run's comment is %q after reconcile, want it still started", st)
	}

	web := srv.Login(t, owner)
	page := fmt.Sprintf("/%s/actions/runs/%d", repo.FullName(), runIndex)
	web.Post(t, page+"/cancel", page, url.Values{})
	if got := reconcile(owner, "queued"); got["finalized"] != 1 {
		t.Errorf("reconcile after the run was cancelled = %v, want it finalised", got)
	}
	if st := state(queued); st != status.Cancelled {
		t.Errorf("the cancelled run's comment is %q after reconcile, want cancelled", st)
	}
}

// waitForRun waits for the first Actions run of repo (Gitea detects workflows asynchronously
// after a push) and returns its per-repository index, the number in its web link.
func waitForRun(t *testing.T, srv *giteaserver.Server, as *giteaserver.User, repo giteaserver.Repo) int64 {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		var list struct {
			Runs []struct {
				RunNumber int64  `json:"run_number"`
				Status    string `json:"status"`
			} `json:"workflow_runs"`
		}
		srv.MustDo(t, as.Token, "", "GET", "/repos/"+repo.FullName()+"/actions/runs", nil, &list)
		if len(list.Runs) > 0 {
			if list.Runs[0].Status == "completed" {
				t.Fatalf("the workflow run completed without a runner: %+v", list.Runs[0])
			}
			return list.Runs[0].RunNumber
		}
		if time.Now().After(deadline) {
			t.Fatal("no Actions run appeared within 90s of pushing the workflow")
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }
