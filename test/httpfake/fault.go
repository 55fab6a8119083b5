package httpfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Dialect is how a forge's offset pagination looks on the wire: the query parameters that pick
// a page, the header that declares the total, and how a next page is announced.
type Dialect struct {
	// PageParam and SizeParam are the query parameters of the page number (1-based) and the
	// page size.
	PageParam, SizeParam string
	// DefaultSize is the page size when the request names none; MaxSize clamps a larger one
	// (0: no clamp), as Forgejo clamps limit to MAX_RESPONSE_ITEMS.
	DefaultSize, MaxSize int
	// TotalHeader declares the total row count ("" sends none).
	TotalHeader string
	// Link sends Link rel="next", rel="prev", rel="first" and rel="last".
	Link bool
	// PageHeaders sends GitLab's X-Page, X-Per-Page, X-Next-Page, X-Prev-Page, X-Total-Pages.
	PageHeaders bool
}

// The forges' dialects (Gitea swagger's "X-Total-Count" and Link headers; GitLab's REST
// pagination headers; GitHub REST's Link header).
var (
	ForgejoPaging = Dialect{PageParam: "page", SizeParam: "limit", DefaultSize: 30, MaxSize: 50, TotalHeader: "X-Total-Count", Link: true}
	GitLabPaging  = Dialect{PageParam: "page", SizeParam: "per_page", DefaultSize: 20, MaxSize: 100, TotalHeader: "X-Total", Link: true, PageHeaders: true}
	GitHubPaging  = Dialect{PageParam: "page", SizeParam: "per_page", DefaultSize: 30, MaxSize: 100, Link: true}
)

// Change is one drift of a list's data, applied once, between two page reads: Delete removes
// the rows at these indexes of the list as it is, Prepend inserts rows before the first (a
// newest-first list gaining a row), Append adds rows after the last (an oldest-first list
// gaining a row). Deleting a row already served shifts every later page left, so one row
// is never served; prepending shifts them right, so one row is served twice.
type Change struct {
	Delete  []int
	Prepend []any
	Append  []any
}

// Faults is a fault injector for paginated list endpoints, forge-neutral through its Dialect.
// It serves the lists registered with List from their rows, page by page, with the dialect's
// headers, and lets a test break them by endpoint template (a path whose {name} segments
// match any one segment, so a fault can target "every review's comments"):
//
//	f := httpfake.NewFaults(t, httpfake.ForgejoPaging)
//	f.List("/api/v1/repos/o/r/pulls/1/reviews", reviews...)
//	f.FailPage("/api/v1/repos/{owner}/{repo}/pulls/{n}/reviews", 3)    // persistent 500
//	f.HidePage("/api/v1/repos/{owner}/{repo}/pulls/{n}/reviews", 2, -1) // rows the token cannot see
//	f.Drift("/api/v1/repos/{owner}/{repo}/pulls/{n}/reviews", 1, httpfake.Change{Delete: []int{0}})
//	fake.Use(f.Wrap)  // or httptest.NewServer(f.Wrap(next))
//
// Every other request goes to the wrapped handler. A page's faults apply to every request for
// it (a failure is persistent: retries see it too). Requests and RequestsTo count what was
// asked, for request-ratio assertions.
type Faults struct {
	// Now, when set, is the clock of the list answers' Date header, asked with the list's
	// path (a drift test places rows created "during" a list's read after its first page);
	// otherwise net/http's real clock is sent.
	Now func(path string) time.Time

	t     testing.TB
	d     Dialect
	mu    sync.Mutex
	lists map[string]*list
	// inFlight and maxInFlight count the requests being answered (MaxInFlight).
	inFlight, maxInFlight int
	fails                 []pageFault
	hides                 []pageFault
	drift                 []driftFault
	hits                  map[string]int // path -> list requests
}

type list struct {
	rows          []json.RawMessage
	field, totalF string // envelope: rows under field, the total under totalF
}

type pageFault struct {
	tmpl []string
	page int
	n    int
}

type driftFault struct {
	tmpl    []string
	after   int
	change  Change
	applied map[string]bool
}

// Ticking is a Faults.Now clock: the k-th answer of each list path is dated start + k·step, so
// a row a drift adds "during" a list's read (created between start+step and start+2·step)
// is newer than the read's first page, and a later re-read of the list is newer than it.
func Ticking(start time.Time, step time.Duration) func(path string) time.Time {
	var mu sync.Mutex
	k := map[string]int{}
	return func(path string) time.Time {
		mu.Lock()
		defer mu.Unlock()
		k[path]++
		return start.Add(time.Duration(k[path]) * step)
	}
}

// NewFaults returns an injector speaking d.
func NewFaults(t testing.TB, d Dialect) *Faults {
	return &Faults{t: t, d: d, lists: map[string]*list{}, hits: map[string]int{}}
}

