// Package stats is the one `forgectx snapshot --stats` document every forge adapter fills (run
// telemetry, never part of an entity-context-snapshot v1 tree; docs/architecture.md, "Package map"):
// Stats, with the per-source record counts, the request ratio and the JSON encoding. What only
// some forges can count (retries and failures apart from requests, pages, lower-bound parts)
// are optional members, emitted only for the forges that name them in Stats.Counted.
//
// Maps encode with sorted keys and nothing here reads a clock, so a replay's statistics are
// byte-identical run to run, but for the timing member a command's request pool adds (wall
// time, the most requests in flight, the longest chain: measures of one run).
package stats

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// Records counts what an acquisition holds per source, under the keys every adapter's
// "records" member uses: comments, reviews, threads, checks, agent_runs and actors. Check
// logs are left to the caller: adapters differ in which logs they count and under which key.
func Records(a *acquisition.Acquisition) map[string]int {
	return map[string]int{
		"comments":   len(a.Comments),
		"reviews":    len(a.Reviews),
		"threads":    len(a.Threads),
		"checks":     len(a.Checks),
		"agent_runs": len(a.AgentRuns),
		"actors":     len(a.Actors),
	}
}

// FetchedLogs counts the checks whose log was fetched (the "check_logs" record count of the
// adapters that download logs).
func FetchedLogs(a *acquisition.Acquisition) int {
	n := 0
	for _, ck := range a.Checks {
		if ck.Log != nil && ck.Log.Outcome == acquisition.LogFetched {
			n++
		}
	}
	return n
}

// Ratio is requests / lowerBound, the "request_ratio" member; 0 when there is no lower bound
// (nothing was acquired), so the document never holds NaN or Inf, which JSON cannot encode.
func Ratio(requests, lowerBound int) float64 {
	if lowerBound > 0 {
		return float64(requests) / float64(lowerBound)
	}
	return 0
}

