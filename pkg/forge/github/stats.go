package github

import (
	"io"

	"github.com/forgectx/forgectx/pkg/acquisition"
	"github.com/forgectx/forgectx/pkg/forge/stats"
)

// Stats describe one Acquire run for `forgectx snapshot --stats` (run telemetry: never part of
// the snapshot). Maps encode with sorted keys, so the JSON is deterministic for a replay.
type Stats struct {
	// Forge is "github".
	Forge string `json:"forge"`
	// Requests counts every HTTP attempt, retries included.
	Requests int `json:"requests"`
	// RequestsByEndpoint splits Requests by templated endpoint (GraphQL by operation).
	RequestsByEndpoint map[string]int `json:"requests_by_endpoint"`
	// Pages counts successfully read pages by source list.
	Pages map[string]int `json:"pages"`
	// Records counts what the acquisition holds per source.
	Records map[string]int `json:"records"`
	// Gaps are the adapter-observed gaps per scope.
	Gaps acquisition.Outcomes `json:"gaps"`
	// LowerBound is the request count a perfect run needs: for every list, the pages strictly
	// needed for the size GitHub reported (at least one), plus one permission lookup per
	// distinct human actor and two requests (redirect, download) per selected log.
	LowerBound int `json:"lower_bound_requests"`
	// LowerBoundParts splits LowerBound by list.
	LowerBoundParts map[string]int `json:"lower_bound_parts"`
	// Ratio is Requests / LowerBound (the target is ≤ 1.2).
	Ratio float64 `json:"request_ratio"`
}

// Stats returns the statistics of the last Acquire (nil before one ran).
func (c *Client) Stats() *Stats {
	c.statsMu.Lock()
	defer c.statsMu.Unlock()
	return c.stats
}

// WriteJSON writes s as indented JSON.
func (s *Stats) WriteJSON(w io.Writer) error { return stats.WriteJSON(w, s) }

func (c *Client) finishStats(r *run) {
	total, by := c.counter.snapshot()
	s := &Stats{
		Forge:              "github",
		Requests:           total,
		RequestsByEndpoint: by,
		Records:            stats.Records(r.acq),
		Gaps:               r.acq.Outcomes,
		LowerBoundParts:    map[string]int{},
	}
	r.mu.Lock()
	s.Pages = stats.Copy(r.pages)
	// The entity query itself is one request; bound["entity"] already holds its label pages.
	for k, v := range r.bound {
		s.LowerBoundParts[k] = v
		s.LowerBound += v
	}
	r.mu.Unlock()
	s.Records["check_logs"] = stats.FetchedLogs(r.acq)
	s.Ratio = stats.Ratio(s.Requests, s.LowerBound)
	c.statsMu.Lock()
	c.stats = s
	c.statsMu.Unlock()
}