// List registers the rows of the list served at path (an exact URL path, no query), in the
// order the forge lists them. Each row is marshalled to JSON once.
func (f *Faults) List(path string, rows ...any) *ListHandle {
	l := &list{}
	for _, r := range rows {
		l.rows = append(l.rows, raw(r))
	}
	f.mu.Lock()
	f.lists[path] = l
	f.mu.Unlock()
	return &ListHandle{l: l, f: f}
}

// ListHandle configures one registered list.
type ListHandle struct {
	l *list
	f *Faults
}

// Envelope serves the page's rows as the field of a JSON object that also carries the total
// in totalField (Forgejo's {"total_count": n, "workflow_runs": [...]}); "" omits the total.
func (h *ListHandle) Envelope(field, totalField string) *ListHandle {
	h.f.mu.Lock()
	defer h.f.mu.Unlock()
	h.l.field, h.l.totalF = field, totalField
	return h
}

func raw(v any) json.RawMessage {
	switch x := v.(type) {
	case json.RawMessage:
		return x
	case []byte:
		return x
	case string:
		return json.RawMessage(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic("httpfake: List: " + err.Error()) // a test-authoring error, not input
	}
	return b
}

// FailPage makes every request for page of the lists matching template answer 500. A GET of
// an endpoint that is not a registered list (one the wrapped handler answers in one
// response) fails for page 1.
func (f *Faults) FailPage(template string, page int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fails = append(f.fails, pageFault{tmpl: segments(template), page: page})
}

// HidePage makes page of the lists matching template hold n fewer rows than it was cut with
// (n < 0: none at all), the declared total and next page unchanged: rows the server counts
// and pages but then drops because the token may not see them.
func (f *Faults) HidePage(template string, page, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hides = append(f.hides, pageFault{tmpl: segments(template), page: page, n: n})
}

// Drift applies c to each list matching template once, right after its page afterPage was
// first served: the data changed between two page reads.
func (f *Faults) Drift(template string, afterPage int, c Change) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.drift = append(f.drift, driftFault{tmpl: segments(template), after: afterPage, change: c, applied: map[string]bool{}})
}

// Requests is how many list requests were served (failed ones included), with the failed
// requests of unlisted endpoints.
func (f *Faults) Requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.hits {
		n += c
	}
	return n
}

// RequestsTo is how many list requests matched template.
func (f *Faults) RequestsTo(template string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	tmpl, n := segments(template), 0
	for p, c := range f.hits {
		if match(tmpl, p) {
			n += c
		}
	}
	return n
}

// Paths lists the registered list paths in order.
func (f *Faults) Paths() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.lists))
	for p := range f.lists {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Wrap returns a handler serving the registered lists and passing every other request to next
// (nil: such a request fails the test and is answered 501).
func (f *Faults) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.inFlight++
		f.maxInFlight = max(f.maxInFlight, f.inFlight)
		f.mu.Unlock()
		var once sync.Once
		end := func() { once.Do(func() { f.mu.Lock(); f.inFlight--; f.mu.Unlock() }) }
		defer end()
		w = &answering{ResponseWriter: w, end: end}
		f.mu.Lock()
		l, ok := f.lists[r.URL.Path]
		failed := !ok && r.Method == http.MethodGet && f.failing(r)
		if failed {
			f.hits[r.URL.Path]++
		}
		f.mu.Unlock()
		switch {
		case failed:
			writeReply(w, ServerError())
		case ok && r.Method == http.MethodGet:
			f.serveList(w, r, l)
		case next != nil:
			next.ServeHTTP(w, r)
		default:
			f.t.Errorf("httpfake: faults: unexpected request: %s %s", r.Method, r.URL.Path)
			http.Error(w, "httpfake: unexpected request", http.StatusNotImplemented)
		}
	})
}

// MaxInFlight is the most requests Wrap was answering at once (received, the answer's headers
// not yet written): a client's request pool is checked against it.
func (f *Faults) MaxInFlight() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.maxInFlight
}

// Start serves Wrap(next) on a loopback server closed at test cleanup and returns its URL.
func (f *Faults) Start(next http.Handler) string {
	srv := httptest.NewServer(f.Wrap(next))
	f.t.Cleanup(srv.Close)
	return srv.URL
}

func (f *Faults) pageOf(r *http.Request) (page, size int) {
	q := r.URL.Query()
	page, size = 1, f.d.DefaultSize
	if n, err := strconv.Atoi(q.Get(f.d.PageParam)); err == nil && n > 0 {
		page = n
	}
	if n, err := strconv.Atoi(q.Get(f.d.SizeParam)); err == nil && n > 0 {
		size = n
	}
	if f.d.MaxSize > 0 && size > f.d.MaxSize {
		size = f.d.MaxSize
	}
	return page, max(size, 1)
}

