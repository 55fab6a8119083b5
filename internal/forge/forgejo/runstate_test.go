package forgejo

import (
	"context"
	"fmt"
	"testing"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/test/httpfake"
)

// giteaRun is one GET /repos/{owner}/{repo}/actions/runs entry in Gitea 1.25's
// ActionWorkflowRun shape (convert.ToActionWorkflowRun): the run number is the per-repository
// index of the web link, id the global run id, status queued/waiting/in_progress/completed.
func giteaRun(id, number int64, st, conclusion string) map[string]any {
	return map[string]any{
		"id": id, "url": fmt.Sprintf("http://127.0.0.1:3000/api/v1/repos/Acme/Widgets/actions/runs/%d", id),
		"html_url": fmt.Sprintf("http://127.0.0.1:3000/Acme/Widgets/actions/runs/%d", number), "run_number": number,
		"started_at": "2026-09-08T11:58:00Z", "completed_at": "0001-01-01T00:00:00Z", "event": "push",
		"display_title": "add ci.yml", "head_branch": "main", "head_sha": "6dcb09b5b57875f334f61aebed695e2e4193db5e",
		"status": st, "conclusion": conclusion, "path": "ci.yml@refs/heads/main", "run_attempt": 0, "repository_id": 1,
	}
}

// forgejoRun is the same entry in Forgejo's ActionRun shape (index_in_repo, its own statuses).
func forgejoRun(id, index int64, st string) map[string]any {
	return map[string]any{"id": id, "title": "add ci.yml", "index_in_repo": index, "status": st, "event": "push",
		"html_url": fmt.Sprintf("https://forgejo.example/Acme/Widgets/actions/runs/%d", index)}
}

func runList(total int, runs ...map[string]any) httpfake.Reply {
	if runs == nil {
		runs = []map[string]any{}
	}
	return httpfake.JSON(200, map[string]any{"total_count": total, "workflow_runs": runs})
}

