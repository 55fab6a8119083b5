// Package httpfake is the reusable httptest server every forge adapter test runs against
// (docs/architecture.md, "Conventions": HTTP fakes fed by a registry of expected requests).
//
// A Server answers only requests that were registered with Expect (or loaded from a cassette
// with ExpectCassette). It fails the test on an unexpected request — and answers it with
// 501 so the client sees a failure — and, at test cleanup, on every registered reply that
// was never requested. Matching uses the cassette package's key (method, path, canonical
// query, and the compacted body for requests that carry one), so fakes and replays agree on
// what "the same request" means. Replies for the same key are served in registration order,
// which is how a test scripts a fault followed by a recovery:
//
//	fake := httpfake.New(t)
//	fake.Expect("GET", "/repos/o/r/issues/1/comments?per_page=100",
//		httpfake.SecondaryRateLimit(1), // 403 + Retry-After: 1
//		httpfake.JSON(200, comments))   // the retry succeeds
//
// Fault replies: ServerError (500), BadGateway (502), SecondaryRateLimit (403 + Retry-After),
// PrimaryRateLimit (403 + x-ratelimit-remaining: 0 + x-ratelimit-reset), TooManyRequests (429
// + Retry-After), Timeout (hold the request until the client gives up), TruncatedJSON (a
// complete response whose JSON body is cut), CutConnection (the connection closes mid-body).
// A page that changes between reads is two different JSON replies for the same key.
//
// Faults (fault.go) is the paginated-list fault injector, put in front of a Server with Use:
// it serves list endpoints from their rows in a forge's pagination dialect and makes page N
// of an endpoint template fail persistently, hold fewer rows than declared (invisible rows),
// or drift (rows deleted or added between two page reads).
package httpfake

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/forge/cassette"
)

// Reply is one scripted response.
type Reply struct {
	Status int
	Header http.Header
	Body   []byte
	// Hang holds the request open until the client cancels it (or the server closes): the
	// client observes a timeout.
	Hang bool
	// Arrived, when set, is closed as soon as the request is received (before Delay or Hang):
	// with Hang, a test holds the client inside that request until it has acted (signalled
	// the process, say). A reply is served once, so the channel is closed once.
	Arrived chan struct{}
	// Delay is waited before answering.
	Delay time.Duration
	// Cut sends the headers with the full Content-Length but only the first half of Body, then
	// closes the connection.
	Cut bool
}

// JSON replies with status and v encoded as JSON; a []byte or string v is sent verbatim.
func JSON(status int, v any) Reply {
	var b []byte
	switch x := v.(type) {
	case []byte:
		b = x
	case string:
		b = []byte(x)
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			panic("httpfake: JSON: " + err.Error()) // a test-authoring error, not input
		}
	}
	return Reply{Status: status, Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}, Body: b}
}

// ServerError is a 500.
func ServerError() Reply {
	return JSON(http.StatusInternalServerError, `{"message":"Server Error"}`)
}

// BadGateway is a 502 with an HTML body, as GitHub's edge sends it.
func BadGateway() Reply {
	return Reply{Status: http.StatusBadGateway, Header: http.Header{"Content-Type": {"text/html"}}, Body: []byte("<html><body><h1>502 Bad Gateway</h1></body></html>")}
}

// SecondaryRateLimit is GitHub's secondary-limit 403 with Retry-After in seconds.
func SecondaryRateLimit(retryAfter int) Reply {
	r := JSON(http.StatusForbidden, `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`)
	r.Header.Set("Retry-After", strconv.Itoa(retryAfter))
	return r
}

