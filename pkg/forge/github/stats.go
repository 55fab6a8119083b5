package github

import (
	"encoding/json"
	"io"

	"github.com/forgectx/forgectx/pkg/acquisition"
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
func (s *Stats) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

func (c *Client) finishStats(r *run) {
	total, by := c.counter.snapshot()
	s := &Stats{
		Forge:              "github",
		Requests:           total,
		RequestsByEndpoint: by,
		Pages:              map[string]int{},
		Records:            map[string]int{},
		Gaps:               r.acq.Outcomes,
		LowerBoundParts:    map[string]int{},
	}
	r.mu.Lock()
	for k, v := range r.pages {
		s.Pages[k] = v
	}
	// The entity query itself is one request; bound["entity"] already holds its label pages.
	for k, v := range r.bound {
		s.LowerBoundParts[k] = v
		s.LowerBound += v
	}
	r.mu.Unlock()
	a := r.acq
	s.Records["comments"] = len(a.Comments)
	s.Records["reviews"] = len(a.Reviews)
	s.Records["threads"] = len(a.Threads)
	s.Records["checks"] = len(a.Checks)
	s.Records["agent_runs"] = len(a.AgentRuns)
	s.Records["actors"] = len(a.Actors)
	logs := 0
	for _, ck := range a.Checks {
		if ck.Log != nil && ck.Log.Outcome == acquisition.LogFetched {
			logs++
		}
	}
	s.Records["check_logs"] = logs
	if s.LowerBound > 0 {
		s.Ratio = float64(s.Requests) / float64(s.LowerBound)
	}
	c.statsMu.Lock()
	c.stats = s
	c.statsMu.Unlock()
}
