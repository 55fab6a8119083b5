package github_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/internal/forge/github"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/test/ghscenario"
	"github.com/forgectx/forgectx/test/httpfake"
)

// foreignHost is a loopback server standing for a host other than the API's: it counts the
// requests it receives and the Authorization headers among them.
type foreignHost struct {
	*httptest.Server
	requests, withAuth atomic.Int32
}

func newForeignHost(t *testing.T, body string) *foreignHost {
	f := &foreignHost{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		if r.Header.Get("Authorization") != "" {
			f.withAuth.Add(1)
		}
		w.Write([]byte(body))
	}))
	t.Cleanup(f.Close)
	return f
}

// replace returns c with interaction i's reply swapped for r (registered in the same place).
func expectWith(t *testing.T, f *httpfake.Server, c *cassette.Cassette, i int, replies ...httpfake.Reply) {
	t.Helper()
	m, pq, b := target(t, c, i)
	f.ExpectBody(m, pq, b, replies...)
	f.ExpectCassette(without(c, i))
}

// A repository renamed or transferred: GraphQL resolves the old name and reports the current
// one, which every later request uses; a REST 301 to the same API origin (GitHub's answer for
// the old name) is followed; a redirect to another host is not followed (the token would go
// with it) and the list is a gap, never silently empty.
func TestTransferredRepository(t *testing.T) {
	s := ghscenario.Issue()
	c := build(t, s)
	baseline, _, err := acquireFake(t, s, c, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := acqBytes(t, baseline)
	entity := find(t, c, "Entity")
	comments := find(t, c, "/issues/7/comments")

	t.Run("GraphQL resolves the old name; REST uses the current one", func(t *testing.T) {
		oldBody, err := github.GraphQLRequestBody("Entity", map[string]any{"owner": "old-org", "name": "Old-Name", "number": s.Number, "labelsAfter": nil})
		if err != nil {
			t.Fatal(err)
		}
		fake := httpfake.New(t)
		fake.ExpectBody("POST", "/graphql", oldBody, httpfake.JSON(200, body(t, c, entity)))
		fake.ExpectCassette(without(c, entity))
		cl, err := github.New(fastOptions(fake.URL))
		if err != nil {
			t.Fatal(err)
		}
		a, err := cl.Acquire(context.Background(), forge.Ref{Forge: "github", Repo: "old-org/Old-Name", Number: s.Number}, testProfile(kindOf(s)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(acqBytes(t, a), want) {
			t.Error("acquisition through the old name differs")
		}
	})
	t.Run("same-origin 301 is followed", func(t *testing.T) {
		a, _, err := acquireFake(t, s, c, func(f *httpfake.Server, c *cassette.Cassette) {
			expectWith(t, f, c, comments, httpfake.Reply{Status: 301, Header: http.Header{"Location": {"/repositories/123456789/issues/7/comments?per_page=100"}}})
			f.Expect("GET", "/repositories/123456789/issues/7/comments?per_page=100", httpfake.JSON(200, body(t, c, comments)))
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(acqBytes(t, a), want) {
			t.Error("acquisition through a 301 differs")
		}
	})
	t.Run("301 to another host is not followed", func(t *testing.T) {
		other := newForeignHost(t, "[]")
		a, _, err := acquireFake(t, s, c, func(f *httpfake.Server, c *cassette.Cassette) {
			// The comments' authors are never referenced: no lookups for them.
			rest := c
			for _, login := range []string{"alice", "mallory", "frank"} {
				rest = without(rest, find(t, rest, "/collaborators/"+login+"/permission"))
			}
			expectWith(t, f, rest, find(t, rest, "/issues/7/comments"), httpfake.Reply{Status: 301, Header: http.Header{"Location": {other.URL + "/repos/octo-org/Hello-World/issues/7/comments?per_page=100"}}})
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if other.requests.Load() != 0 {
			t.Errorf("the other host received %d requests", other.requests.Load())
		}
		if len(a.Comments) != 0 || gapCount(a.Outcomes.Comments, acquisition.GapFetchFailed) != len(s.Comments) {
			t.Errorf("comments %d, gaps %+v: want none kept and fetch_failed %d", len(a.Comments), a.Outcomes.Comments, len(s.Comments))
		}
	})
}

// The job-log endpoint's 302 is the only redirect the adapter follows off the API origin, and
// it follows it with the token-less client; a 301 on the logs endpoint is followed only to
// the API origin.
func TestJobLogRedirects(t *testing.T) {
	s := ghscenario.PR()
	c := build(t, s)
	logs := find(t, c, "/actions/jobs/502/logs")
	download := find(t, c, "/job-502.txt")
	logText := string(body(t, c, download))
	logOf := func(a *acquisition.Acquisition) *acquisition.Log {
		for _, ck := range a.Checks {
			if ck.ID == "CR_kwDOLq3Xz88AAAAAAAAB9g" || ck.Name == "test" {
				return ck.Log
			}
		}
		return nil
	}
	t.Run("301 on the API origin, then 302 to storage without the token", func(t *testing.T) {
		storage := newForeignHost(t, logText)
		a, _, err := acquireFake(t, s, c, func(f *httpfake.Server, c *cassette.Cassette) {
			m, pq, b := target(t, c, logs)
			f.ExpectBody(m, pq, b, httpfake.Reply{Status: 301, Header: http.Header{"Location": {"/repositories/123456789/actions/jobs/502/logs"}}})
			f.Expect("GET", "/repositories/123456789/actions/jobs/502/logs", httpfake.Redirect(storage.URL+"/actions-results/job-502.txt?sig=SAS"))
			f.ExpectCassette(without(without(c, download), logs))
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if l := logOf(a); l == nil || l.Outcome != acquisition.LogFetched || string(l.Content) != logText {
			t.Errorf("log = %+v", l)
		}
		if storage.requests.Load() != 1 || storage.withAuth.Load() != 0 {
			t.Errorf("storage: %d requests, %d with Authorization", storage.requests.Load(), storage.withAuth.Load())
		}
	})
	t.Run("301 to another host is not followed", func(t *testing.T) {
		other := newForeignHost(t, "")
		a, _, err := acquireFake(t, s, c, func(f *httpfake.Server, c *cassette.Cassette) {
			m, pq, b := target(t, c, logs)
			f.ExpectBody(m, pq, b, httpfake.Reply{Status: 301, Header: http.Header{"Location": {other.URL + "/repos/octo-org/Hello-World/actions/jobs/502/logs"}}})
			f.ExpectCassette(without(without(c, download), logs))
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if l := logOf(a); l == nil || l.Outcome != acquisition.LogFetchFailed {
			t.Errorf("log = %+v, want fetch_failed", l)
		}
		if other.requests.Load() != 0 {
			t.Errorf("the other host received %d requests (the token would have gone with them)", other.requests.Load())
		}
	})
}

// GraphQL answers 200 with an errors array next to partial data (a field GitHub could not
// resolve is null): the page is not trusted, so the scope gets a fetch_failed gap — never a
// list silently missing what the error hid.
func TestGraphQLErrorsWithPartialDataAreAGap(t *testing.T) {
	s := ghscenario.PR()
	c := build(t, s)
	i := find(t, c, "Threads")
	var page map[string]any
	if err := json.Unmarshal(body(t, c, i), &page); err != nil {
		t.Fatal(err)
	}
	page["errors"] = []any{map[string]any{"type": "FORBIDDEN", "path": []any{"repository", "pullRequest", "reviewThreads", "nodes", 0, "resolvedBy"},
		"message": "Resource not accessible by integration"}}
	a, _, err := acquireFake(t, s, c, func(f *httpfake.Server, c *cassette.Cassette) {
		// The thread comments' authors are then never referenced: their lookups do not happen.
		rest := without(c, find(t, c, "/collaborators/mallory/permission"))
		expectWith(t, f, rest, find(t, rest, "Threads"), httpfake.JSON(200, page))
		// The read from the other end answers the same way.
		m, pq, b := target(t, threadsFromEnd(t, s), 0)
		f.ExpectBody(m, pq, b, httpfake.JSON(200, page))
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Threads) != 0 {
		t.Errorf("threads kept from an errored page: %d", len(a.Threads))
	}
	for scope, gaps := range map[string][]acquisition.Gap{"reviews": a.Outcomes.Reviews, "comments": a.Outcomes.Comments} {
		if gapCount(gaps, acquisition.GapFetchFailed) == 0 {
			t.Errorf("%s: no fetch_failed gap: %+v", scope, gaps)
		}
	}
}

// The entity is required: a number GitHub does not know (GraphQL NOT_FOUND with null data), or
// a number whose kind contradicts the profile (an issue asked for as a change proposal), fails
// the acquisition with a *forge.EntityError and a message naming the number, before any other request.
func TestEntityNotFoundOrOfTheOtherKind(t *testing.T) {
	s := ghscenario.Issue()
	c := build(t, s)
	entity := find(t, c, "Entity")
	t.Run("not found", func(t *testing.T) {
		fake := httpfake.New(t)
		m, pq, b := target(t, c, entity)
		fake.ExpectBody(m, pq, b, httpfake.JSON(200, `{"data":{"repository":{"id":"R_kgDOLq3Xzw","nameWithOwner":"octo-org/Hello-World","issueOrPullRequest":null}},"errors":[{"type":"NOT_FOUND","path":["repository","issueOrPullRequest"],"locations":[{"line":5,"column":5}],"message":"Could not resolve to an issue or pull request with the number of 7."}]}`))
		cl, _ := github.New(fastOptions(fake.URL))
		_, err := cl.Acquire(context.Background(), refOf(s), testProfile(kindOf(s)))
		var ge *github.GraphQLError
		var ee *forge.EntityError
		if !errors.As(err, &ee) || ee.Code != acquisition.GapAuthorizationFailed || !errors.As(err, &ge) || !ge.NotFound() || !strings.Contains(err.Error(), "#7") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("an issue asked for as a pull request", func(t *testing.T) {
		fake := httpfake.New(t)
		m, pq, b := target(t, c, entity)
		fake.ExpectBody(m, pq, b, httpfake.JSON(200, body(t, c, entity)))
		cl, _ := github.New(fastOptions(fake.URL))
		_, err := cl.Acquire(context.Background(), refOf(s), testProfile(acquisition.KindChangeProposal))
		var ee *forge.EntityError
		if !errors.As(err, &ee) || ee.Code != acquisition.GapInvalidMetadata || !strings.Contains(err.Error(), "work_item") {
			t.Errorf("err = %v", err)
		}
	})
}

// A successful response that spends the last of the quota (x-ratelimit-remaining: 0, reset in
// an hour) must not make every later request fail without being sent: the next request is
// made, and a real rate-limit answer to it is what the retry policy waits on.
func TestQuotaSpentOnASuccessfulPageDoesNotStopLaterRequests(t *testing.T) {
	s := ghscenario.Issue()
	c := build(t, s)
	baseline, _, err := acquireFake(t, s, c, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	i := find(t, c, "/issues/7/comments")
	spent := httpfake.JSON(200, body(t, c, i))
	spent.Header.Set("X-Ratelimit-Limit", "5000")
	spent.Header.Set("X-Ratelimit-Remaining", "0")
	spent.Header.Set("X-Ratelimit-Reset", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10))
	a, _, err := acquireFake(t, s, c, func(f *httpfake.Server, c *cassette.Cassette) { expectWith(t, f, c, i, spent) }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(acqBytes(t, a), acqBytes(t, baseline)) {
		t.Errorf("actors after the quota-spending page: %+v", a.Actors)
	}
}

// The token never reaches a log line or the cassette, even when GitHub echoes it in a
// response body and in a Link header (a pagination URL carrying it), and even on retries.
func TestTokenNeverLoggedOrRecorded(t *testing.T) {
	const token = "ghp_LeakCanary0123456789abcdefghijklmnopq"
	s := ghscenario.PaginationExact()
	c := build(t, s)
	p1 := find(t, c, "/comments?per_page=100")
	var items []map[string]any
	if err := json.Unmarshal(body(t, c, p1), &items); err != nil {
		t.Fatal(err)
	}
	items[0]["body"] = "the token is " + token
	r1 := httpfake.JSON(200, items)
	r1.Header = c.Interactions[p1].Response.Header.Clone()
	r1.Header.Del("Content-Length")
	// GitHub's Link header, with the token smuggled into the next page's query.
	r1.Header.Set("Link", `</repos/octo-org/Hello-World/issues/100/comments?page=2&per_page=100&x=`+token+`>; rel="next", </repos/octo-org/Hello-World/issues/100/comments?page=2&per_page=100>; rel="last"`)
	fake := httpfake.New(t)
	m, pq, b := target(t, c, p1)
	fake.ExpectBody(m, pq, b, httpfake.ServerError(), r1) // a retry, so the retry log fires
	fake.ExpectCassette(without(c, p1))

	var logBuf bytes.Buffer
	dir := filepath.Join(t.TempDir(), "cassette")
	// Recording is configured one way for every forge: forge.Options.Record, applied by
	// forge.Connect around the provider's transport.
	conn, err := forge.Connect(github.Provider(), forge.Options{APIURL: fake.URL, SourceHost: "github.com", Token: token, Record: dir,
		Retry: forge.Retry{Max: 3, WaitMin: time.Millisecond, WaitMax: 5 * time.Millisecond, MaxServerWait: 2 * time.Second},
		Log:   zerolog.New(&logBuf).Level(zerolog.TraceLevel)}, true)
	if err != nil {
		t.Fatal(err)
	}
	a, err := conn.Acquirer.Acquire(context.Background(), refOf(s), testProfile(kindOf(s)))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Comments) != len(s.Comments) {
		t.Fatalf("%d comments", len(a.Comments))
	}
	if !strings.Contains(logBuf.String(), "retrying") {
		t.Errorf("no retry was logged: the log check would prove nothing: %s", logBuf.String())
	}
	if strings.Contains(logBuf.String(), token) {
		t.Error("the token reached the log")
	}
	files := 0
	err = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(p)
		if bytes.Contains(b, []byte(token)) || bytes.Contains(b, []byte("ghp_LeakCanary")) {
			t.Errorf("%s holds the token", filepath.Base(p))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < len(c.Interactions) {
		t.Errorf("only %d cassette files", files)
	}
	// The recorded cassette replays offline to the same acquisition.
	rc, err := cassette.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, _, _ := acquireReplay(t, s, rc)
	if len(got.Comments) != len(s.Comments) || !strings.Contains(got.Comments[0].Body, cassette.Redacted) {
		t.Errorf("replay: %d comments, first body %q", len(got.Comments), got.Comments[0].Body)
	}
}

// A thread location GitHub reports outside the schema (line 0 or negative) is not rewritten to
// "no line": the thread reaches the assembler with the bad value and is omitted there as
// invalid_metadata in the reviews scope.
func TestThreadLineOutsideTheSchemaIsInvalidMetadata(t *testing.T) {
	s := ghscenario.PR()
	c := build(t, s)
	i := find(t, c, "Threads")
	var page map[string]any
	if err := json.Unmarshal(body(t, c, i), &page); err != nil {
		t.Fatal(err)
	}
	nodes := page["data"].(map[string]any)["repository"].(map[string]any)["pullRequest"].(map[string]any)["reviewThreads"].(map[string]any)["nodes"].([]any)
	nodes[0].(map[string]any)["line"] = 0
	a, _, err := acquireFake(t, s, c, func(f *httpfake.Server, c *cassette.Cassette) { expectWith(t, f, c, i, httpfake.JSON(200, page)) }, nil)
	if err != nil {
		t.Fatal(err)
	}
	profile := testProfile(kindOf(s))
	tree, err := snapshot.Assemble(context.Background(), a, snapshot.Config{Profile: profile, Category: "observation", Filter: filter.New(nil)})
	if err != nil {
		t.Fatal(err)
	}
	var idx struct {
		Gaps []struct {
			Scope, Code string
			Count       int
		} `json:"gaps"`
	}
	if err := json.Unmarshal(tree.Index, &idx); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, g := range idx.Gaps {
		found = found || (g.Scope == acquisition.ScopeReviews && g.Code == acquisition.GapInvalidMetadata)
	}
	if !found {
		t.Errorf("no reviews invalid_metadata gap for a thread at line 0: %+v", idx.Gaps)
	}
}
