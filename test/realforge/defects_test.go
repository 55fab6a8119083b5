// These tests reproduce, against a real Gitea, the defects first found in the Forgejo
// adapter; each failed on the adapter before its fix, and they run in .ci/run with the rest of
// the real-server suite. `status reconcile --forge forgejo` is reconcile_test.go.
package realforge

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/forgectx/forgectx/test/realforge/giteaserver"
)

// TestDefects shares one small server: MAX_RESPONSE_ITEMS=2 first, then Gitea's default (50),
// then Actions disabled.
func TestDefects(t *testing.T) {
	srv := giteaserver.Start(t, giteaserver.Config{MaxResponseItems: 2})
	owner := srv.CreateUser(t, "owner")
	admin := srv.CreateUser(t, "repo-admin")
	author := srv.CreateUser(t, "author")
	var pendingBy []*giteaserver.User
	for _, n := range []string{"pending-a", "pending-b", "pending-c"} {
		pendingBy = append(pendingBy, srv.CreateUser(t, n))
	}
	repo := srv.CreateRepo(t, owner, "widgets")
	srv.AddCollaborator(t, repo, admin, "admin")
	srv.AddCollaborator(t, repo, author, "write")
	for _, u := range pendingBy {
		srv.AddCollaborator(t, repo, u, "write")
	}
	srv.PutFile(t, owner, repo, "main", "lib.txt", oldFile)
	head := srv.PushBranch(t, author, repo, "feature", map[string]string{"lib.txt": newFile})
	pull := srv.CreatePull(t, author, repo, "feature", "Fix the crash", "Changes line three.")
	// Reviews in id order, two per page: [approved, pending] [pending, pending] [changes
	// requested]. Gitea drops other users' pending rows after paging, for every token that is
	// not an instance admin, yet counts them in X-Total-Count: page 2 is empty for the
	// repository-admin token, and the changes request is on page 3.
	srv.Review(t, admin, repo, pull, "APPROVED", "LGTM.")
	for _, u := range pendingBy {
		srv.Review(t, u, repo, pull, "PENDING", "draft")
	}
	srv.Review(t, owner, repo, pull, "REQUEST_CHANGES", "Keep line three lower case.")
	// More issue comments than one page of 50: the comments endpoint answers all of them to
	// the first request whatever page/limit say.
	for i := 0; i < 55; i++ {
		srv.Comment(t, owner, repo, pull, fmt.Sprintf("Note %02d.", i))
	}

	t.Run("pending-review-page-never-silently-short", func(t *testing.T) {
		// Needs: a list read until the provider's X-Total-Count (or Link) says it is complete,
		// or else a reviews gap. Today the adapter stops at the empty page 2 and the changes
		// request vanishes with no gap.
		s := mustSnapshot(t, srv.APIURL, admin.Token, repo.FullName(), pull, pullProfile)
		var rel struct {
			Reviews []struct{ State string } `json:"reviews"`
		}
		readJSON(t, filepath.Join(s.out, "relations", "reviews.json"), &rel)
		complete := false
		for _, r := range rel.Reviews {
			complete = complete || r.State == "changes_requested"
		}
		gapped := false
		for _, g := range s.sum.Summary.Gaps {
			gapped = gapped || g.Scope == "reviews"
		}
		if !complete && !gapped {
			t.Fatalf("reviews %v: the changes request on page 3 is missing and there is no reviews gap (silently short)", rel.Reviews)
		}
	})

	t.Run("stats-response-bytes-count-bytes-read", func(t *testing.T) {
		// Needs: response_bytes counting the body bytes read, not Content-Length (Gitea
		// streams large JSON answers chunked, without one). The comments list alone is a
		// lower bound for what the snapshot read.
		s := mustSnapshot(t, srv.APIURL, admin.Token, repo.FullName(), pull, pullProfile)
		n := bodyBytes(t, srv, admin.Token, fmt.Sprintf("/repos/%s/issues/%d/comments", repo.FullName(), pull))
		if got := statInt(s, "response_bytes"); got < n {
			t.Fatalf("response_bytes %d < %d bytes of the comments list alone", got, n)
		}
	})

	t.Run("stats-lower-bound-from-what-was-needed", func(t *testing.T) {
		// Needs: lower_bound_requests computed from the requests a perfect run needs against
		// this server: the comments endpoint ignores page/limit and answers everything to the
		// first request (and sends no X-Total-Count), Gitea clamps every other list to
		// MAX_RESPONSE_ITEMS. The instance admin sees every row, so in a loopback run without
		// retries every request it made was needed: the bound equals the requests, never above
		// them (the reported ratio 0.91), never below them because the bound assumed 50 rows a
		// page where the server served 2. The repository admin does not see the 3 pending
		// reviews Gitea counts in X-Total-Count: it reads on past the server's last review page
		// (pages 4 and 5 at 2 a page, 2 and 3 at 50) until its short pages could hold the 5
		// declared reviews. A perfect run at the server's page size needs 3 and 1 review pages,
		// so those 2 empty pages are over the bound (they were counted in it: 15 of 15, where
		// 13 were needed).
		for _, tc := range []struct {
			name  string
			cfg   giteaserver.Config
			token string
			over  int // requests over the bound: empty review pages past the server's last
		}{
			{"max-items-2/instance-admin", giteaserver.Config{MaxResponseItems: 2}, srv.Admin.Token, 0},
			{"max-items-2/repo-admin", giteaserver.Config{MaxResponseItems: 2}, admin.Token, 2},
			{"default/instance-admin", giteaserver.Config{}, srv.Admin.Token, 0},
			{"default/repo-admin", giteaserver.Config{}, admin.Token, 2},
		} {
			t.Run(tc.name, func(t *testing.T) {
				srv.Restart(t, tc.cfg)
				s := mustSnapshot(t, srv.APIURL, tc.token, repo.FullName(), pull, pullProfile)
				req, lb := statInt(s, "requests"), statInt(s, "lower_bound_requests")
				if retries := statInt(s, "retries"); retries != 0 {
					t.Fatalf("%d retries on loopback", retries)
				}
				if lb != req-tc.over {
					t.Fatalf("lower_bound_requests %d, requests %d (ratio %v, pages %v): want %d requests over the bound (the empty review pages past the server's last)", lb, req, s.stats["request_ratio"], s.stats["pages"], tc.over)
				}
			})
		}
	})

	t.Run("commit-statuses-with-actions-disabled", func(t *testing.T) {
		// Needs: with [actions] ENABLED=false the tasks endpoint answers 200 and an empty list;
		// a head with commit statuses (Woodpecker, Drone, external CI) must show them as
		// checks (spec check rules) or carry the checks gap the spec names, never look
		// check-free.
		srv.Restart(t, giteaserver.Config{ActionsDisabled: true})
		srv.CommitStatus(t, owner, repo, head, "failure", "woodpecker/test", "2 tests failed")
		srv.CommitStatus(t, owner, repo, head, "success", "drone/build", "built")
		s := mustSnapshot(t, srv.APIURL, admin.Token, repo.FullName(), pull, pullProfile)
		checks := s.sum.acquired("checks")
		gapped := false
		for _, g := range s.sum.Summary.Gaps {
			gapped = gapped || g.Scope == "checks"
		}
		if checks < 2 && !gapped {
			t.Fatalf("%d checks and no checks gap for a head with 2 commit statuses", checks)
		}
	})

}

// bodyBytes is the size of an API answer's body as read (chunked or not).
func bodyBytes(t *testing.T, srv *giteaserver.Server, token, path string) int {
	t.Helper()
	req, err := http.NewRequest("GET", srv.APIURL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "token "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d bytes, Content-Length %d, Transfer-Encoding %v", path, n, resp.ContentLength, resp.TransferEncoding)
	return int(n)
}
