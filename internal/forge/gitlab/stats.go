package gitlab

import (
	"errors"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/stats"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// Stats returns the statistics of the last Acquire (nil before one ran), in the one --stats
// shape of every forge; GitLab counts no optional member. LowerBound is the number of
// distinct requests (method and full URL): what a run without any retry needs for the same
// pages; Retries, for the log line only, is the requests beyond them.
func (c *Client) Stats() *stats.Stats {
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
	bytes    int64 // response body bytes read (forge.CountBody): chunked answers have no Content-Length
}

func (c *counter) read(n int64) {
	c.mu.Lock()
	c.bytes += n
	c.mu.Unlock()
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
			resp.Body = forge.CapBody(forge.CountBody(resp.Body, c.read), responseCap, errResponseTooLarge)
		}
	}
	return resp, err
}

// maxResponseBytes bounds every response body: client-go decodes a list page into memory
// whole, so a hostile or broken server could otherwise exhaust memory with one endless page.
// Traces are bounded far lower by max_source_bytes.
const maxResponseBytes = 64 << 20

// responseCap is maxResponseBytes; tests lower it.
var responseCap int64 = maxResponseBytes

// errResponseTooLarge is the read error past maxResponseBytes: the page fails (fetch_failed)
// instead of decoding a truncated document as a shorter valid one.
var errResponseTooLarge = errors.New("gitlab: response body larger than 64 MiB")

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
	c.total, c.byEP, c.distinct, c.bytes = 0, map[string]int{}, map[string]bool{}, 0
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
	s := &stats.Stats{
		Forge: "gitlab", Requests: c.counter.total, RequestsByEndpoint: stats.Copy(c.counter.byEP), ResponseBytes: c.counter.bytes,
		LowerBound: len(c.counter.distinct),
		Records:    stats.Records(a), Gaps: a.Outcomes,
	}
	s.Retries = s.Requests - s.LowerBound
	s.Ratio = stats.Ratio(s.Requests, s.LowerBound)
	s.Records["check_logs"] = stats.FetchedLogs(a)
	c.stats = s
}
