package github

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/internal/forge/retry"
)

// Spec, Entity state: GitHub issue OPEN/CLOSED → open/closed; a pull request with merged: true
// → merged, otherwise OPEN/CLOSED → open/closed; anything else aborts (ok=false).
func TestEntityStateMappingTable(t *testing.T) {
	for _, tc := range []struct {
		native       string
		isPR, merged bool
		want         string
		ok           bool
	}{
		{"OPEN", false, false, "open", true},
		{"CLOSED", false, false, "closed", true},
		{"OPEN", true, false, "open", true},
		{"CLOSED", true, false, "closed", true},
		{"CLOSED", true, true, "merged", true},
		{"MERGED", true, true, "merged", true},
		{"MERGED", true, false, "merged", true},
		{"open", false, false, "open", true}, // REST spelling
		{"MERGED", false, false, "", false},  // an issue cannot be merged
		{"LOCKED", false, false, "", false},
		{"", true, false, "", false},
	} {
		got, ok := mapEntityState(tc.native, tc.isPR, tc.merged)
		if got != tc.want || ok != tc.ok {
			t.Errorf("mapEntityState(%q, pr=%v, merged=%v) = %q, %v; want %q, %v", tc.native, tc.isPR, tc.merged, got, ok, tc.want, tc.ok)
		}
	}
}

// Spec, review adapters: APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED → lowercase;
// PENDING omitted; any other state invalid_metadata.
func TestReviewStateMappingTable(t *testing.T) {
	for _, tc := range []struct {
		native string
		want   string
		disp   reviewDisposition
	}{
		{"APPROVED", "approved", reviewKeep},
		{"CHANGES_REQUESTED", "changes_requested", reviewKeep},
		{"COMMENTED", "commented", reviewKeep},
		{"DISMISSED", "dismissed", reviewKeep},
		{"PENDING", "", reviewOmit},
		{"approved", "", reviewInvalid},
		{"REQUEST_CHANGES", "", reviewInvalid},
		{"", "", reviewInvalid},
	} {
		got, disp := mapReviewState(tc.native)
		if got != tc.want || disp != tc.disp {
			t.Errorf("mapReviewState(%q) = %q, %v; want %q, %v", tc.native, got, disp, tc.want, tc.disp)
		}
	}
}

// Spec, Checks: queued, waiting, requested, pending → queued; in_progress → in_progress;
// completed → completed; anything else invalid_metadata.
func TestCheckStatusMappingTable(t *testing.T) {
	for native, want := range map[string]string{
		"queued": "queued", "waiting": "queued", "requested": "queued", "pending": "queued",
		"in_progress": "in_progress", "completed": "completed",
		"QUEUED": "", "running": "", "": "", "expected": "",
	} {
		got, ok := mapCheckStatus(native)
		if got != want || ok != (want != "") {
			t.Errorf("mapCheckStatus(%q) = %q, %v; want %q", native, got, ok, want)
		}
	}
}

// Spec, Checks: conclusions map identically except startup_failure → failure + never_started.
func TestCheckConclusionMappingTable(t *testing.T) {
	for _, tc := range []struct {
		native, want  string
		startup, okay bool
	}{
		{"success", "success", false, true},
		{"failure", "failure", false, true},
		{"neutral", "neutral", false, true},
		{"cancelled", "cancelled", false, true},
		{"skipped", "skipped", false, true},
		{"timed_out", "timed_out", false, true},
		{"action_required", "action_required", false, true},
		{"stale", "stale", false, true},
		{"startup_failure", "failure", true, true},
		{"canceled", "", false, false},
		{"error", "", false, false},
		{"", "", false, false},
	} {
		got, startup, ok := mapCheckConclusion(tc.native)
		if got != tc.want || startup != tc.startup || ok != tc.okay {
			t.Errorf("mapCheckConclusion(%q) = %q, %v, %v", tc.native, got, startup, ok)
		}
	}
}

const head = "6dcb09b5b57875f334f61aebed695e2e4193db5e"

