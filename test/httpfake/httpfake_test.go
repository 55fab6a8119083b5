package httpfake

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/forge/cassette"
)

// spyTB records Errorf calls and runs cleanups on demand, so the fake's own failure reports
// can be asserted.
type spyTB struct {
	testing.TB
	mu       sync.Mutex
	errs     []string
	cleanups []func()
}

func (s *spyTB) Errorf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, fmt.Sprintf(format, args...))
}
func (s *spyTB) Cleanup(f func()) { s.cleanups = append(s.cleanups, f) }
func (s *spyTB) finish() []string {
	for i := len(s.cleanups) - 1; i >= 0; i-- {
		s.cleanups[i]()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errs
}

func get(t *testing.T, c *http.Client, url string) (int, string, error) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func TestUnexpectedRequestFailsTheTest(t *testing.T) {
	spy := &spyTB{TB: t}
	s := New(spy)
	code, _, err := get(t, http.DefaultClient, s.URL+"/nope")
	if err != nil || code != http.StatusNotImplemented {
		t.Fatalf("got %d %v, want 501", code, err)
	}
	errs := spy.finish()
	if len(errs) != 1 || !strings.Contains(errs[0], "unexpected request: GET /nope") {
		t.Fatalf("errors = %q", errs)
	}
}

func TestExpectedRequestNeverMadeFailsTheTest(t *testing.T) {
	spy := &spyTB{TB: t}
	s := New(spy)
	s.Expect("GET", "/a?x=1", JSON(200, `{}`))
	s.Expect("GET", "/b", JSON(200, `{}`)).Optional()
	errs := spy.finish()
	if len(errs) != 1 || !strings.Contains(errs[0], "never made: GET /a?x=1") {
		t.Fatalf("errors = %q", errs)
	}
}

func TestRepliesForOneKeyAreServedInOrder(t *testing.T) {
	s := New(t)
	s.Expect("GET", "/p?page=2&per_page=100", ServerError(), BadGateway(), JSON(200, `[1]`), JSON(200, `[1,2]`))
	var got []string
	for range 4 {
		code, body, err := get(t, http.DefaultClient, s.URL+"/p?per_page=100&page=2")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d %s", code, body))
	}
	want := []string{"500 {\"message\":\"Server Error\"}", "502 <html><body><h1>502 Bad Gateway</h1></body></html>", "200 [1]", "200 [1,2]"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if len(s.Served()) != 4 {
		t.Errorf("Served = %d", len(s.Served()))
	}
}

func TestRateLimitRepliesCarryTheirHeaders(t *testing.T) {
	s := New(t)
	reset := time.Unix(1700000000, 0)
	s.Expect("GET", "/sec", SecondaryRateLimit(7))
	s.Expect("GET", "/pri", PrimaryRateLimit(reset))
	s.Expect("GET", "/429", TooManyRequests(3))
	for _, tc := range []struct {
		path, header, want string
		status             int
	}{
		{"/sec", "Retry-After", "7", 403},
		{"/pri", "X-Ratelimit-Reset", "1700000000", 403},
		{"/429", "Retry-After", "3", 429},
	} {
		resp, err := http.Get(s.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status || resp.Header.Get(tc.header) != tc.want {
			t.Errorf("%s: %d %s=%q", tc.path, resp.StatusCode, tc.header, resp.Header.Get(tc.header))
		}
	}
}

func TestTimeoutHoldsUntilTheClientGivesUp(t *testing.T) {
	s := New(t)
	s.Expect("GET", "/slow", Timeout())
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/slow", nil)
	_, err := http.DefaultClient.Do(req)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", err)
	}
}

func TestTruncationFaults(t *testing.T) {
	s := New(t)
	body := []byte(`[{"id":1},{"id":2},{"id":3}]`)
	s.Expect("GET", "/t", TruncatedJSON(body))
	s.Expect("GET", "/c", CutConnection(body))
	code, got, err := get(t, http.DefaultClient, s.URL+"/t")
	if err != nil || code != 200 || got != string(body[:len(body)/2]) {
		t.Errorf("truncated: %d %q %v", code, got, err)
	}
	_, _, err = get(t, http.DefaultClient, s.URL+"/c")
	if err == nil {
		t.Errorf("cut connection: read succeeded")
	}
}

func TestBodyIsPartOfTheMatch(t *testing.T) {
	s := New(t)
	s.ExpectBody("POST", "/graphql", []byte(`{"query":"a"}`), JSON(200, `{"data":"a"}`))
	s.ExpectBody("POST", "/graphql", []byte(`{"query":"b"}`), JSON(200, `{"data":"b"}`))
	for _, q := range []string{"b", "a"} {
		resp, err := http.Post(s.URL+"/graphql", "application/json", strings.NewReader(`{"query": "`+q+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != `{"data":"`+q+`"}` {
			t.Errorf("query %s answered %s", q, b)
		}
	}
}

func TestExpectCassetteServesRecordingAndRewritesRedirects(t *testing.T) {
	s := New(t)
	s.ExpectCassette(&cassette.Cassette{Interactions: []cassette.Interaction{
		{Request: cassette.Request{Method: "GET", URL: "https://api.github.com/logs/1"},
			Response: &cassette.Response{Status: 302, Header: map[string][]string{"Location": {"https://blob.example/store/1?sig=REDACTED"}}}},
		{Request: cassette.Request{Method: "GET", URL: "https://blob.example/store/1?sig=REDACTED"},
			Response: &cassette.Response{Status: 200, Body: cassette.NewBody([]byte("log line\n"))}},
	}})
	code, body, err := get(t, http.DefaultClient, s.URL+"/logs/1")
	if err != nil || code != 200 || body != "log line\n" {
		t.Fatalf("got %d %q %v", code, body, err)
	}
}

// Arrived is closed when the held request reaches the fake, while the client is still inside
// it: the client then sees its own cancellation, not a reply.
func TestArrivedSignalsAHeldRequest(t *testing.T) {
	s := New(t)
	arrived := make(chan struct{})
	s.Expect("GET", "/held", Reply{Hang: true, Arrived: arrived})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/held", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("Arrived was never closed")
	}
	select {
	case err := <-errc:
		t.Fatalf("the held request returned before the client gave up: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("client error = %v, want its own cancellation", err)
	}
}
