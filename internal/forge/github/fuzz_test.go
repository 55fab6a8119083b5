package github

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// bodyTransport answers every request with the same status and body: the fuzzer controls all
// forge input at once.
type bodyTransport struct {
	body   []byte
	status int
}

func (b bodyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	h := http.Header{"Content-Type": {"application/json"}}
	if strings.HasSuffix(req.URL.Path, "/logs") {
		h.Set("Location", "https://blob.invalid/log")
		return &http.Response{StatusCode: http.StatusFound, Header: h, Body: http.NoBody, Request: req}, nil
	}
	return &http.Response{StatusCode: b.status, Header: h, Body: io.NopCloser(bytes.NewReader(b.body)), Request: req}, nil
}

// FuzzAcquireUntrustedResponses feeds arbitrary API responses to a whole acquisition: it must
// return an acquisition or an error, never panic or hang.
func FuzzAcquireUntrustedResponses(f *testing.F) {
	f.Add([]byte(`{"data":{"repository":{"id":"R_1","nameWithOwner":"o/r","issueOrPullRequest":{"__typename":"PullRequest","id":"PR_1","number":1,"pullRequestState":"OPEN","merged":false,"headRefOid":"6dcb09b5b57875f334f61aebed695e2e4193db5e","author":{"__typename":"Bot","login":"x","id":"B_1"},"labels":{"totalCount":1,"pageInfo":{"hasNextPage":false},"nodes":[{"name":"a"}]}}}}}`), 200)
	f.Add([]byte(`{"data":{"repository":{"id":"R_1","nameWithOwner":"o/r","issueOrPullRequest":{"__typename":"Issue","id":"I_1","issueState":"OPEN","comments":{"totalCount":5}}}}}`), 200)
	f.Add([]byte(`[{"id":1,"node_id":"IC_1","user":{"login":"ghost"},"created_at":"2020-01-01T00:00:00Z"}]`), 200)
	f.Add([]byte(`{"errors":[{"type":"NOT_FOUND","message":"x"}]}`), 200)
	f.Add([]byte(`{"data":{"repository":{"pullRequest":{"reviewThreads":{"totalCount":1,"pageInfo":{"hasNextPage":true,"endCursor":"c"},"nodes":[{"id":"T","comments":{"nodes":[{"id":"C","createdAt":"x","replyTo":{"id":"/"}}]}}]}}}}}`), 200)
	f.Add([]byte(`{"total_count":3,"check_runs":[{"id":1,"node_id":"CR","head_sha":"6dcb09b5b57875f334f61aebed695e2e4193db5e","status":"completed","conclusion":"failure","app":{"slug":"github-actions"}}]}`), 200)
	f.Add([]byte(`{"message":"x"}`), 500)
	f.Fuzz(func(t *testing.T, body []byte, status int) {
		if status < 100 || status > 599 {
			status = 200
		}
		c, err := New(Options{APIURL: "https://api.github.com", Transport: bodyTransport{body: body, status: status},
			RetryMax: -1, RetryWaitMin: time.Microsecond, RetryWaitMax: time.Microsecond, MaxRateLimitWait: time.Microsecond})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		p := acquisition.Profile{IncludedSources: []string{"entity", "comments", "reviews", "checks", "check_logs", "agent_runs"},
			CheckLogSelection: "all", Bounds: acquisition.Bounds{MaxSourceBytes: 1024}}
		a, err := c.Acquire(ctx, forge.Ref{Repo: "o/r", Number: 1}, p)
		if err == nil && a == nil {
			t.Fatal("nil acquisition without an error")
		}
	})
}
