// Package cassette is the forge-neutral record/replay http.RoundTripper behind
// `forgectx snapshot --record DIR` and `--replay DIR` (test-only replay of recorded forge
// answers, docs/architecture.md, "Package map"; the on-disk format is documented in docs/cassettes.md).
//
// A cassette is a directory:
//
//	DIR/cassette.json                       {"cassette_version":1,"forge":"github","api_url":"…"}
//	DIR/interactions/000001-GET-repos-….json one exchange per file, in the order requests were sent
//
// Recording strips credentials before anything touches the disk: request headers are reduced to
// an allow-list (Authorization, cookies and every other header are dropped), query parameters
// whose names look like credentials are replaced by "REDACTED", and every registered secret
// value (the run's token) is replaced by "REDACTED" wherever it occurs in a URL, header or body.
// Response bodies are kept, so a cassette replays the run offline and users can attach one to a
// bug report.
//
// Replay matches a request by method, path and canonical query (keys sorted) plus, for a request
// with a body (GraphQL POSTs), the SHA-256 of its compacted JSON body. The host is not part of
// the match, so a cassette recorded against one base URL replays against another. Repeated
// identical requests receive the recorded responses for that key in recording order (FIFO), so
// a recorded retry sequence (502, then 200) replays deterministically. A request with no
// remaining recorded response fails with an error wrapping ErrNotRecorded.
package cassette

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/forgectx/forgectx/internal/platform/safeout"
)

// Version is the cassette format version this package reads and writes.
const Version = 1

// Redacted replaces every stripped credential value.
const Redacted = "REDACTED"

// defaultMaxBodyBytes caps how much of one response body a recorder stores.
const defaultMaxBodyBytes = 64 << 20

// ErrNotRecorded reports a replayed request for which the cassette holds no (more) responses.
var ErrNotRecorded = errors.New("cassette: request not recorded")

// Meta is the cassette's header (cassette.json).
type Meta struct {
	Version int    `json:"cassette_version"`
	Forge   string `json:"forge,omitempty"`
	// APIURL is the API base URL the run was recorded against; replay uses it as the default
	// base URL so the source host of a replayed snapshot equals the recorded one.
	APIURL string `json:"api_url,omitempty"`
}

// Interaction is one recorded exchange (one file under interactions/).
type Interaction struct {
	Request  Request   `json:"request"`
	Response *Response `json:"response,omitempty"`
	// Error is the transport error of an exchange that produced no response (a timeout, a
	// reset); replay returns it as an error of type *replayedError.
	Error string `json:"error,omitempty"`
}

// Request is the recorded request: method, full URL (credentials redacted), the allow-listed
// headers and the body.
type Request struct {
	Method string      `json:"method"`
	URL    string      `json:"url"`
	Header http.Header `json:"header,omitempty"`
	Body   Body        `json:"body,omitzero"`
}

// Response is the recorded response.
type Response struct {
	Status int         `json:"status"`
	Header http.Header `json:"header,omitempty"`
	Body   Body        `json:"body,omitzero"`
	// Truncated is true when the recorder stored only the first MaxBodyBytes of the body.
	Truncated bool `json:"body_truncated,omitempty"`
}

// Body holds a message body in the most readable lossless form: embedded JSON when the bytes
// are valid JSON, a string when they are valid UTF-8 text, base64 otherwise. Exactly one field
// is set (none for an empty body).
type Body struct {
	JSON   json.RawMessage `json:"json,omitempty"`
	Text   *string         `json:"text,omitempty"`
	Base64 string          `json:"base64,omitempty"`
}

// NewBody picks the representation for b.
func NewBody(b []byte) Body {
	switch {
	case len(b) == 0:
		return Body{}
	case json.Valid(b) && (b[0] == '{' || b[0] == '['):
		var buf bytes.Buffer
		if err := json.Compact(&buf, b); err == nil {
			return Body{JSON: buf.Bytes()}
		}
	}
	if utf8.Valid(b) {
		s := string(b)
		return Body{Text: &s}
	}
	return Body{Base64: base64.StdEncoding.EncodeToString(b)}
}

