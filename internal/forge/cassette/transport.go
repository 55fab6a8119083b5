package cassette

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// keptRequestHeaders are the only request headers a recorder stores: they document how the
// request was made and carry no credential.
var keptRequestHeaders = []string{"Accept", "Content-Type", "X-Github-Api-Version"}

// droppedResponseHeaders never reach the disk.
// X-Github-Sso carries a single-sign-on authorization URL for the token's user.
var droppedResponseHeaders = []string{"Set-Cookie", "Authorization", "Proxy-Authorization", "Www-Authenticate", "X-Github-Sso"}

// RecorderOptions configure a Recorder.
type RecorderOptions struct {
	// Meta is written to cassette.json (Version is set by the recorder).
	Meta Meta
	// Secrets are exact values (the run's token) replaced by "REDACTED" wherever they occur.
	Secrets []string
	// MaxBodyBytes caps each stored response body (default defaultMaxBodyBytes); the response
	// handed to the caller is always complete.
	MaxBodyBytes int64
}

// Recorder is an http.RoundTripper that forwards every request to Next and writes the
// exchange, credentials stripped, into a cassette directory.
type Recorder struct {
	next    http.RoundTripper
	w       *writer
	secrets []string
	max     int64
}

// NewRecorder starts a cassette in dir (created if needed; it must hold no interactions yet)
// that records every exchange made through next (http.DefaultTransport when nil).
func NewRecorder(dir string, next http.RoundTripper, opts RecorderOptions) (*Recorder, error) {
	if next == nil {
		next = http.DefaultTransport
	}
	w, err := newWriter(dir, opts.Meta)
	if err != nil {
		return nil, err
	}
	max := opts.MaxBodyBytes
	if max <= 0 {
		max = defaultMaxBodyBytes
	}
	return &Recorder{next: next, w: w, secrets: opts.Secrets, max: max}, nil
}

// readRequestBody reads and closes req's body, if it has one (had reports whether it did): the
// recorder stores it and the replayer matches on it, so both read it the same way.
func readRequestBody(req *http.Request) (body []byte, had bool, err error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, false, nil
	}
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, true, fmt.Errorf("cassette: read request body: %w", err)
	}
	return b, true, nil
}

// RoundTrip implements http.RoundTripper.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	reqBody, had, err := readRequestBody(req)
	if err != nil {
		return nil, err
	}
	if had {
		// The body goes on to the real server too.
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
		req.ContentLength = int64(len(reqBody))
	}
	in := Interaction{Request: Request{
		Method: req.Method,
		URL:    r.redactURL(req.URL),
		Header: r.keepHeaders(req.Header, keptRequestHeaders, nil),
		Body:   NewBody(scrubBytes(reqBody, r.secrets)),
	}}
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		in.Error = scrub(err.Error(), r.secrets)
		if werr := r.w.write(in); werr != nil {
			return nil, fmt.Errorf("%w (and recording failed: %v)", err, werr)
		}
		return nil, err
	}
	body, truncated, rerr := readAllLimit(resp.Body, r.max)
	if rerr != nil {
		resp.Body.Close()
		in.Error = scrub(rerr.Error(), r.secrets)
		_ = r.w.write(in)
		return nil, fmt.Errorf("cassette: read response body: %w", rerr)
	}
	rest := resp.Body
	if !truncated {
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
	} else {
		// The caller still gets the whole body: the stored prefix followed by the unread rest.
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(append([]byte(nil), body...)), rest), rest}
	}
	hdr := r.keepHeaders(resp.Header, nil, droppedResponseHeaders)
	if loc := hdr.Get("Location"); loc != "" {
		if u, err := url.Parse(loc); err == nil {
			hdr.Set("Location", r.redactURL(u))
		}
	}
	in.Response = &Response{
		Status:    resp.StatusCode,
		Header:    hdr,
		Body:      NewBody(scrubBytes(body, r.secrets)),
		Truncated: truncated,
	}
	if err := r.w.write(in); err != nil {
		resp.Body.Close()
		return nil, err
	}
	return resp, nil
}