// TestRunState: the run a status comment links to is looked up by its run number through the
// runs listing (newest first), reading only as far as needed; only a run listed as done, or a
// listing that passes its number without it, reads as over or gone. Everything the adapter
// cannot interpret is Unknown (reconcile leaves the comment alone), never "gone".
func TestRunState(t *testing.T) {
	const path = "/api/v1/repos/Acme/Widgets/actions/runs"
	q := func(page, number int) string {
		return fmt.Sprintf("%s?limit=2&page=%d&run_number=%d", path, page, number)
	}
	link := func(n int) string { return fmt.Sprintf("https://forgejo.example/Acme/Widgets/actions/runs/%d", n) }
	cases := []struct {
		name   string
		link   string
		expect func(f *httpfake.Server)
		want   forge.RunState
	}{
		{name: "gitea: completed, on the second page", link: link(10), expect: func(f *httpfake.Server) {
			f.Expect("GET", q(1, 10), runList(30, giteaRun(112, 12, "in_progress", ""), giteaRun(111, 11, "completed", "success")))
			f.Expect("GET", q(2, 10), runList(30, giteaRun(110, 10, "completed", "cancelled"), giteaRun(109, 9, "completed", "failure")))
		}, want: forge.RunState{Found: true, Completed: true, Status: "completed"}},
		{name: "gitea: queued (no runner)", link: link(11), expect: func(f *httpfake.Server) {
			f.Expect("GET", q(1, 11), runList(3, giteaRun(112, 12, "queued", ""), giteaRun(111, 11, "queued", "")))
		}, want: forge.RunState{Found: true, Status: "queued"}},
		{name: "gitea: deleted (the listing passes its number)", link: link(10), expect: func(f *httpfake.Server) {
			f.Expect("GET", q(1, 10), runList(3, giteaRun(112, 12, "completed", "success"), giteaRun(109, 9, "completed", "success")))
		}, want: forge.RunState{}},
		{name: "gitea: never existed (complete listing)", link: link(1), expect: func(f *httpfake.Server) {
			f.Expect("GET", q(1, 1), runList(0))
		}, want: forge.RunState{}},
		{name: "forgejo: running", link: link(4), expect: func(f *httpfake.Server) {
			f.Expect("GET", q(1, 4), runList(1, forgejoRun(904, 4, "running")))
		}, want: forge.RunState{Found: true, Status: "running"}},
		{name: "forgejo: failure", link: link(4), expect: func(f *httpfake.Server) {
			f.Expect("GET", q(1, 4), runList(1, forgejoRun(904, 4, "failure")))
		}, want: forge.RunState{Found: true, Completed: true, Status: "failure"}},
		{name: "no runs API (404)", link: link(4), expect: func(f *httpfake.Server) {
			f.Expect("GET", q(1, 4), httpfake.JSON(404, `{"message":"The target couldn't be found.","url":"http://127.0.0.1:3000/api/swagger","errors":[]}`))
		}, want: forge.RunState{Unknown: true}},
		{name: "entries without a run number", link: link(4), expect: func(f *httpfake.Server) {
			f.Expect("GET", q(1, 4), runList(1, map[string]any{"id": 904, "status": "completed"}))
		}, want: forge.RunState{Unknown: true}},
		{name: "another repository's run", link: "https://forgejo.example/Acme/Other/actions/runs/4", want: forge.RunState{Unknown: true}},
		{name: "not a run link", link: "https://ci.example/build/4", want: forge.RunState{Unknown: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := httpfake.New(t)
			if tc.expect != nil {
				tc.expect(f)
			}
			got, err := fakeClient(t, f, 2).RunState(context.Background(), "Acme/Widgets", tc.link)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("RunState = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestRunStateTooDeep: a run older than maxRunPages pages of the listing is not looked for
// further: Unknown, after exactly maxRunPages requests.
func TestRunStateTooDeep(t *testing.T) {
	f := httpfake.New(t)
	for p := 1; p <= maxRunPages; p++ {
		hi := int64(10000 - 2*p)
		f.Expect("GET", fmt.Sprintf("/api/v1/repos/Acme/Widgets/actions/runs?limit=2&page=%d&run_number=1", p),
			runList(5000, giteaRun(hi+1, hi+1, "completed", "success"), giteaRun(hi, hi, "completed", "success")))
	}
	got, err := fakeClient(t, f, 2).RunState(context.Background(), "Acme/Widgets", "https://forgejo.example/Acme/Widgets/actions/runs/1")
	if err != nil || got != (forge.RunState{Unknown: true}) {
		t.Fatalf("RunState = %+v, %v; want Unknown", got, err)
	}
}

// TestRunStateFailures: a listing refused to the token (Gitea 1.25 answers a repository admin
// who is not the owner 403, with this message) is Unknown, never "gone"; a server error that
// outlasts the retries is an error.
func TestRunStateFailures(t *testing.T) {
	const q = "/api/v1/repos/Acme/Widgets/actions/runs?limit=2&page=1&run_number=3"
	const link = "https://forgejo.example/Acme/Widgets/actions/runs/3"
	f := httpfake.New(t)
	f.Expect("GET", q, httpfake.JSON(403, `{"message":"user should be the owner of the repo","url":"http://127.0.0.1:3000/api/swagger"}`))
	got, err := fakeClient(t, f, 2).RunState(context.Background(), "Acme/Widgets", link)
	if err != nil || got != (forge.RunState{Unknown: true}) {
		t.Fatalf("RunState on a 403 = %+v, %v; want Unknown", got, err)
	}
	f = httpfake.New(t)
	cl := fakeClient(t, f, 2)
	f.Expect("GET", q, httpfake.ServerError(), httpfake.ServerError(), httpfake.ServerError(), httpfake.ServerError()) // 1 + 3 retries
	if _, err := cl.RunState(context.Background(), "Acme/Widgets", link); err == nil {
		t.Fatal("RunState after repeated 500s: no error")
	}
}
