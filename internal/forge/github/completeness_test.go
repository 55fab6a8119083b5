package github_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/internal/forge/github"
	"github.com/forgectx/forgectx/internal/forge/stats"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/test/ghscenario"
	"github.com/forgectx/forgectx/test/httpfake"
)

// The defects of the completeness-accounting issue, each on the large scenario: what a
// listing that ends incomplete loses is a gap on every scope it feeds, and a failed page loses
// only what no other request could serve.

var persist4 = []httpfake.Reply{httpfake.BadGateway(), httpfake.BadGateway(), httpfake.BadGateway(), httpfake.BadGateway()}

// acquireOptional runs Acquire (with receipts from comments, as `forgectx snapshot` does)
// against a fake that first registers the case's own replies (setup), then every interaction
// of c as optional: the assertions are on the acquisition.
func acquireOptional(t *testing.T, s *ghscenario.Scenario, c *cassette.Cassette, setup func(f *httpfake.Server)) (*acquisition.Acquisition, *stats.Stats) {
	t.Helper()
	return acquireOptionalAt(t, s, c, 0, setup)
}

// acquireOptionalAt is acquireOptional with the client's concurrency (0: its default).
func acquireOptionalAt(t *testing.T, s *ghscenario.Scenario, c *cassette.Cassette, concurrency int, setup func(f *httpfake.Server)) (*acquisition.Acquisition, *stats.Stats) {
	t.Helper()
	f := httpfake.New(t)
	if setup != nil {
		setup(f)
	}
	for i, in := range c.Interactions {
		m, pq, b := target(t, c, i)
		f.ExpectBody(m, pq, b, replyOf(t, in)).Optional()
	}
	opts := fastOptions(f.URL)
	opts.Receipts = github.ReceiptsFromComments
	opts.Concurrency = concurrency
	cl, err := github.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, err := cl.Acquire(ctx, refOf(s), testProfile(kindOf(s)))
	if err != nil {
		t.Fatal(err)
	}
	return a, cl.Stats()
}

func gapOf(gaps []acquisition.Gap, code string) int {
	for _, g := range gaps {
		if g.Code == code {
			return g.Count
		}
	}
	return 0
}

// A persistent failure of the check-runs listing, or of one Actions jobs listing, loses the
// failed checks' logs with the checks: check_logs gets its fetch_failed gap (before, the
// logs vanished with no gap).
func TestCheckListingFailureGapsTheLogs(t *testing.T) {
	s := ghscenario.Large()
	c := build(t, s)
	t.Run("check runs page 1", func(t *testing.T) {
		i := find(t, c, "/commits/"+s.HeadSHA+"/check-runs")
		a, _ := acquireOptional(t, s, c, func(f *httpfake.Server) {
			m, pq, b := target(t, c, i)
			f.ExpectBody(m, pq, b, persist4...)
			// The first page failed, so page 2 is asked for the listing's extent: GitHub answers
			// a page past the end with no rows.
			f.Expect("GET", "/repos/octo-org/Hello-World/commits/"+s.HeadSHA+"/check-runs?filter=all&page=2&per_page=100",
				httpfake.JSON(200, `{"total_count":20,"check_runs":[]}`))
		})
		if len(a.Checks) != 0 || gapOf(a.Outcomes.Checks, "fetch_failed") != 20 || gapOf(a.Outcomes.CheckLogs, "fetch_failed") != 1 {
			t.Errorf("%d checks, gaps checks %+v check_logs %+v; want 0, fetch_failed 20 and a check_logs fetch_failed", len(a.Checks), a.Outcomes.Checks, a.Outcomes.CheckLogs)
		}
	})
	t.Run("jobs of one workflow run", func(t *testing.T) {
		// Run 60000 holds checks 0, 4, 8, 12, 16; check 8 failed (its log is selected).
		i := find(t, c, "/actions/runs/60000/jobs")
		a, _ := acquireOptional(t, s, c, func(f *httpfake.Server) {
			m, pq, b := target(t, c, i)
			f.ExpectBody(m, pq, b, persist4...)
			f.Expect("GET", "/repos/octo-org/Hello-World/actions/runs/60000/jobs?filter=all&page=2&per_page=100",
				httpfake.JSON(200, `{"total_count":5,"jobs":[]}`))
		})
		logs := 0
		for _, ck := range a.Checks {
			if ck.Log != nil {
				logs++
			}
		}
		if len(a.Checks) != 15 || logs != 3 || gapOf(a.Outcomes.Checks, "fetch_failed") != 5 || gapOf(a.Outcomes.CheckLogs, "fetch_failed") != 1 {
			t.Errorf("%d checks, %d logs, gaps checks %+v check_logs %+v; want 15, 3, fetch_failed 5 and check_logs fetch_failed 1",
				len(a.Checks), logs, a.Outcomes.Checks, a.Outcomes.CheckLogs)
		}
	})
}

