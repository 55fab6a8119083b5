package forgejo

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"
	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge/cassette"
)

// FuzzTaskList: a tasks page is untrusted forge JSON. Decoding and mapping never panic, and
// every task that maps is a check obeying check.schema.json's status rules.
func FuzzTaskList(f *testing.F) {
	seed, _ := json.Marshal(map[string]any{"total_count": 2, "workflow_runs": []any{
		taskRow(1, "a", headSHA, "skipped", "2026-09-10T08:00:00Z", "2026-09-10T08:00:00Z", "null"),
		taskRow(2, "b", headSHA, "running", "2026-09-10T08:00:00Z", "2026-09-10T08:00:00Z", "2026-09-10T08:00:01Z"),
	}})
	f.Add(seed)
	f.Add([]byte(`{"workflow_runs":[{"id":1,"status":"success","head_sha":"` + headSHA + `","created_at":"2026-01-01T00:00:00Z","run_started_at":"1970-01-01T00:00:00Z"}]}`))
	f.Add([]byte(`{"workflow_runs":[{"id":-1,"status":"error"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var tl taskList
		if json.Unmarshal(body, &tl) != nil {
			return
		}
		for _, tk := range tl.Tasks {
			c, gap := mapTask(tk, headSHA)
			if gap != "" {
				continue
			}
			if msg := checkRules(c); msg != "" {
				t.Fatalf("%s: %+v", msg, c)
			}
			if c.ID == "" || c.CreatedAt == "" || c.HeadSHA != headSHA {
				t.Fatalf("mapped check lacks identity: %+v", c)
			}
		}
	})
}

// FuzzReviewComments: review-comment pages are untrusted; threads built from them always
// partition the valid comments, with each thread's ID its first comment and replies pointing
// at the root.
func FuzzReviewComments(f *testing.F) {
	seed, _ := json.Marshal([]any{
		reviewComment(1, 1, bob, erin, "a.go", 3, 0, headSHA, "x", "2026-09-09T10:00:00Z"),
		reviewComment(2, 2, erin, nil, "a.go", 3, 0, headSHA, "y", "2026-09-09T10:00:00Z"),
	})
	f.Add(seed)
	f.Add([]byte(`[{"id":5,"path":"","position":0,"original_position":0,"created_at":"2026-09-09T10:00:00Z"}]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var cs []*gitea.PullReviewComment
		if json.Unmarshal(body, &cs) != nil {
			return
		}
		threads, records, _ := buildThreads(cs)
		seen := map[string]bool{}
		for _, th := range threads {
			if len(th.CommentIDs) == 0 || th.CommentIDs[0] != th.ID || th.Outdated {
				t.Fatalf("thread %+v", th)
			}
			for _, id := range th.CommentIDs {
				if seen[id] {
					t.Fatalf("comment %s in two threads", id)
				}
				seen[id] = true
			}
			for _, r := range th.Replies {
				if r.ParentID != th.ID {
					t.Fatalf("reply %+v not to root %s", r, th.ID)
				}
			}
		}
		if len(seen) != len(records) {
			t.Fatalf("%d comments in threads, %d records", len(seen), len(records))
		}
	})
}

// makeReviewComments is the corpus maker for the thread benchmark: n comments spread over
// n/4 conversations on a few files.
func makeReviewComments(n int) []*gitea.PullReviewComment {
	base := time.Date(2026, 9, 9, 10, 0, 0, 0, time.UTC)
	out := make([]*gitea.PullReviewComment, n)
	for i := range out {
		out[i] = &gitea.PullReviewComment{
			ID: int64(n - i), ReviewID: int64(i % 7), Path: fmt.Sprintf("pkg/f%d.go", i%5),
			LineNum: uint64(1 + (i/4)%200), CommitID: headSHA, Created: base.Add(time.Duration(i%97) * time.Second),
			Reviewer: &gitea.User{ID: int64(100 + i%9), UserName: "u"},
		}
	}
	return out
}

func BenchmarkBuildThreads(b *testing.B) {
	cs := makeReviewComments(5000)
	b.ReportAllocs()
	for b.Loop() {
		buildThreads(cs)
	}
}

// BenchmarkAcquireReplay measures a whole pull-request acquisition replayed from its cassette
// (adapter cost without the network).
func BenchmarkAcquireReplay(b *testing.B) {
	c, err := cassette.Load(filepath.Join(fixtureRoot, "pull"))
	if err != nil {
		b.Fatal(err)
	}
	s := pullScenario()
	b.ReportAllocs()
	for b.Loop() {
		rp, _ := cassette.NewReplayer(c)
		cl, _ := New(Options{APIURL: c.Meta.APIURL, Transport: rp, Log: zerolog.Nop()})
		if _, err := cl.Acquire(context.Background(), s.ref, s.profile); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzLinkHeader: the Link header is untrusted; nextPage never panics and yields 0 or a
// positive page.
func FuzzLinkHeader(f *testing.F) {
	f.Add(`<https://x.example/api/v1/repos/a/b/issues/1/comments?limit=2&page=2>; rel="next", <https://x.example/api/v1/repos/a/b/issues/1/comments?limit=2&page=3>; rel="last"`)
	f.Add(`<%zz>; rel="next"`)
	f.Add(`;;,,<>; rel="next"`)
	f.Fuzz(func(t *testing.T, link string) {
		if n := nextPage(http.Header{"Link": {link}}); n < 0 {
			t.Fatalf("nextPage = %d", n)
		}
	})
}

// FuzzReviewRows: review pages are untrusted; decoding and the state/time rules never panic
// and a kept review always has a v1 state and a timestamp.
func FuzzReviewRows(f *testing.F) {
	seed, _ := json.Marshal([]any{review(1, bob, "APPROVED", "ok", headSHA, "2026-09-09T10:00:00Z", true, 0)})
	f.Add(seed)
	f.Add([]byte(`[{"id":2,"state":"COMMENT","created_at":"2026-09-09T10:00:00Z","submitted_at":null}]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var rows []nativeReview
		if json.Unmarshal(body, &rows) != nil {
			return
		}
		for _, nr := range rows {
			state, disp := mapReviewState(string(nr.State), nr.Dismissed)
			if disp != reviewKeep {
				continue
			}
			switch state {
			case "approved", "changes_requested", "commented", "dismissed":
			default:
				t.Fatalf("state %q", state)
			}
			if ts, ok := reviewTime(nr); ok && ts == "" {
				t.Fatal("kept review time is empty")
			}
		}
	})
}
