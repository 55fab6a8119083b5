package gitlab

import (
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/forgectx/forgectx/pkg/acquisition"
	"github.com/forgectx/forgectx/pkg/forge/bodycap"
	"github.com/forgectx/forgectx/pkg/forge/stats"
)

// Stats describe one Acquire run for `forgectx snapshot --stats` (run telemetry, never part of
// the snapshot). Maps encode with sorted keys, so a replay gives the same JSON.
type Stats struct {
	// Requests counts every HTTP attempt, retries included.
	Requests int `json:"requests"`
	// RequestsByEndpoint splits Requests by templated endpoint ("GET projects/:id/jobs/:id/trace").
	RequestsByEndpoint map[string]int `json:"requests_by_endpoint"`
	// LowerBound is the number of distinct requests (method and full URL): what a run without
	// any retry needs for the same pages.
	LowerBound int `json:"lower_bound_requests"`
	// Ratio is Requests / LowerBound (1.0 means no retries were needed).
	Ratio float64 `json:"request_ratio"`
	// Records counts what the acquisition holds per source.
	Records map[string]int `json:"records"`
	// Gaps are the adapter-observed gaps per scope.
	Gaps acquisition.Outcomes `json:"gaps"`
}

// WriteJSON writes s as indented JSON.
func (s *Stats) WriteJSON(w io.Writer) error { return stats.WriteJSON(w, s) }

// Stats returns the statistics of the last Acquire (nil before one ran).
func (c *Client) Stats() *Stats {
	c.counter.mu.Lock()
	defer c.counter.mu.Unlock()
	return c.stats
}

// counter is the transport wrapper that counts attempts by endpoint template.
type counter struct {
	next     http.RoundTripper
	basePath string

	mu       sync.Mutex
	total    int
	byEP     map[string]int
	distinct map[string]bool
}

func (c *counter) RoundTrip(req *http.Request) (*http.Response, error) {
	ep := req.Method + " " + templatePath(strings.TrimPrefix(req.URL.EscapedPath(), c.basePath))
	c.mu.Lock()
	c.total++
	c.byEP[ep]++
	c.distinct[req.Method+" "+req.URL.String()] = true
	c.mu.Unlock()
	next := c.next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(req)
	if resp != nil {
		sanitizeLink(resp.Header)
		if resp.Body != nil {
			resp.Body = bodycap.New(resp.Body, responseCap, ErrResponseTooLarge)
		}
	}
	return resp, err
}

// MaxResponseBytes bounds every response body: client-go decodes a list page into memory
// whole, so a hostile or broken server could otherwise exhaust memory with one endless page.
// Traces are bounded far lower by max_source_bytes.
const MaxResponseBytes = 64 << 20

// responseCap is MaxResponseBytes; tests lower it.
var responseCap int64 = MaxResponseBytes

// ErrResponseTooLarge is the read error past MaxResponseBytes: the page fails (fetch_failed)
// instead of decoding a truncated document as a shorter valid one.
var ErrResponseTooLarge = errors.New("gitlab: response body larger than 64 MiB")

// sanitizeLink rewrites a response's Link header to the entries client-go can parse safely:
// client-go indexes the second ';'-part of every ','-separated entry split at '=' without a
// length check, so a server sending `<…>; rel` (no '=') or a target containing ';' or ','
// would panic the process (found by fault injection). Each kept entry is rebuilt as
// `<target>; rel="name"`; malformed entries are dropped, which at worst ends pagination on
// the X-Next-Page header instead.
func sanitizeLink(h http.Header) {
	vals := h.Values("Link")
	if len(vals) == 0 {
		return
	}
	var kept []string
	for _, v := range vals {
		for _, entry := range strings.Split(v, ",") {
			target, params, ok := strings.Cut(entry, ";")
			target = strings.TrimSpace(target)
			if !ok || len(target) < 2 || target[0] != '<' || target[len(target)-1] != '>' {
				continue
			}
			inner := target[1 : len(target)-1]
			if inner == "" || strings.ContainsAny(inner, ";,<> \t\"") {
				continue
			}
			rel := ""
			for _, p := range strings.Split(params, ";") {
				k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
				if ok && strings.EqualFold(strings.TrimSpace(k), "rel") {
					rel = strings.Trim(strings.TrimSpace(val), `"`)
				}
			}
			if rel == "" || strings.ContainsAny(rel, ";,<>=\" \t") {
				continue
			}
			kept = append(kept, "<"+inner+">; rel=\""+rel+"\"")
		}
	}
	h.Del("Link")
	if len(kept) > 0 {
		h.Set("Link", strings.Join(kept, ", "))
	}
}

func (c *counter) reset() {
	c.mu.Lock()
	c.total, c.byEP, c.distinct = 0, map[string]int{}, map[string]bool{}
	c.mu.Unlock()
}

var shaSegment = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// templatePath replaces the variable path segments (numeric ids, encoded project paths, Git
// object ids) so that endpoint counts group by endpoint, not by object.
func templatePath(p string) string {
	segs := strings.Split(strings.Trim(p, "/"), "/")
	for i, s := range segs {
		switch {
		case numericID.MatchString(s):
			segs[i] = ":id"
		case strings.Contains(s, "%2F") || strings.Contains(s, "%2f"):
			segs[i] = ":project"
		case shaSegment.MatchString(s):
			segs[i] = ":sha"
		}
	}
	return strings.Join(segs, "/")
}

func (c *Client) finishStats(a *acquisition.Acquisition) {
	c.counter.mu.Lock()
	defer c.counter.mu.Unlock()
	s := &Stats{
		Requests: c.counter.total, RequestsByEndpoint: stats.Copy(c.counter.byEP), LowerBound: len(c.counter.distinct),
		Records: stats.Records(a), Gaps: a.Outcomes,
	}
	s.Ratio = stats.Ratio(s.Requests, s.LowerBound)
	s.Records["check_logs"] = stats.FetchedLogs(a)
	c.stats = s
}
