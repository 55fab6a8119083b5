package forgejo

import (
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/forgectx/forgectx/pkg/acquisition"
	"github.com/forgectx/forgectx/pkg/forge"
	"github.com/forgectx/forgectx/pkg/forge/bodycap"
	"github.com/forgectx/forgectx/pkg/forge/stats"
)

// Stats are the statistics behind `forgectx snapshot --stats` (run telemetry, never part of
// the snapshot). The field names follow the GitHub adapter's statistics where they mean the
// same thing. Maps encode with sorted keys, so a replay's statistics are deterministic.
type Stats struct {
	Forge string `json:"forge"`
	// Requests counts every HTTP attempt, retries included.
	Requests int `json:"requests"`
	// RequestsByEndpoint splits Requests by method and templated endpoint (owner, repository,
	// user and numbers replaced by placeholders).
	RequestsByEndpoint map[string]int `json:"requests_by_endpoint"`
	// Retries counts the attempts after a first one.
	Retries int `json:"retries"`
	// Failures counts transport errors and non-2xx answers (a permission 404 included).
	Failures int `json:"failures"`
	// ResponseBytes sums the response body bytes actually read (chunked answers carry no
	// Content-Length).
	ResponseBytes int64 `json:"response_bytes"`
	// Pages counts successfully read pages per list of the last acquisition.
	Pages map[string]int `json:"pages"`
	// Records counts what the last acquisition holds per source.
	Records map[string]int `json:"records"`
	// Gaps are the last acquisition's adapter-observed gaps.
	Gaps acquisition.Outcomes `json:"gaps"`
	// LowerBound is the request count a perfect run needs: repository and entity, for every
	// list the pages X-Total-Count requires (at least one), one comments request per submitted
	// review and one permission lookup per referenced actor.
	LowerBound int `json:"lower_bound_requests"`
	// Ratio is Requests / LowerBound.
	Ratio float64 `json:"request_ratio"`
}

// WriteJSON writes s as indented JSON.
func (s Stats) WriteJSON(w io.Writer) error { return stats.WriteJSON(w, s) }

// counters are the transport-level counts shared by every request of a client.
type counters struct {
	mu            sync.Mutex
	requests      int
	retries       int
	failures      int
	responseBytes int64
	byEndpoint    map[string]int
	// last acquisition
	pages      map[string]int
	records    map[string]int
	gaps       acquisition.Outcomes
	lowerBound int
}

func newStats() *counters {
	return &counters{byEndpoint: map[string]int{}, pages: map[string]int{}, records: map[string]int{}}
}

func (s *counters) read(n int64) {
	s.mu.Lock()
	s.responseBytes += n
	s.mu.Unlock()
}

func (s *counters) retried() {
	s.mu.Lock()
	s.retries++
	s.mu.Unlock()
}

// Stats returns the client's statistics so far (requests are cumulative over the client's
// life; pages, records, gaps and the lower bound describe its last Acquire).
func (c *Client) Stats() Stats {
	s := c.stats
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{Forge: Forge, Requests: s.requests, Retries: s.retries, Failures: s.failures,
		ResponseBytes: s.responseBytes, RequestsByEndpoint: stats.Copy(s.byEndpoint), Pages: stats.Copy(s.pages),
		Records: stats.Copy(s.records), Gaps: s.gaps, LowerBound: s.lowerBound,
		Ratio: stats.Ratio(s.requests, s.lowerBound)}
}

// finish records the per-acquisition part of the statistics.
func (s *counters) finish(a *acquisition.Acquisition, pages map[string]int, lowerBound int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages = stats.Copy(pages)
	// Forgejo's API has no job-log download: every log entry is an unsupported-source marker,
	// counted under its own key rather than as fetched logs.
	logs := 0
	for _, c := range a.Checks {
		if c.Log != nil {
			logs++
		}
	}
	s.records = stats.Records(a)
	s.records["check_logs_unsupported"] = logs
	s.gaps = a.Outcomes
	s.lowerBound = lowerBound
}

// countingTransport records the counters for every attempt (below the retry layer).
type countingTransport struct {
	next  http.RoundTripper
	stats *counters
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	s := t.stats
	s.mu.Lock()
	s.requests++
	s.byEndpoint[req.Method+" "+endpointClass(req.URL.Path)]++
	if err != nil || resp.StatusCode/100 != 2 {
		s.failures++
	}
	s.mu.Unlock()
	if resp != nil && resp.Body != nil {
		// The SDK reads bodies without a bound; a hostile or broken server cannot make this
		// process hold more than maxResponseBytes of one answer.
		resp.Body = bodycap.New(forge.CountBody(resp.Body, s.read), maxResponseBytes, errResponseTooLarge)
	}
	return resp, err
}

// errResponseTooLarge is returned by a response body read past maxResponseBytes.
var errResponseTooLarge = errors.New("forgejo: response body larger than the adapter's limit")
