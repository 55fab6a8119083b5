package github

import (
	"github.com/forgectx/forgectx/internal/forge/stats"
)

// counted are GitHub's optional --stats members.
var counted = []string{stats.MemberPages, stats.MemberLowerBoundParts}

// Stats returns the statistics of the last Acquire (nil before one ran), in the one --stats
// shape of every forge. GitHub counts pages and the lower bound's parts; its retries are not
// counted apart from requests. LowerBound is the request count a perfect run needs: for every
// list, the pages strictly needed for the size GitHub reported (at least one), plus one
// permission lookup per distinct human actor and two requests (redirect, download) per
// selected log; LowerBoundParts splits it by list.
func (c *Client) Stats() *stats.Stats {
	c.statsMu.Lock()
	defer c.statsMu.Unlock()
	return c.stats
}

func (c *Client) finishStats(r *run) {
	total, by, read := c.counter.snapshot()
	s := &stats.Stats{
		Forge:              "github",
		Requests:           total,
		RequestsByEndpoint: by,
		ResponseBytes:      read,
		Records:            stats.Records(r.acq),
		Gaps:               r.acq.Outcomes,
		LowerBoundParts:    map[string]int{},
		Counted:            counted,
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