// A persistent failure on page 2 of the issue comments loses page 2 only: rel="last" names
// pages 3 to 10, which are read (before, 800 comments were discarded).
func TestCommentsPageFailureKeepsTheLaterPages(t *testing.T) {
	s := ghscenario.Large()
	c := build(t, s)
	i := find(t, c, "/issues/5000/comments?page=2")
	a, _ := acquireOptional(t, s, c, func(f *httpfake.Server) {
		m, pq, b := target(t, c, i)
		f.ExpectBody(m, pq, b, persist4...)
	})
	issueComments := 0
	for _, cm := range a.Comments {
		if strings.HasPrefix(cm.ID, "IC_") {
			issueComments++
		}
	}
	if issueComments != 900 || gapOf(a.Outcomes.Comments, "fetch_failed") != 100 || gapOf(a.Outcomes.AgentRuns, "fetch_failed") != 1 {
		t.Errorf("%d issue comments, gaps comments %+v agent_runs %+v; want 900, fetch_failed 100, agent_runs fetch_failed",
			issueComments, a.Outcomes.Comments, a.Outcomes.AgentRuns)
	}
}

// A persistent failure on page 2 of reviewThreads is recovered by reading from the other end
// (last/before); when the page from the end holding the same threads fails too, the gap counts
// exactly the threads neither direction served (before, 200 threads were discarded).
func TestReviewThreadsFailureRecoveredFromTheEnd(t *testing.T) {
	s := ghscenario.Large()
	c := build(t, s)
	c = without(c, find(t, c, s.OtherSHA))
	var pages []int
	for i, in := range c.Interactions {
		if b, _ := in.Request.Body.Bytes(); strings.Contains(string(b), `"operationName":"Threads"`) {
			pages = append(pages, i)
		}
	}
	fromEnd := threadsFromEnd(t, s) // [200,300), [100,200), [0,100)
	for _, tc := range []struct {
		name        string
		failFromEnd bool
		threads     int
		gap         int
	}{
		{"from the end", false, 300, 0},
		{"the same threads fail from the end", true, 200, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := acquireOptional(t, s, c, func(f *httpfake.Server) {
				m, pq, b := target(t, c, pages[1])
				f.ExpectBody(m, pq, b, persist4...)
				for j := range fromEnd.Interactions {
					m, pq, b := target(t, fromEnd, j)
					r := replyOf(t, fromEnd.Interactions[j])
					if j == 1 && tc.failFromEnd {
						f.ExpectBody(m, pq, b, persist4...)
						continue
					}
					f.ExpectBody(m, pq, b, r).Optional()
				}
			})
			if len(a.Threads) != tc.threads || gapOf(a.Outcomes.Reviews, "fetch_failed") != tc.gap || gapOf(a.Outcomes.Comments, "fetch_failed") != tc.gap {
				t.Errorf("%d threads, gaps reviews %+v comments %+v; want %d and fetch_failed %d", len(a.Threads), a.Outcomes.Reviews, a.Outcomes.Comments, tc.threads, tc.gap)
			}
		})
	}
}