// Bytes returns the body bytes (JSON bodies in compact form).
func (b Body) Bytes() ([]byte, error) {
	switch {
	case len(b.JSON) > 0:
		var buf bytes.Buffer
		if err := json.Compact(&buf, b.JSON); err != nil {
			return nil, fmt.Errorf("cassette: body.json: %w", err)
		}
		return buf.Bytes(), nil
	case b.Text != nil:
		return []byte(*b.Text), nil
	case b.Base64 != "":
		out, err := base64.StdEncoding.DecodeString(b.Base64)
		if err != nil {
			return nil, fmt.Errorf("cassette: body.base64: %w", err)
		}
		return out, nil
	}
	return nil, nil
}

// IsZero lets encoding/json omit an empty body.
func (b Body) IsZero() bool { return len(b.JSON) == 0 && b.Text == nil && b.Base64 == "" }

// Cassette is a loaded cassette: its header and its interactions in recording order.
type Cassette struct {
	Meta         Meta
	Interactions []Interaction
}

// Load reads a cassette directory. A missing cassette.json, an unsupported version or an
// unreadable interaction is an error naming the file.
func Load(dir string) (*Cassette, error) {
	raw, err := readRegular(filepath.Join(dir, "cassette.json"))
	if err != nil {
		return nil, fmt.Errorf("cassette: %w", err)
	}
	var c Cassette
	if err := json.Unmarshal(raw, &c.Meta); err != nil {
		return nil, fmt.Errorf("cassette: cassette.json: %w", err)
	}
	if c.Meta.Version != Version {
		return nil, fmt.Errorf("cassette: cassette.json: cassette_version %d is not supported (this build reads %d)", c.Meta.Version, Version)
	}
	names, err := filepath.Glob(filepath.Join(dir, "interactions", "*.json"))
	if err != nil {
		return nil, fmt.Errorf("cassette: %w", err)
	}
	sort.Strings(names) // zero-padded sequence prefixes: lexical order is recording order
	for _, name := range names {
		b, err := readRegular(name)
		if err != nil {
			return nil, fmt.Errorf("cassette: %w", err)
		}
		in, err := decodeInteraction(b)
		if err != nil {
			return nil, fmt.Errorf("cassette: %s: %w", filepath.Base(name), err)
		}
		c.Interactions = append(c.Interactions, in)
	}
	return &c, nil
}

// maxFileBytes bounds one cassette file read: a recorded body is at most 64 MiB
// (defaultMaxBodyBytes), and its stored form is at most 6 bytes per byte (a control
// character as a JSON \u00XX escape), with the request and headers on top.
const maxFileBytes = 400 << 20

// readRegular reads a cassette file, refusing anything but a regular file of at most
// maxFileBytes: the open does not block on a FIFO (a hand-made cassette with a FIFO in it
// would otherwise hang the replay before any signal could be acted on), and the opened file
// is checked, so a device is never read.
func readRegular(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB", path, maxFileBytes>>20)
	}
	return b, nil
}

// decodeInteraction parses one interaction file strictly: unknown fields, trailing data, a
// missing method or URL, or neither response nor error are errors.
func decodeInteraction(b []byte) (Interaction, error) {
	var in Interaction
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return in, err
	}
	if dec.More() {
		return in, errors.New("trailing data after the interaction")
	}
	if in.Request.Method == "" || in.Request.URL == "" {
		return in, errors.New("request.method and request.url are required")
	}
	if in.Response == nil && in.Error == "" {
		return in, errors.New("one of response or error is required")
	}
	return in, nil
}

// Write stores c into dir (which must not hold another cassette's interactions): the header
// and one numbered file per interaction. Makers of test scenarios use it.
func Write(dir string, c *Cassette) error {
	w, err := newWriter(dir, c.Meta)
	if err != nil {
		return err
	}
	for _, in := range c.Interactions {
		if err := w.write(in); err != nil {
			return err
		}
	}
	return nil
}

