package github_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/test/ghscenario"
	"github.com/forgectx/forgectx/test/httpfake"
)

// find returns the index of the first interaction whose request URL path+query contains sub
// (or, for GraphQL, whose body names the operation sub).
func find(t *testing.T, c *cassette.Cassette, sub string) int {
	t.Helper()
	for i, in := range c.Interactions {
		u, _ := url.Parse(in.Request.URL)
		if strings.Contains(u.RequestURI(), sub) {
			return i
		}
		if b, _ := in.Request.Body.Bytes(); len(b) > 0 && bytes.Contains(b, []byte(`"operationName":"`+sub+`"`)) {
			return i
		}
	}
	t.Fatalf("no interaction matches %q", sub)
	return -1
}

// target is the request (method, path+query, body) of interaction i.
func target(t *testing.T, c *cassette.Cassette, i int) (string, string, []byte) {
	t.Helper()
	in := c.Interactions[i]
	u, _ := url.Parse(in.Request.URL)
	b, _ := in.Request.Body.Bytes()
	return in.Request.Method, u.RequestURI(), b
}

func body(t *testing.T, c *cassette.Cassette, i int) []byte {
	t.Helper()
	b, err := c.Interactions[i].Response.Body.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// threadsFromEnd is the scenario's backward review-thread pages (ghscenario.ThreadsFromEnd).
func threadsFromEnd(t *testing.T, s *ghscenario.Scenario) *cassette.Cassette {
	t.Helper()
	ins, err := ghscenario.ThreadsFromEnd(s)
	if err != nil {
		t.Fatal(err)
	}
	return &cassette.Cassette{Meta: cassette.Meta{Version: cassette.Version, Forge: "github", APIURL: ghscenario.APIURL}, Interactions: ins}
}

// without returns c minus interaction i.
func without(c *cassette.Cassette, i int) *cassette.Cassette {
	out := &cassette.Cassette{Meta: c.Meta}
	out.Interactions = append(append(out.Interactions, c.Interactions[:i]...), c.Interactions[i+1:]...)
	return out
}

// Faults injected by the replay server end in a retry that succeeds — the acquisition is
// byte-identical to the fault-free one — never in silent loss.
func TestTransientFaultsEndInASuccessfulRetry(t *testing.T) {
	s := ghscenario.PR()
	clean := build(t, s)
	baseline, baseStats, err := acquireFake(t, s, clean, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := acqBytes(t, baseline)
	for _, tc := range []struct {
		name    string
		at      string
		faults  []httpfake.Reply
		minWait time.Duration
	}{
		{"500", "/issues/42/comments", []httpfake.Reply{httpfake.ServerError()}, 0},
		{"502 twice", "/pulls/42/reviews", []httpfake.Reply{httpfake.BadGateway(), httpfake.BadGateway()}, 0},
		{"403 secondary rate limit with Retry-After", "/check-runs", []httpfake.Reply{httpfake.SecondaryRateLimit(1)}, time.Second},
		{"429 with Retry-After", "/collaborators/alice/permission", []httpfake.Reply{httpfake.TooManyRequests(1)}, time.Second},
		{"403 primary limit until x-ratelimit-reset", "/actions/runs?", []httpfake.Reply{httpfake.PrimaryRateLimit(time.Now())}, 0},
		{"timeout", "/collaborators/carol/permission", []httpfake.Reply{httpfake.Timeout()}, 0},
		{"truncated JSON (GraphQL)", "Threads", nil, 0},
		{"truncated JSON (REST)", "/issues/42/comments", nil, 0},
		{"connection cut mid-body", "/actions/runs/9001/jobs", nil, 0},
		{"log download 502", "/job-502.txt", []httpfake.Reply{httpfake.BadGateway()}, 0},
		{"403 secondary limit without Retry-After", "/pulls/42/reviews", []httpfake.Reply{httpfake.JSON(403, `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}`)}, time.Second},
		{"GraphQL RATE_LIMITED until x-ratelimit-reset", "Dismissals", []httpfake.Reply{graphQLRateLimited()}, 0},
		{"GraphQL RATE_LIMITED with data null and no headers", "Dismissals", []httpfake.Reply{httpfake.JSON(200, `{"data":null,"errors":[{"type":"RATE_LIMITED","code":"graphql_rate_limit","message":"API rate limit exceeded for user ID 1."}]}`)}, time.Second},
		{"GraphQL RATE_LIMITED as a 403", "Threads", []httpfake.Reply{httpfake.JSON(403, `{"errors":[{"type":"RATE_LIMITED","message":"API rate limit exceeded for user ID 1."}]}`)}, time.Second},
		{"GraphQL secondary rate limit 403", "Entity", []httpfake.Reply{httpfake.JSON(403, `{"documentation_url":"https://docs.github.com/graphql/overview/rate-limits-and-node-limits-for-the-graphql-api#secondary-rate-limits","message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID 0000:0000:0000:0000:00000000."}`)}, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i := find(t, clean, tc.at)
			faults := tc.faults
			if faults == nil {
				if strings.Contains(tc.name, "cut") {
					faults = []httpfake.Reply{httpfake.CutConnection(body(t, clean, i))}
				} else {
					faults = []httpfake.Reply{httpfake.TruncatedJSON(body(t, clean, i))}
				}
			}
			start := time.Now()
			a, st, err := acquireFake(t, s, clean, func(f *httpfake.Server, c *cassette.Cassette) {
				m, pq, b := target(t, c, i)
				f.ExpectBody(m, pq, b, faults...)
				f.ExpectCassette(c)
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := acqBytes(t, a); !bytes.Equal(got, want) {
				t.Errorf("acquisition after a retried fault differs from the fault-free one")
			}
			if st.Requests != baseStats.Requests+len(faults) {
				t.Errorf("requests = %d, want %d (+%d faults)", st.Requests, baseStats.Requests, len(faults))
			}
			if el := time.Since(start); el < tc.minWait {
				t.Errorf("finished in %v: Retry-After %v not honoured", el, tc.minWait)
			}
		})
	}
}

// graphQLRateLimited is GitHub's GraphQL primary-limit answer: HTTP 200, an errors-only body,
// x-ratelimit-remaining 0 and the reset time.
func graphQLRateLimited() httpfake.Reply {
	r := httpfake.JSON(200, `{"errors":[{"type":"RATE_LIMITED","code":"graphql_rate_limit","message":"API rate limit exceeded for user ID 1."}]}`)
	r.Header.Set("X-Ratelimit-Remaining", "0")
	r.Header.Set("X-Ratelimit-Reset", strconv.FormatInt(time.Now().Unix(), 10))
	return r
}

// A fault that persists past the retries is a gap on the affected scope (with the partial
// list kept), never a shorter list presented as complete.
func TestPersistentFaultsBecomeGaps(t *testing.T) {
	persist := func(r httpfake.Reply) []httpfake.Reply { return []httpfake.Reply{r, r, r, r} } // RetryMax 3 → 4 attempts
	t.Run("comments page 2 fails", func(t *testing.T) {
		s := ghscenario.PaginationExact()
		c := build(t, s)
		i := find(t, c, "comments?page=2")
		a, _, err := acquireFake(t, s, c, func(f *httpfake.Server, _ *cassette.Cassette) {
			m, pq, b := target(t, c, i)
			f.ExpectBody(m, pq, b, persist(httpfake.BadGateway())...)
			// A failed listing is not drift-checked.
			rest := without(c, i)
			f.ExpectCassette(without(rest, find(t, rest, "Exists")))
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Comments) != 100 {
			t.Errorf("kept %d comments, want the 100 read", len(a.Comments))
		}
		if len(a.Outcomes.Comments) != 1 || a.Outcomes.Comments[0] != (acquisition.Gap{Code: "fetch_failed", Count: 100}) {
			t.Errorf("comments gaps = %+v, want fetch_failed 100", a.Outcomes.Comments)
		}
	})
	t.Run("threads fail", func(t *testing.T) {
		s := ghscenario.PR()
		c := build(t, s)
		i := find(t, c, "Threads")
		// The thread comments' authors are then never referenced: their lookups do not happen.
		a, _, err := acquireFake(t, s, c, func(f *httpfake.Server, _ *cassette.Cassette) {
			m, pq, b := target(t, c, i)
			f.ExpectBody(m, pq, b, persist(httpfake.ServerError())...)
			// The read from the other end fails too.
			fromEnd := threadsFromEnd(t, s)
			m, pq, b = target(t, fromEnd, 0)
			f.ExpectBody(m, pq, b, persist(httpfake.ServerError())...)
			rest := without(c, i)
			j := find(t, rest, "/collaborators/mallory/permission")
			f.ExpectCassette(without(rest, j))
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Threads) != 0 {
			t.Errorf("threads = %d", len(a.Threads))
		}
		for scope, gaps := range map[string][]acquisition.Gap{"reviews": a.Outcomes.Reviews, "comments": a.Outcomes.Comments} {
			if len(gaps) != 1 || gaps[0] != (acquisition.Gap{Code: "fetch_failed", Count: 3}) {
				t.Errorf("%s gaps = %+v, want fetch_failed 3", scope, gaps)
			}
		}
	})
	t.Run("log download fails", func(t *testing.T) {
		s := ghscenario.PR()
		c := build(t, s)
		i := find(t, c, "/job-502.txt")
		a, _, err := acquireFake(t, s, c, func(f *httpfake.Server, _ *cassette.Cassette) {
			m, pq, b := target(t, c, i)
			f.ExpectBody(m, pq, b, persist(httpfake.ServerError())...)
			f.ExpectCassette(without(c, i))
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, ck := range a.Checks {
			if ck.Name == "test" && (ck.Log == nil || ck.Log.Outcome != acquisition.LogFetchFailed || len(ck.Log.Content) != 0) {
				t.Errorf("log = %+v, want fetch_failed", ck.Log)
			}
		}
	})
	t.Run("permission lookup fails", func(t *testing.T) {
		s := ghscenario.Issue()
		c := build(t, s)
		i := find(t, c, "/collaborators/alice/permission")
		a, _, err := acquireFake(t, s, c, func(f *httpfake.Server, _ *cassette.Cassette) {
			m, pq, b := target(t, c, i)
			f.ExpectBody(m, pq, b, persist(httpfake.BadGateway())...)
			f.ExpectCassette(without(c, i))
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if ac := actorByLogin(a, "alice"); ac == nil || ac.Role != nil || ac.RoleVerified {
			t.Errorf("alice = %+v, want role null, unverified", ac)
		}
	})
	t.Run("entity fails", func(t *testing.T) {
		s := ghscenario.Issue()
		c := build(t, s)
		i := find(t, c, "Entity")
		_, st, err := acquireFake(t, s, c, func(f *httpfake.Server, _ *cassette.Cassette) {
			m, pq, b := target(t, c, i)
			f.ExpectBody(m, pq, b, persist(httpfake.BadGateway())...)
		}, nil)
		var ee *forge.EntityError
		if !errors.As(err, &ee) || ee.Code != acquisition.GapFetchFailed {
			t.Fatalf("err = %v, want a fetch_failed forge.EntityError", err)
		}
		if st == nil || st.Requests != 4 {
			t.Errorf("stats of a failed run = %+v", st)
		}
	})
}

// A page that changes between reads (an insertion shifts page 2 so it repeats page 1's last
// item) is detected and the list re-read; if it keeps changing, the duplicates are a gap.
func TestPageChangingBetweenReads(t *testing.T) {
	s := ghscenario.PaginationExact()
	c := build(t, s)
	p1, p2 := find(t, c, "comments?per_page=100"), find(t, c, "comments?page=2")
	var page1, page2 []map[string]any
	if err := json.Unmarshal(body(t, c, p1), &page1); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(body(t, c, p2), &page2); err != nil {
		t.Fatal(err)
	}
	shifted := append([]map[string]any{page1[len(page1)-1]}, page2[:len(page2)-1]...)
	withHeader := func(r httpfake.Reply, i int) httpfake.Reply {
		for k, v := range c.Interactions[i].Response.Header {
			r.Header[k] = v
		}
		return r
	}
	shiftedReply := withHeader(httpfake.JSON(200, shifted), p2)
	page1Again := withHeader(httpfake.JSON(200, body(t, c, p1)), p1)
	t.Run("re-read succeeds", func(t *testing.T) {
		a, st, err := acquireFake(t, s, c, func(f *httpfake.Server, c *cassette.Cassette) {
			_, pq2, _ := target(t, c, p2)
			f.Expect("GET", pq2, shiftedReply)
			f.ExpectCassette(c)
			_, pq1, _ := target(t, c, p1)
			f.Expect("GET", pq1, page1Again)
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Comments) != 200 || a.Outcomes.Comments != nil {
			t.Errorf("%d comments, gaps %+v", len(a.Comments), a.Outcomes.Comments)
		}
		if st.Pages["comments"] != 4 {
			t.Errorf("comment pages read = %d, want 4 (two passes)", st.Pages["comments"])
		}
	})
	t.Run("keeps changing", func(t *testing.T) {
		a, _, err := acquireFake(t, s, c, func(f *httpfake.Server, c *cassette.Cassette) {
			_, pq2, _ := target(t, c, p2)
			_, pq1, _ := target(t, c, p1)
			f.Expect("GET", pq2, shiftedReply, shiftedReply)
			f.Expect("GET", pq1, page1Again)
			// A list that never reads consistently is not drift-checked.
			rest := without(c, p2)
			f.ExpectCassette(without(rest, find(t, rest, "Exists")))
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Outcomes.Comments) != 1 || a.Outcomes.Comments[0].Code != "fetch_failed" {
			t.Errorf("gaps = %+v, want fetch_failed", a.Outcomes.Comments)
		}
	})
}

// The same holds for GraphQL review threads: a shifted page is detected by its repeated thread
// and the thread list is read again.
func TestThreadPageChangingBetweenReads(t *testing.T) {
	s := ghscenario.Large()
	c := build(t, s)
	c = without(c, find(t, c, s.OtherSHA)) // the other revision's checks are never requested
	var pages []int
	for i, in := range c.Interactions {
		if b, _ := in.Request.Body.Bytes(); bytes.Contains(b, []byte(`"operationName":"Threads"`)) {
			pages = append(pages, i)
		}
	}
	if len(pages) != 3 {
		t.Fatalf("%d thread pages", len(pages))
	}
	nodes := func(i int) (map[string]any, []any) {
		var doc map[string]any
		if err := json.Unmarshal(body(t, c, i), &doc); err != nil {
			t.Fatal(err)
		}
		rt := doc["data"].(map[string]any)["repository"].(map[string]any)["pullRequest"].(map[string]any)["reviewThreads"].(map[string]any)
		return doc, rt["nodes"].([]any)
	}
	_, first := nodes(pages[0])
	doc, second := nodes(pages[1])
	rt := doc["data"].(map[string]any)["repository"].(map[string]any)["pullRequest"].(map[string]any)["reviewThreads"].(map[string]any)
	rt["nodes"] = append([]any{first[len(first)-1]}, second[:len(second)-1]...)
	a, st, err := acquireFake(t, s, c, func(f *httpfake.Server, c *cassette.Cassette) {
		m, pq, b := target(t, c, pages[1])
		f.ExpectBody(m, pq, b, httpfake.JSON(200, doc))
		f.ExpectCassette(c)
		for _, p := range []int{pages[0], pages[2]} {
			m, pq, b := target(t, c, p)
			f.ExpectBody(m, pq, b, httpfake.JSON(200, body(t, c, p)))
		}
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Threads) != 300 || a.Outcomes.Reviews != nil || a.Outcomes.Comments != nil {
		t.Errorf("%d threads, gaps %+v", len(a.Threads), a.Outcomes)
	}
	if st.Pages["review_threads"] != 6 {
		t.Errorf("thread pages read = %d, want 6 (two passes)", st.Pages["review_threads"])
	}
}