// --stats counts the lower bound at the page size the server answered with: a server that
// caps pages at 50 rows needs two pages for 100 comments, not one.
func TestStatsCountPagesAtTheServedSize(t *testing.T) {
	s := ghscenario.PaginationEmptyPage() // 100 comments, all by carol
	c := build(t, s)
	first := find(t, c, "/issues/101/comments?per_page=100")
	var rows []any
	if err := json.Unmarshal(body(t, c, first), &rows); err != nil {
		t.Fatal(err)
	}
	page := func(rs []any, link string) httpfake.Reply {
		r := replyOf(t, c.Interactions[first])
		r.Header.Del("Link")
		if link != "" {
			r.Header.Set("Link", link)
		}
		r.Body, _ = json.Marshal(rs)
		return r
	}
	base := ghscenario.APIURL + "/repos/octo-org/Hello-World/issues/101/comments"
	_, st := acquireOptional(t, s, c, func(f *httpfake.Server) {
		f.Expect("GET", "/repos/octo-org/Hello-World/issues/101/comments?per_page=100",
			page(rows[:50], `<`+base+`?page=2&per_page=100>; rel="next", <`+base+`?page=2&per_page=100>; rel="last"`))
		f.Expect("GET", "/repos/octo-org/Hello-World/issues/101/comments?page=2&per_page=100", page(rows[50:], ""))
		var ids []string
		for _, r := range rows[:50] {
			ids = append(ids, r.(map[string]any)["node_id"].(string))
		}
		live := map[string]bool{}
		for _, id := range ids {
			live[id] = true
		}
		rb, rep := existsReply(t, rows[:50], live)
		f.ExpectBody("POST", "/graphql", rb, rep)
	})
	if st.LowerBoundParts["comments"] != 2 || st.Pages["comments"] != 2 {
		t.Errorf("comments: lower bound %d, pages %d; want 2 and 2", st.LowerBoundParts["comments"], st.Pages["comments"])
	}
}

// A server that keeps announcing empty pages is bounded by what it declared: once the pages
// read cover the declared size with a page to spare, the listing ends incomplete (a gap),
// never in an endless walk. An empty page that announces another before that is followed.
func TestEmptyPagesPastTheDeclaredSizeAreBounded(t *testing.T) {
	s := ghscenario.PaginationEmptyPage() // 100 comments, then an announced empty page 2
	c := build(t, s)
	p2 := find(t, c, "/issues/101/comments?page=2")
	base := ghscenario.APIURL + "/repos/octo-org/Hello-World/issues/101/comments"
	a, st := acquireOptional(t, s, c, func(f *httpfake.Server) {
		for n := 2; n <= 50; n++ {
			r := replyOf(t, c.Interactions[p2])
			r.Header.Set("Link", fmt.Sprintf(`<%s?page=%d&per_page=100>; rel="next"`, base, n+1))
			e := f.Expect("GET", fmt.Sprintf("/repos/octo-org/Hello-World/issues/101/comments?page=%d&per_page=100", n), r)
			if n > 2 {
				e.Optional()
			}
		}
	})
	if n := st.RequestsByEndpoint["GET /repos/{owner}/{repo}/issues/{number}/comments"]; n != 2 {
		t.Errorf("%d comment pages requested, want 2 (the page past the declared 100 ends it)", n)
	}
	if len(a.Comments) != 100 || gapOf(a.Outcomes.Comments, "fetch_failed") != 1 {
		t.Errorf("%d comments, gaps %+v; want 100 and fetch_failed 1", len(a.Comments), a.Outcomes.Comments)
	}
}

// The drift check is part of its listing: when it cannot be made, the listing is unproven and
// its scopes get a fetch_failed gap.
func TestDriftCheckFailureIsAGap(t *testing.T) {
	s := ghscenario.PaginationExact()
	c := build(t, s)
	i := find(t, c, "Exists")
	a, _ := acquireOptional(t, s, c, func(f *httpfake.Server) {
		m, pq, b := target(t, c, i)
		f.ExpectBody(m, pq, b, persist4...)
	})
	if len(a.Comments) != 200 || gapOf(a.Outcomes.Comments, "fetch_failed") != 1 || gapOf(a.Outcomes.AgentRuns, "fetch_failed") != 1 {
		t.Errorf("%d comments, gaps %+v; want 200, comments and agent_runs fetch_failed 1", len(a.Comments), a.Outcomes)
	}
}