// PrimaryRateLimit is GitHub's exhausted primary limit: 403 with x-ratelimit-remaining: 0 and
// x-ratelimit-reset at reset (Unix seconds).
func PrimaryRateLimit(reset time.Time) Reply {
	r := JSON(http.StatusForbidden, `{"message":"API rate limit exceeded for user ID 1.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}`)
	r.Header.Set("X-Ratelimit-Limit", "5000")
	r.Header.Set("X-Ratelimit-Remaining", "0")
	r.Header.Set("X-Ratelimit-Used", "5000")
	r.Header.Set("X-Ratelimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	return r
}

// TooManyRequests is a 429 with Retry-After in seconds.
func TooManyRequests(retryAfter int) Reply {
	r := JSON(http.StatusTooManyRequests, `{"message":"Too Many Requests"}`)
	r.Header.Set("Retry-After", strconv.Itoa(retryAfter))
	return r
}

// Timeout holds the request until the client gives up.
func Timeout() Reply { return Reply{Hang: true} }

// TruncatedJSON answers 200 with only the first half of body (a complete HTTP exchange whose
// JSON does not parse).
func TruncatedJSON(body []byte) Reply {
	r := JSON(http.StatusOK, body)
	r.Body = r.Body[:len(r.Body)/2]
	return r
}

// CutConnection announces body in full but closes the connection after half of it.
func CutConnection(body []byte) Reply {
	r := JSON(http.StatusOK, body)
	r.Cut = true
	return r
}

// Redirect answers 302 to location; a location starting with "/" is resolved against the
// fake server.
func Redirect(location string) Reply {
	return Reply{Status: http.StatusFound, Header: http.Header{"Location": {location}}}
}

type slot struct {
	key      string
	reply    Reply
	optional bool
	served   bool
}

// Server is the fake. Its URL is the base URL to hand to the client under test.
type Server struct {
	URL string

	t      testing.TB
	srv    *httptest.Server
	mu     sync.Mutex
	queues map[string][]*slot
	all    []*slot
	served []string
	done   chan struct{}
	// front is what the listener serves: the registry itself, or middleware Use put in front
	// of it (a Faults injector).
	front http.Handler
	// jitter, when positive, delays every answer by a random time up to it (rng, seeded), so
	// concurrent requests complete in shuffled order.
	jitter time.Duration
	rng    *rand.Rand
	// latency is waited before every answer (a forge's round trip).
	latency time.Duration
	// inFlight counts the requests received and not yet answered (the answer's headers not
	// yet written); maxInFlight is its peak.
	inFlight, maxInFlight int
}

// Jitter makes the fake answer every request after a random delay of up to max (drawn from
// a generator seeded with seed, so a failure can be replayed): requests sent concurrently
// then complete in shuffled order, as a real server's do.
func (s *Server) Jitter(max time.Duration, seed int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.jitter, s.rng = max, rand.New(rand.NewSource(seed))
}

// Latency makes the fake wait d before answering every request, as a forge d away does (the
// latency benchmarks of the request pool).
func (s *Server) Latency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = d
}

// MaxInFlight is the most requests the fake was answering at once: received, and the
// answer's headers not yet written. A client's request pool is checked against it.
func (s *Server) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInFlight
}

// ResetMaxInFlight starts a new MaxInFlight measurement (between two client runs).
func (s *Server) ResetMaxInFlight() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.maxInFlight = s.inFlight
}

// answering is a ResponseWriter that ends its request's in-flight count when the answer
// starts (headers written) or the handler returns, whichever is first.
type answering struct {
	http.ResponseWriter
	end func()
}

func (a *answering) WriteHeader(code int) { a.end(); a.ResponseWriter.WriteHeader(code) }

func (a *answering) Write(b []byte) (int, error) { a.end(); return a.ResponseWriter.Write(b) }

// Flush passes a flush through (the Cut reply flushes half a body).
func (a *answering) Flush() {
	if f, ok := a.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack passes a hijack through (the Cut reply closes the connection mid-body).
func (a *answering) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	a.end()
	if hj, ok := a.ResponseWriter.(http.Hijacker); ok {
		return hj.Hijack()
	}
	return nil, nil, errors.New("httpfake: the connection cannot be hijacked")
}

// New starts a fake server that is closed, and checked for never-made requests, when the test
// ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{t: t, queues: map[string][]*slot{}, done: make(chan struct{})}
	s.front = http.HandlerFunc(s.serve)
	s.srv = httptest.NewServer(s)
	s.URL = s.srv.URL
	t.Cleanup(func() {
		close(s.done)
		s.srv.CloseClientConnections()
		s.srv.Close()
		for _, k := range s.Unmet() {
			t.Errorf("httpfake: expected request never made: %s", k)
		}
	})
	return s
}

// Expectation is a group of registered replies; Optional relaxes the never-made check.
type Expectation struct{ slots []*slot }

// Optional marks the expectation's replies as allowed to go unused (for requests whose
// occurrence depends on timing, such as a retry after a timeout).
func (e *Expectation) Optional() *Expectation {
	for _, s := range e.slots {
		s.optional = true
	}
	return e
}

// Expect registers replies for method and pathAndQuery (e.g. "/repos/o/r?per_page=100"),
// served in order to successive identical requests. Use ExpectBody for requests with a body.
func (s *Server) Expect(method, pathAndQuery string, replies ...Reply) *Expectation {
	return s.ExpectBody(method, pathAndQuery, nil, replies...)
}