// Copy returns a new map with m's entries, so a Stats value handed out does not alias the
// counters a client keeps updating.
func Copy(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// writeJSON writes v as two-space indented JSON followed by a newline: the byte layout of
// every adapter's --stats file.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// The optional members of the document (Stats.Counted).
const (
	MemberRetries         = "retries"
	MemberFailures        = "failures"
	MemberPages           = "pages"
	MemberLowerBoundParts = "lower_bound_parts"
)

// Stats describe one acquisition for `forgectx snapshot --stats`. The members, in document
// order: forge, requests, requests_by_endpoint, retries*, failures*, response_bytes, pages*,
// records, gaps, lower_bound_requests, lower_bound_parts*, request_ratio, timing† (* only when
// the forge names the member in Counted; † only when a request pool measured the run). Maps
// encode with sorted keys and nothing here reads a clock, so a replay's document is
// byte-identical run to run but for timing, the pool's measures of one run.
type Stats struct {
	// Forge is the provider name: github, gitlab, forgejo.
	Forge string
	// Requests counts every HTTP attempt, retries included.
	Requests int
	// RequestsByEndpoint splits Requests by method and templated endpoint.
	RequestsByEndpoint map[string]int
	// Retries counts attempts after a first one. Where the forge does not count them apart
	// (not in Counted) it is the adapter's estimate for the log line only (GitLab: requests
	// beyond the distinct ones; GitHub: 0).
	Retries int
	// Failures counts transport errors and non-2xx answers (Counted: Forgejo).
	Failures int
	// ResponseBytes sums the response body bytes actually read (forge.CountBody): chunked
	// answers carry no Content-Length.
	ResponseBytes int64
	// Pages counts successfully read pages per list.
	Pages map[string]int
	// Records counts what the acquisition holds per source (Records, plus the adapter's
	// check-log key).
	Records map[string]int
	// Gaps are the adapter-observed gaps per scope.
	Gaps acquisition.Outcomes
	// LowerBound is the request count a perfect run needs (each adapter documents how it
	// counts it); LowerBoundParts splits it by list.
	LowerBound      int
	LowerBoundParts map[string]int
	// Ratio is Requests / LowerBound (Ratio()).
	Ratio float64
	// Counted names the optional members this forge counts (MemberRetries, …).
	Counted []string
	// Timing is the request pool's measure of the run (nil: none; omitted).
	Timing *Timing
}

// Timing is the request shape of a run as its request pool measured it (forge.Pool): the
// "timing" member, written last and only by a command that ran the pool (the one member that
// reads a clock: wall_ms differs run to run, the other members do not for a replay at
// concurrency 1).
type Timing struct {
	// Concurrency is the configured requests in flight per host.
	Concurrency int `json:"concurrency"`
	// WallMS is the time from the first request sent to the last answer, in milliseconds.
	WallMS int64 `json:"wall_ms"`
	// Requests counts the requests (attempts) that went through the pool.
	Requests int `json:"requests"`
	// MaxInFlight is the most requests in flight at once, over every host.
	MaxInFlight int `json:"max_in_flight"`
	// LongestChain is the longest sequence of requests each sent after the one before it had
	// answered: a request's depth is one more than the deepest request that had answered when
	// it was sent. Read one at a time it equals Requests; fully parallel it approaches the
	// depth of the run's true dependencies (a page after the page that named it, a lookup
	// after the list that named its subject), of which it is an upper bound.
	LongestChain int `json:"longest_chain"`
}

// Summary are the counts of the one log line every acquisition ends with.
type Summary struct {
	Requests, Retries, LowerBound int
	Ratio                         float64
}

// Summary is the log line's counts.
func (s *Stats) Summary() Summary {
	return Summary{Requests: s.Requests, Retries: s.Retries, LowerBound: s.LowerBound, Ratio: s.Ratio}
}

// WriteJSON writes s as the --stats file: two-space indented JSON and a newline.
func (s *Stats) WriteJSON(w io.Writer) error { return writeJSON(w, s) }

// MarshalJSON writes the members in document order, the optional ones only when Counted (a
// counted map that is empty encodes as {}).
func (s Stats) MarshalJSON() ([]byte, error) {
	for _, m := range s.Counted {
		if !slices.Contains(optionalMembers, m) {
			return nil, fmt.Errorf("stats: Counted member %q: not an optional member", m)
		}
	}
	// Pointers with omitempty: nil leaves a member out, a pointer to an empty map is {}.
	type doc struct {
		Forge              string               `json:"forge"`
		Requests           int                  `json:"requests"`
		RequestsByEndpoint map[string]int       `json:"requests_by_endpoint"`
		Retries            *int                 `json:"retries,omitempty"`
		Failures           *int                 `json:"failures,omitempty"`
		ResponseBytes      int64                `json:"response_bytes"`
		Pages              *map[string]int      `json:"pages,omitempty"`
		Records            map[string]int       `json:"records"`
		Gaps               acquisition.Outcomes `json:"gaps"`
		LowerBound         int                  `json:"lower_bound_requests"`
		LowerBoundParts    *map[string]int      `json:"lower_bound_parts,omitempty"`
		Ratio              float64              `json:"request_ratio"`
		Timing             *Timing              `json:"timing,omitempty"`
	}
	d := doc{Forge: s.Forge, Requests: s.Requests, RequestsByEndpoint: s.RequestsByEndpoint, ResponseBytes: s.ResponseBytes,
		Records: s.Records, Gaps: s.Gaps, LowerBound: s.LowerBound, Ratio: s.Ratio, Timing: s.Timing}
	counted := func(m string) bool { return slices.Contains(s.Counted, m) }
	if counted(MemberRetries) {
		d.Retries = &s.Retries
	}
	if counted(MemberFailures) {
		d.Failures = &s.Failures
	}
	if counted(MemberPages) {
		d.Pages = nonNil(s.Pages)
	}
	if counted(MemberLowerBoundParts) {
		d.LowerBoundParts = nonNil(s.LowerBoundParts)
	}
	return json.Marshal(d)
}

// nonNil points at m, or at an empty map when m is nil (a counted member is never null).
func nonNil(m map[string]int) *map[string]int {
	if m == nil {
		m = map[string]int{}
	}
	return &m
}

var optionalMembers = []string{MemberRetries, MemberFailures, MemberPages, MemberLowerBoundParts}
