package forgejo

import (
	"errors"
	"net/http"
	"sync"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/stats"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// counted are Forgejo's optional --stats members.
var counted = []string{stats.MemberRetries, stats.MemberFailures, stats.MemberPages}

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

// Stats returns the client's statistics so far, in the one --stats shape of every forge
// (requests are cumulative over the client's life; pages, records, gaps and the lower bound
// describe its last Acquire). Forgejo counts retries and failures apart from requests, and
// pages. LowerBound is the request count a perfect run needs: repository and entity, for
// every list the pages X-Total-Count requires (at least one), one comments request per
// submitted review and one permission lookup per referenced actor.
func (c *Client) Stats() *stats.Stats {
	s := c.stats
	s.mu.Lock()
	defer s.mu.Unlock()
	return &stats.Stats{Forge: Forge, Requests: s.requests, Retries: s.retries, Failures: s.failures,
		ResponseBytes: s.responseBytes, RequestsByEndpoint: stats.Copy(s.byEndpoint), Pages: stats.Copy(s.pages),
		Records: stats.Copy(s.records), Gaps: s.gaps, LowerBound: s.lowerBound,
		Ratio: stats.Ratio(s.requests, s.lowerBound), Counted: counted}
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
		resp.Body = forge.CapBody(forge.CountBody(resp.Body, s.read), maxResponseBytes, errResponseTooLarge)
	}
	return resp, err
}

// errResponseTooLarge is returned by a response body read past maxResponseBytes.
var errResponseTooLarge = errors.New("forgejo: response body larger than the adapter's limit")