// Key is the replay match key of a request: method, path, canonical query and, when the
// request has a body, the SHA-256 of the body (JSON bodies compacted first). Credential-like
// query parameters are redacted before keying, exactly as the recorder stores them.
func Key(method, rawURL string, body []byte) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("cassette: url: %w", err)
	}
	q := redactQuery(u.Query(), nil)
	k := strings.ToUpper(method) + " " + u.EscapedPath()
	if enc := q.Encode(); enc != "" { // Encode sorts by key
		k += "?" + enc
	}
	if len(body) > 0 {
		var buf bytes.Buffer
		if json.Compact(&buf, body) == nil {
			body = buf.Bytes()
		}
		sum := sha256.Sum256(body)
		k += " body:" + hex.EncodeToString(sum[:])
	}
	return k, nil
}

// credentialParam reports whether a query parameter name looks like it carries a credential
// (tokens, pre-signed URL signatures).
func credentialParam(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"token", "sig", "signature", "credential", "secret", "password", "jwt", "authorization"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

func redactQuery(q url.Values, secrets []string) url.Values {
	out := url.Values{}
	for k, vs := range q {
		for _, v := range vs {
			if credentialParam(k) {
				v = Redacted
			}
			out.Add(k, scrub(v, secrets))
		}
	}
	return out
}

func scrub(s string, secrets []string) string {
	for _, sec := range secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, Redacted)
		}
	}
	return s
}

func scrubBytes(b []byte, secrets []string) []byte {
	for _, sec := range secrets {
		if sec != "" {
			b = bytes.ReplaceAll(b, []byte(sec), []byte(Redacted))
		}
	}
	return b
}

// writer numbers and writes interaction files.
type writer struct {
	dir string
	mu  sync.Mutex
	seq int
}

func newWriter(dir string, meta Meta) (*writer, error) {
	meta.Version = Version
	if err := os.MkdirAll(filepath.Join(dir, "interactions"), 0o755); err != nil {
		return nil, fmt.Errorf("cassette: %w", err)
	}
	existing, _ := filepath.Glob(filepath.Join(dir, "interactions", "*.json"))
	if len(existing) > 0 {
		return nil, fmt.Errorf("cassette: %s already holds %d interactions; record into an empty directory", dir, len(existing))
	}
	b, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("cassette: %w", err)
	}
	if err := safeout.WriteFile(filepath.Join(dir, "cassette.json"), append(b, '\n'), safeout.Options{Perm: 0o644}); err != nil {
		return nil, fmt.Errorf("cassette: %w", err)
	}
	return &writer{dir: dir}, nil
}

func (w *writer) write(in Interaction) error {
	b, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return fmt.Errorf("cassette: %w", err)
	}
	w.mu.Lock()
	w.seq++
	seq := w.seq
	w.mu.Unlock()
	name := fmt.Sprintf("%06d-%s.json", seq, slug(in.Request.Method, in.Request.URL))
	if err := safeout.WriteFile(filepath.Join(w.dir, "interactions", name), append(b, '\n'), safeout.Options{Perm: 0o644}); err != nil {
		return fmt.Errorf("cassette: %w", err)
	}
	return nil
}

// slug makes a short, filesystem-safe, human-readable name from a request.
func slug(method, rawURL string) string {
	p := rawURL
	if u, err := url.Parse(rawURL); err == nil {
		p = u.Path
	}
	var b strings.Builder
	b.WriteString(strings.ToUpper(method))
	for _, r := range p {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			if !strings.HasSuffix(b.String(), "-") {
				b.WriteByte('-')
			}
		}
		if b.Len() >= 80 {
			break
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// readAllLimit reads r fully, keeping at most max bytes; truncated reports whether more
// existed.
func readAllLimit(r io.Reader, max int64) ([]byte, bool, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if int64(len(b)) > max {
		return b[:max], true, err
	}
	return b, false, err
}
