package stats

import (
	"bytes"
	"math"
	"testing"

	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// TestRecordsCountEverySourceUnderItsKey: the shared "records" member names each source the
// same way in every adapter's --stats document and counts what the acquisition holds.
func TestRecordsCountEverySourceUnderItsKey(t *testing.T) {
	a := &acquisition.Acquisition{
		Comments:  make([]acquisition.Comment, 3),
		Reviews:   make([]acquisition.Review, 2),
		Threads:   make([]acquisition.Thread, 1),
		Checks:    []acquisition.Check{{}, {Log: &acquisition.Log{Outcome: acquisition.LogFetched}}, {Log: &acquisition.Log{}}},
		AgentRuns: make([]acquisition.AgentRun, 4),
		Actors:    make([]acquisition.Actor, 5),
	}
	want := map[string]int{"comments": 3, "reviews": 2, "threads": 1, "checks": 3, "agent_runs": 4, "actors": 5}
	got := Records(a)
	if len(got) != len(want) {
		t.Fatalf("Records = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("Records[%q] = %d, want %d", k, got[k], v)
		}
	}
	if n := FetchedLogs(a); n != 1 {
		t.Errorf("FetchedLogs = %d, want 1 (only the fetched log counts)", n)
	}
}

// TestRatioNeverEncodesNaN: request_ratio is requests over the lower bound, and 0 (not NaN or
// Inf, which JSON cannot hold) when there is no lower bound.
func TestRatioNeverEncodesNaN(t *testing.T) {
	for _, tc := range []struct {
		requests, bound int
		want            float64
	}{
		{12, 10, 1.2},
		{10, 10, 1},
		{5, 0, 0},
		{0, 0, 0},
	} {
		got := Ratio(tc.requests, tc.bound)
		if math.IsNaN(got) || math.IsInf(got, 0) || got != tc.want {
			t.Errorf("Ratio(%d, %d) = %v, want %v", tc.requests, tc.bound, got, tc.want)
		}
	}
}

// TestCopyDoesNotAlias: a Stats value handed out must not change when the client's counters do.
func TestCopyDoesNotAlias(t *testing.T) {
	src := map[string]int{"GET /a": 1}
	c := Copy(src)
	src["GET /a"] = 2
	src["GET /b"] = 1
	if len(c) != 1 || c["GET /a"] != 1 {
		t.Fatalf("copy changed with its source: %v", c)
	}
	if Copy(nil) == nil {
		t.Fatal("Copy(nil) is nil: it would encode as null instead of {}")
	}
}

// TestWriteJSONLayout pins the --stats byte layout: two-space indent, map keys sorted, one
// trailing newline.
func TestWriteJSONLayout(t *testing.T) {
	var b bytes.Buffer
	v := struct {
		Requests int            `json:"requests"`
		By       map[string]int `json:"by"`
	}{3, map[string]int{"b": 2, "a": 1}}
	if err := writeJSON(&b, v); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"requests\": 3,\n  \"by\": {\n    \"a\": 1,\n    \"b\": 2\n  }\n}\n"
	if b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
}

// TestStatsDocumentShape pins the one --stats document: members in document order, an optional
// member only when the forge counts it (a counted empty map is {}, never null or absent), and
// a Counted name that is not an optional member is refused rather than silently ignored.
func TestStatsDocumentShape(t *testing.T) {
	s := &Stats{Forge: "gitlab", Requests: 3, RequestsByEndpoint: map[string]int{"GET a": 3}, Retries: 1,
		ResponseBytes: 42, Records: map[string]int{"comments": 1}, Gaps: acquisition.Outcomes{}, LowerBound: 2, Ratio: 1.5}
	var b bytes.Buffer
	if err := s.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"forge\": \"gitlab\",\n  \"requests\": 3,\n  \"requests_by_endpoint\": {\n    \"GET a\": 3\n  },\n" +
		"  \"response_bytes\": 42,\n  \"records\": {\n    \"comments\": 1\n  },\n  \"gaps\": {},\n" +
		"  \"lower_bound_requests\": 2,\n  \"request_ratio\": 1.5\n}\n"
	if b.String() != want {
		t.Errorf("uncounted optional members leaked or order changed:\n%s\nwant\n%s", b.String(), want)
	}
	s.Counted = []string{MemberRetries, MemberFailures, MemberPages, MemberLowerBoundParts}
	b.Reset()
	if err := s.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	for _, frag := range []string{"\"requests_by_endpoint\": {\n    \"GET a\": 3\n  },\n  \"retries\": 1,\n  \"failures\": 0,\n  \"response_bytes\": 42,\n  \"pages\": {},\n  \"records\"",
		"\"lower_bound_requests\": 2,\n  \"lower_bound_parts\": {},\n  \"request_ratio\": 1.5"} {
		if !bytes.Contains(b.Bytes(), []byte(frag)) {
			t.Errorf("counted members not in place (%q):\n%s", frag, b.String())
		}
	}
	s.Counted = []string{"pages", "bogus"}
	if err := s.WriteJSON(&b); err == nil {
		t.Error("an unknown Counted member was accepted")
	}
	if sum := s.Summary(); sum.Requests != 3 || sum.Retries != 1 || sum.LowerBound != 2 || sum.Ratio != 1.5 {
		t.Errorf("summary %+v", sum)
	}
}