// failing reports whether a FailPage fault answers r (f.mu held). An endpoint
// that is no registered list answers in one response: its page is 1, whatever it is asked.
func (f *Faults) failing(r *http.Request) bool {
	page, _ := f.pageOf(r)
	for _, pf := range f.fails {
		if pf.page == page && match(pf.tmpl, r.URL.Path) {
			return true
		}
	}
	return false
}

func (f *Faults) serveList(w http.ResponseWriter, r *http.Request, l *list) {
	page, size := f.pageOf(r)
	path := r.URL.Path
	f.mu.Lock()
	f.hits[path]++
	if f.failing(r) {
		f.mu.Unlock()
		writeReply(w, ServerError())
		return
	}
	total := len(l.rows)
	lo, hi := min((page-1)*size, total), min(page*size, total)
	rows := append([]json.RawMessage(nil), l.rows[lo:hi]...)
	for _, pf := range f.hides {
		if pf.page == page && match(pf.tmpl, path) {
			n := pf.n
			if n < 0 || n > len(rows) {
				n = len(rows)
			}
			rows = rows[n:]
		}
	}
	for i := range f.drift {
		df := &f.drift[i]
		if df.after == page && !df.applied[path] && match(df.tmpl, path) {
			df.applied[path] = true
			l.rows = df.change.apply(l.rows)
		}
	}
	field, totalF := l.field, l.totalF
	f.mu.Unlock()

	h := f.headers(r, page, size, total)
	if f.Now != nil {
		h.Set("Date", f.Now(path).UTC().Format(http.TimeFormat))
	}
	var body []byte
	if field == "" {
		body, _ = json.Marshal(nonNil(rows))
	} else {
		env := map[string]any{field: nonNil(rows)}
		if totalF != "" {
			env[totalF] = total
		}
		body, _ = json.Marshal(env)
	}
	rep := JSON(http.StatusOK, body)
	for k, v := range h {
		rep.Header[k] = v
	}
	writeReply(w, rep)
}

func nonNil(rows []json.RawMessage) []json.RawMessage {
	if rows == nil {
		return []json.RawMessage{}
	}
	return rows
}

func (c Change) apply(rows []json.RawMessage) []json.RawMessage {
	del := map[int]bool{}
	for _, i := range c.Delete {
		del[i] = true
	}
	var out []json.RawMessage
	for _, p := range c.Prepend {
		out = append(out, raw(p))
	}
	for i, r := range rows {
		if !del[i] {
			out = append(out, r)
		}
	}
	for _, a := range c.Append {
		out = append(out, raw(a))
	}
	return out
}

// headers are the dialect's pagination headers for page of a list of total rows.
func (f *Faults) headers(r *http.Request, page, size, total int) http.Header {
	h := http.Header{}
	last := max(1, (total+size-1)/size)
	if f.d.TotalHeader != "" {
		h.Set(f.d.TotalHeader, strconv.Itoa(total))
	}
	if f.d.PageHeaders {
		h.Set("X-Page", strconv.Itoa(page))
		h.Set("X-Per-Page", strconv.Itoa(size))
		h.Set("X-Total-Pages", strconv.Itoa(last))
		h.Set("X-Next-Page", "")
		h.Set("X-Prev-Page", "")
		if page < last {
			h.Set("X-Next-Page", strconv.Itoa(page+1))
		}
		if page > 1 {
			h.Set("X-Prev-Page", strconv.Itoa(page-1))
		}
	}
	if f.d.Link {
		at := func(n int, rel string) string {
			u := url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path}
			q := r.URL.Query()
			q.Set(f.d.PageParam, strconv.Itoa(n))
			u.RawQuery = q.Encode()
			return fmt.Sprintf("<%s>; rel=%q", u.String(), rel)
		}
		var links []string
		if page < last {
			links = append(links, at(page+1, "next"), at(last, "last"))
		}
		if page > 1 {
			links = append(links, at(1, "first"), at(page-1, "prev"))
		}
		if len(links) > 0 {
			h.Set("Link", strings.Join(links, ", "))
		}
	}
	return h
}

func segments(p string) []string { return strings.Split(strings.Trim(p, "/"), "/") }

// match reports whether path fits the template: the same number of segments, each equal or a
// {name} placeholder.
func match(tmpl []string, path string) bool {
	segs := segments(path)
	if len(segs) != len(tmpl) {
		return false
	}
	for i, s := range tmpl {
		if !(strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}")) && s != segs[i] {
			return false
		}
	}
	return true
}

func writeReply(w http.ResponseWriter, r Reply) {
	for k, vs := range r.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(r.Body)))
	status := r.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	w.Write(r.Body)
}