// Spec, Checks: the status-specific timestamp rules, never_started, the head-revision rule and
// the immutable-creation-time rule, one row each.
func TestCheckMappingTimestampAndRevisionRules(t *testing.T) {
	const created, started, done = "2026-09-08T10:00:00Z", "2026-09-08T10:01:00Z", "2026-09-08T10:05:00Z"
	base := func(status, conclusion, st, ct string) nativeCheck {
		return nativeCheck{NodeID: "CR_kwDOA", Name: "build", HeadSHA: head, Status: status, Conclusion: conclusion, CreatedAt: created, StartedAt: st, CompletedAt: ct}
	}
	type want struct {
		ok                 bool
		status, conclusion string
		started, completed string
		never              *bool
	}
	tr, fa := true, false
	for _, tc := range []struct {
		name string
		in   nativeCheck
		want want
	}{
		{"queued drops native timestamps", base("queued", "", started, done), want{ok: true, status: "queued"}},
		{"pending is queued", base("pending", "", "", ""), want{ok: true, status: "queued"}},
		{"in_progress requires started_at", base("in_progress", "", "", ""), want{ok: false}},
		{"in_progress keeps started_at only", base("in_progress", "", started, done), want{ok: true, status: "in_progress", started: started}},
		{"completed success", base("completed", "success", started, done), want{true, "completed", "success", started, done, &fa}},
		{"completed failure without started_at is invalid", base("completed", "failure", "", done), want{ok: false}},
		{"completed success without completed_at is invalid", base("completed", "success", started, ""), want{ok: false}},
		{"startup_failure is failure, never started, no started_at", base("completed", "startup_failure", started, done), want{true, "completed", "failure", "", done, &tr}},
		{"startup_failure without completed_at falls back to created_at", base("completed", "startup_failure", "", ""), want{true, "completed", "failure", "", created, &tr}},
		{"skipped without started_at never started", base("completed", "skipped", "", done), want{true, "completed", "skipped", "", done, &tr}},
		{"cancelled without started_at never started", base("completed", "cancelled", "", ""), want{true, "completed", "cancelled", "", created, &tr}},
		{"cancelled with started_at started", base("completed", "cancelled", started, done), want{true, "completed", "cancelled", started, done, &fa}},
		{"unknown conclusion", base("completed", "exploded", started, done), want{ok: false}},
		{"completed without conclusion", base("completed", "", started, done), want{ok: false}},
		{"unknown status", base("running", "", started, ""), want{ok: false}},
		{"mismatched revision", func() nativeCheck {
			n := base("queued", "", "", "")
			n.HeadSHA = "a5f1c4c0e1d8b0f2e3a4b5c6d7e8f90123456789"
			return n
		}(), want{ok: false}},
		{"malformed revision", func() nativeCheck { n := base("queued", "", "", ""); n.HeadSHA = "HEAD"; return n }(), want{ok: false}},
		{"no immutable creation time (non-Actions)", func() nativeCheck { n := base("queued", "", "", ""); n.CreatedAt = ""; return n }(), want{ok: false}},
		{"node ID outside github_node_id", func() nativeCheck { n := base("queued", "", "", ""); n.NodeID = "CR/../x"; return n }(), want{ok: false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := mapCheck(tc.in, head)
			if ok != tc.want.ok {
				t.Fatalf("ok = %v, want %v (%+v)", ok, tc.want.ok, got)
			}
			if !ok {
				return
			}
			if got.Status != tc.want.status || got.Conclusion != tc.want.conclusion || got.StartedAt != tc.want.started || got.CompletedAt != tc.want.completed {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if (got.NeverStarted == nil) != (tc.want.never == nil) || (got.NeverStarted != nil && *got.NeverStarted != *tc.want.never) {
				t.Errorf("never_started = %v, want %v", got.NeverStarted, tc.want.never)
			}
			if got.CreatedAt != created || got.HeadSHA != head {
				t.Errorf("created_at %q head_sha %q", got.CreatedAt, got.HeadSHA)
			}
		})
	}
}

// Spec, actor state: role_name admin/maintain/write/triage/read is the role; a custom role
// falls back to its base permission; anything else is unverified.
func TestRoleMappingTable(t *testing.T) {
	for _, tc := range []struct {
		roleName, permission, want string
		ok                         bool
	}{
		{"admin", "admin", "admin", true},
		{"maintain", "write", "maintain", true},
		{"write", "write", "write", true},
		{"triage", "read", "triage", true},
		{"read", "read", "read", true},
		{"security-reviewer", "write", "write", true},
		{"", "none", "none", true},
		{"custom", "weird", "", false},
		{"", "", "", false},
	} {
		got, ok := mapRole(tc.roleName, tc.permission)
		if got != tc.want || ok != tc.ok {
			t.Errorf("mapRole(%q, %q) = %q, %v", tc.roleName, tc.permission, got, ok)
		}
	}
}

// Spec, source.host: lowercase DNS name, no scheme or path, :port only when not 443; the
// github.com API host is github.com, a GHES API URL is its host.
func TestSourceHostNormalisation(t *testing.T) {
	for in, want := range map[string]string{
		"https://api.github.com":              "github.com",
		"https://API.GitHub.com/":             "github.com",
		"https://ghe.example.com/api/v3":      "ghe.example.com",
		"https://ghe.example.com:443/api/v3":  "ghe.example.com",
		"https://ghe.example.com:8443/api/v3": "ghe.example.com:8443",
		"https://api.octocorp.ghe.com":        "octocorp.ghe.com",
		"http://127.0.0.1:8080":               "127.0.0.1:8080",
	} {
		got, err := SourceHost(in)
		if err != nil || got != want {
			t.Errorf("SourceHost(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"ftp://x", "https://[::1]/api/v3", "not a url"} {
		if _, err := SourceHost(bad); err == nil {
			t.Errorf("SourceHost(%q) accepted", bad)
		}
	}
}

func TestGraphQLURLFromRESTBase(t *testing.T) {
	for in, want := range map[string]string{
		"https://api.github.com":         "https://api.github.com/graphql",
		"https://ghe.example.com/api/v3": "https://ghe.example.com/api/graphql",
		"http://127.0.0.1:9":             "http://127.0.0.1:9/graphql",
	} {
		c, err := New(Options{APIURL: in})
		if err != nil {
			t.Fatal(err)
		}
		if c.gqlURL != want {
			t.Errorf("%s → %s, want %s", in, c.gqlURL, want)
		}
	}
}

func resp(status int, hdr map[string]string) *http.Response {
	h := http.Header{}
	for k, v := range hdr {
		h.Set(k, v)
	}
	return &http.Response{StatusCode: status, Header: h}
}

// Retry policy: 5xx (not 501), 429, and rate-limited 403s retry; permission 403s, 404s,
// cancellations and replay misses do not.
func TestRetryPolicy(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		resp *http.Response
		err  error
		want bool
	}{
		{"500", resp(500, nil), nil, true},
		{"502", resp(502, nil), nil, true},
		{"503", resp(503, nil), nil, true},
		{"501", resp(501, nil), nil, false},
		{"429", resp(429, nil), nil, true},
		{"403 secondary (Retry-After)", resp(403, map[string]string{"Retry-After": "60"}), nil, true},
		{"403 primary exhausted", resp(403, map[string]string{"X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": "1"}), nil, true},
		{"403 permission", resp(403, nil), nil, false},
		{"404", resp(404, nil), nil, false},
		{"200", resp(200, nil), nil, false},
		{"transport error", nil, errors.New("connection reset"), true},
		{"replay miss", nil, cassette.ErrNotRecorded, false},
	} {
		got, _ := testPolicy(10*time.Minute).CheckRetry(ctx, tc.resp, tc.err)
		if got != tc.want {
			t.Errorf("%s: retry = %v, want %v", tc.name, got, tc.want)
		}
	}
	withBody := func(status int, hdr map[string]string, body string) *http.Response {
		r := resp(status, hdr)
		r.Body = io.NopCloser(strings.NewReader(body))
		return r
	}
	for _, tc := range []struct {
		name string
		resp *http.Response
		body string
		want bool
	}{
		{"403 secondary message without headers", withBody(403, nil, `{"message":"You have exceeded a secondary rate limit."}`), `{"message":"You have exceeded a secondary rate limit."}`, true},
		{"403 permission message", withBody(403, nil, `{"message":"Resource not accessible by integration"}`), `{"message":"Resource not accessible by integration"}`, false},
		{"GraphQL RATE_LIMITED", withBody(200, map[string]string{"X-Ratelimit-Remaining": "0"}, `{"errors":[{"type":"RATE_LIMITED","message":"API rate limit exceeded"}]}`), `{"errors":[{"type":"RATE_LIMITED","message":"API rate limit exceeded"}]}`, true},
		{"GraphQL data using the last point", withBody(200, map[string]string{"X-Ratelimit-Remaining": "0"}, `{"data":{"x":1}}`), `{"data":{"x":1}}`, false},
	} {
		got, _ := testPolicy(10*time.Minute).CheckRetry(ctx, tc.resp, nil)
		if got != tc.want {
			t.Errorf("%s: retry = %v, want %v", tc.name, got, tc.want)
		}
		// Peeking must leave the body intact for the caller.
		if b, _ := io.ReadAll(tc.resp.Body); string(b) != tc.body {
			t.Errorf("%s: body after the policy = %q", tc.name, b)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if got, _ := testPolicy(10*time.Minute).CheckRetry(cctx, resp(500, nil), nil); got {
		t.Error("retried after the context was cancelled")
	}
}

// Back-off honours Retry-After (seconds and HTTP date) and x-ratelimit-reset, capped.
func TestBackoffHonoursRateLimitHeaders(t *testing.T) {
	fixed := time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC)
	now = func() time.Time { return fixed }
	defer func() { now = time.Now }()
	b := testPolicy(10 * time.Minute).Backoff
	min, max := time.Second, 30*time.Second
	for _, tc := range []struct {
		name string
		resp *http.Response
		want time.Duration
	}{
		{"Retry-After seconds", resp(403, map[string]string{"Retry-After": "7"}), 7 * time.Second},
		{"Retry-After date", resp(429, map[string]string{"Retry-After": fixed.Add(90 * time.Second).Format(http.TimeFormat)}), 90 * time.Second},
		{"x-ratelimit-reset", resp(403, map[string]string{"X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": strconv.FormatInt(fixed.Add(120*time.Second).Unix(), 10)}), 121 * time.Second},
		{"reset beyond the cap", resp(403, map[string]string{"X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": strconv.FormatInt(fixed.Add(time.Hour).Unix(), 10)}), 10 * time.Minute},
		{"reset in the past", resp(403, map[string]string{"X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": strconv.FormatInt(fixed.Add(-time.Hour).Unix(), 10)}), time.Second}, // the shared policy's floor: min
		{"5xx exponential attempt 0", resp(502, nil), time.Second},
		{"secondary limit without Retry-After waits a minute", resp(403, nil), time.Minute},
		{"429 without Retry-After waits a minute", resp(429, nil), time.Minute},
		{"no response", nil, time.Second},
	} {
		if got := b(min, max, 0, tc.resp); got != tc.want {
			t.Errorf("%s: wait %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := b(min, max, 3, resp(500, nil)); got != 8*time.Second {
		t.Errorf("attempt 3: %v, want 8s", got)
	}
	if got := b(min, max, 10, resp(500, nil)); got != max {
		t.Errorf("attempt 10: %v, want the 30s cap", got)
	}
}

func TestNodeIDMapping(t *testing.T) {
	for id, ok := range map[string]bool{
		"MDQ6VXNlcjE=": true, "U_kgDOAAAD6Q": true, "PRRT_kwDO-x_y=": true,
		"": false, "_x": false, "a/b": false, "a b": false, "a;b": false, "a+b": false,
	} {
		if validNodeID(id) != ok {
			t.Errorf("validNodeID(%q) = %v", id, !ok)
		}
	}
}

// testPolicy is the client's retry policy with its defaults and maxWait as the server-wait cap.
func testPolicy(maxWait time.Duration) *retry.Policy {
	return newPolicy(retry.Limits{MaxServerWait: maxWait}.Defaults(retryDefaults), zerolog.Nop())
}