// ExpectBody is Expect for a request carrying body (a GraphQL POST): the body is part of the
// match, compared as compacted JSON.
func (s *Server) ExpectBody(method, pathAndQuery string, body []byte, replies ...Reply) *Expectation {
	s.t.Helper()
	key, err := cassette.Key(method, "http://fake"+pathAndQuery, body)
	if err != nil {
		s.t.Fatalf("httpfake: Expect %s %s: %v", method, pathAndQuery, err)
	}
	if len(replies) == 0 {
		s.t.Fatalf("httpfake: Expect %s %s: no replies", method, pathAndQuery)
	}
	e := &Expectation{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range replies {
		sl := &slot{key: key, reply: r}
		s.queues[key] = append(s.queues[key], sl)
		s.all = append(s.all, sl)
		e.slots = append(e.slots, sl)
	}
	return e
}

// ExpectCassette registers every interaction of c as an expected request with its recorded
// reply (recorded transport errors become Timeout replies). Absolute Location headers are
// rewritten to the fake server, so redirects stay local.
func (s *Server) ExpectCassette(c *cassette.Cassette) {
	s.t.Helper()
	s.expectCassette(c, false)
}

// ExpectCassetteOptional is ExpectCassette with every reply optional: a test that checks what
// was requested itself (Served) registers a recorded run once per client run.
func (s *Server) ExpectCassetteOptional(c *cassette.Cassette) {
	s.t.Helper()
	s.expectCassette(c, true)
}

func (s *Server) expectCassette(c *cassette.Cassette, optional bool) {
	s.t.Helper()
	for i, in := range c.Interactions {
		body, err := in.Request.Body.Bytes()
		if err != nil {
			s.t.Fatalf("httpfake: interaction %d: %v", i+1, err)
		}
		u, err := url.Parse(in.Request.URL)
		if err != nil {
			s.t.Fatalf("httpfake: interaction %d: %v", i+1, err)
		}
		var r Reply
		if in.Response == nil {
			r = Timeout()
		} else {
			rb, err := in.Response.Body.Bytes()
			if err != nil {
				s.t.Fatalf("httpfake: interaction %d: %v", i+1, err)
			}
			r = Reply{Status: in.Response.Status, Header: in.Response.Header.Clone(), Body: rb}
			if r.Header != nil {
				r.Header.Del("Content-Length")
				if loc := r.Header.Get("Location"); loc != "" {
					if lu, err := url.Parse(loc); err == nil && lu.IsAbs() {
						lu.Scheme, lu.Host = "", ""
						r.Header.Set("Location", lu.String())
					}
				}
			}
		}
		e := s.ExpectBody(in.Request.Method, u.RequestURI(), body, r)
		if optional {
			e.Optional()
		}
	}
}

// Use puts mw in front of the registry: the fake's URL then serves mw(registry), so a Faults
// injector can serve and break the paginated lists while every other request is still
// matched against the registered expectations.
func (s *Server) Use(mw func(http.Handler) http.Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.front = mw(s.front)
}

// ServeHTTP answers from the registry (behind any Use middleware).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	h := s.front
	s.inFlight++
	s.maxInFlight = max(s.maxInFlight, s.inFlight)
	delay := s.latency
	if s.jitter > 0 {
		delay += time.Duration(s.rng.Int63n(int64(s.jitter)))
	}
	s.mu.Unlock()
	var once sync.Once
	end := func() {
		once.Do(func() {
			s.mu.Lock()
			s.inFlight--
			s.mu.Unlock()
		})
	}
	defer end()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	h.ServeHTTP(&answering{ResponseWriter: w, end: end}, r)
}

// Served lists the match keys of the requests answered from the registry, in arrival order.
func (s *Server) Served() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.served...)
}

// Unmet lists the keys of registered, non-optional replies not yet requested.
func (s *Server) Unmet() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, sl := range s.all {
		if !sl.served && !sl.optional {
			out = append(out, sl.key)
		}
	}
	return out
}

func (s *Server) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	key, err := cassette.Key(req.Method, req.URL.String(), body)
	if err != nil {
		s.t.Errorf("httpfake: unparseable request %s: %v", req.Method, err)
		http.Error(w, "httpfake: bad request", http.StatusNotImplemented)
		return
	}
	s.mu.Lock()
	q := s.queues[key]
	if len(q) == 0 {
		s.mu.Unlock()
		s.t.Errorf("httpfake: unexpected request: %s", key)
		http.Error(w, "httpfake: unexpected request "+key, http.StatusNotImplemented)
		return
	}
	sl := q[0]
	s.queues[key] = q[1:]
	sl.served = true
	s.served = append(s.served, key)
	s.mu.Unlock()
	r := sl.reply
	if r.Arrived != nil {
		close(r.Arrived)
	}
	if r.Delay > 0 {
		select {
		case <-time.After(r.Delay):
		case <-req.Context().Done():
			return
		}
	}
	if r.Hang {
		select {
		case <-req.Context().Done():
		case <-s.done:
		}
		return
	}
	for k, vs := range r.Header {
		for _, v := range vs {
			if k == "Location" && strings.HasPrefix(v, "/") {
				v = s.URL + v
			}
			w.Header().Add(k, v)
		}
	}
	status := r.Status
	if status == 0 {
		status = http.StatusOK
	}
	if r.Cut {
		w.Header().Set("Content-Length", strconv.Itoa(len(r.Body)))
		w.WriteHeader(status)
		w.Write(r.Body[:len(r.Body)/2])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
			}
		}
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(r.Body)))
	w.WriteHeader(status)
	if _, err := io.Copy(w, bytes.NewReader(r.Body)); err != nil {
		return // the client went away; its own error is what the test observes
	}
}

// String describes the server for failure messages.
func (s *Server) String() string { return fmt.Sprintf("httpfake(%s)", s.URL) }