func (r *Recorder) redactURL(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery = redactQuery(u.Query(), r.secrets).Encode()
	return scrub(c.String(), r.secrets)
}

// keepHeaders copies h keeping only allow (when non-nil) and dropping deny, scrubbing secrets
// from every value.
func (r *Recorder) keepHeaders(h http.Header, allow, deny []string) http.Header {
	out := http.Header{}
	for k, vs := range h {
		ck := http.CanonicalHeaderKey(k)
		if allow != nil && !containsFold(allow, ck) {
			continue
		}
		if containsFold(deny, ck) {
			continue
		}
		for _, v := range vs {
			out.Add(ck, scrub(v, r.secrets))
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// replayedError is the recorded transport error of an exchange that produced no response.
type replayedError struct{ Msg string }

func (e *replayedError) Error() string { return "cassette: replayed transport error: " + e.Msg }

// Timeout reports whether the recorded error was a timeout, so retry policies treat it alike.
func (e *replayedError) Timeout() bool {
	m := strings.ToLower(e.Msg)
	return strings.Contains(m, "timeout") || strings.Contains(m, "deadline exceeded")
}

// Replayer is an http.RoundTripper that answers every request from a loaded cassette without
// touching the network. It is safe for concurrent use.
type Replayer struct {
	mu     sync.Mutex
	queues map[string][]*Interaction
	order  []string // keys in first-recorded order, for Unused
}

// NewReplayer indexes c's interactions by match key, each key's responses in recording order.
func NewReplayer(c *Cassette) (*Replayer, error) {
	rp := &Replayer{queues: map[string][]*Interaction{}}
	for i := range c.Interactions {
		in := &c.Interactions[i]
		body, err := in.Request.Body.Bytes()
		if err != nil {
			return nil, fmt.Errorf("cassette: interaction %d: %w", i+1, err)
		}
		k, err := Key(in.Request.Method, in.Request.URL, body)
		if err != nil {
			return nil, fmt.Errorf("cassette: interaction %d: %w", i+1, err)
		}
		if _, seen := rp.queues[k]; !seen {
			rp.order = append(rp.order, k)
		}
		rp.queues[k] = append(rp.queues[k], in)
	}
	return rp, nil
}

// RoundTrip implements http.RoundTripper.
func (rp *Replayer) RoundTrip(req *http.Request) (*http.Response, error) {
	body, _, err := readRequestBody(req)
	if err != nil {
		return nil, err
	}
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	k, err := Key(req.Method, req.URL.String(), body)
	if err != nil {
		return nil, err
	}
	rp.mu.Lock()
	q := rp.queues[k]
	if len(q) == 0 {
		rp.mu.Unlock()
		return nil, fmt.Errorf("%w: %s %s", ErrNotRecorded, req.Method, req.URL.Path)
	}
	in := q[0]
	rp.queues[k] = q[1:]
	rp.mu.Unlock()
	if in.Response == nil {
		return nil, &replayedError{Msg: in.Error}
	}
	rb, err := in.Response.Body.Bytes()
	if err != nil {
		return nil, err
	}
	hdr := in.Response.Header.Clone()
	if hdr == nil {
		hdr = http.Header{}
	}
	if len(in.Response.Body.JSON) > 0 {
		// JSON bodies are stored compacted; the recorded length no longer applies.
		hdr.Set("Content-Length", strconv.Itoa(len(rb)))
	}
	cl := int64(len(rb))
	if in.Response.Truncated {
		cl = -1
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", in.Response.Status, http.StatusText(in.Response.Status)),
		StatusCode:    in.Response.Status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        hdr,
		Body:          io.NopCloser(bytes.NewReader(rb)),
		ContentLength: cl,
		Request:       req,
	}, nil
}

// Unused lists the match keys of recorded responses never replayed, in recording order.
func (rp *Replayer) Unused() []string {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	var out []string
	for _, k := range rp.order {
		for range rp.queues[k] {
			out = append(out, k)
		}
	}
	return out
}