// The same bound holds for a GraphQL cursor walk with a declared total: review threads whose
// pages keep announcing empty pages (with fresh cursors) past the declared three are read no
// further than one page past them; the read from the other end then holds the three.
func TestEmptyCursorPagesPastTheDeclaredSizeAreBounded(t *testing.T) {
	s := ghscenario.PR()
	c := build(t, s)
	i := find(t, c, "Threads")
	var doc map[string]any
	if err := json.Unmarshal(body(t, c, i), &doc); err != nil {
		t.Fatal(err)
	}
	rt := doc["data"].(map[string]any)["repository"].(map[string]any)["pullRequest"].(map[string]any)["reviewThreads"].(map[string]any)
	rt["pageInfo"] = map[string]any{"hasNextPage": true, "endCursor": "c1"}
	a, st := acquireOptional(t, s, c, func(f *httpfake.Server) {
		m, pq, b := target(t, c, i)
		f.ExpectBody(m, pq, b, httpfake.JSON(200, doc))
		for n := 1; n <= 20; n++ {
			vars := map[string]any{"owner": s.Owner, "name": s.Repo, "number": s.Number, "after": fmt.Sprintf("c%d", n)}
			rb, err := github.GraphQLRequestBody("Threads", vars)
			if err != nil {
				t.Fatal(err)
			}
			empty := map[string]any{"data": map[string]any{"repository": map[string]any{"pullRequest": map[string]any{"reviewThreads": map[string]any{
				"totalCount": 3, "pageInfo": map[string]any{"hasNextPage": true, "endCursor": fmt.Sprintf("c%d", n+1)}, "nodes": []any{}}}}}}
			f.ExpectBody("POST", "/graphql", rb, httpfake.JSON(200, empty)).Optional()
		}
		fromEnd := threadsFromEnd(t, s)
		m, pq, b = target(t, fromEnd, 0)
		f.ExpectBody(m, pq, b, replyOf(t, fromEnd.Interactions[0]))
	})
	if n := st.RequestsByEndpoint["POST /graphql Threads"]; n != 2 {
		t.Errorf("%d Threads pages requested, want 2 (the empty page past the declared 3 ends the walk)", n)
	}
	if len(a.Threads) != 3 || a.Outcomes.Reviews != nil {
		t.Errorf("%d threads, gaps %+v; want 3 and none", len(a.Threads), a.Outcomes.Reviews)
	}
}

// A 4xx answer is the listing's, not the page's (GitHub answers 422 past its pagination
// limit): the listing ends there, the later pages are not tried one by one. Read one page at
// a time that is 2 requests; with pages read ahead (the first page's rel="last" declared
// them) at most the 4 pages in flight beyond it, and the same gap.
func TestClientErrorPageEndsTheListing(t *testing.T) {
	for _, tc := range []struct{ concurrency, most int }{{1, 2}, {4, 2 + 4}} {
		s := ghscenario.Large()
		c := build(t, s)
		i := find(t, c, "/issues/5000/comments?page=2")
		a, st := acquireOptionalAt(t, s, c, tc.concurrency, func(f *httpfake.Server) {
			m, pq, b := target(t, c, i)
			f.ExpectBody(m, pq, b, httpfake.JSON(422, `{"message":"Pagination is limited for this resource.","documentation_url":"https://docs.github.com/rest","status":"422"}`))
		})
		n := st.RequestsByEndpoint["GET /repos/{owner}/{repo}/issues/{number}/comments"]
		if n > tc.most || (tc.concurrency == 1 && n != 2) {
			t.Errorf("concurrency %d: %d comment pages requested, want at most %d", tc.concurrency, n, tc.most)
		}
		if gapOf(a.Outcomes.Comments, "fetch_failed") != 900 {
			t.Errorf("concurrency %d: comments gaps %+v, want fetch_failed 900", tc.concurrency, a.Outcomes.Comments)
		}
	}
}
