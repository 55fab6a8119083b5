package reviewctx

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/platform/procgroup"
)

// Adapter protocol wire names (byte-exact).
const (
	adapterRequestSchema  = "ocr.context-adapter-request/v1"
	adapterResponseSchema = "ocr.context-adapter-response/v1"
	adapterOperation      = "authorize_and_resolve"
	// maxFrameBytes bounds one response frame.
	maxFrameBytes  = 512 << 10
	maxStderrBytes = 8 << 10
)

// ErrAdapterConfig wraps every OCR_REVIEW_CONTEXT_ADAPTERS_JSON rejection.
var ErrAdapterConfig = errors.New("reviewctx: invalid " + EnvAdaptersJSON)

// errUnavailable is every adapter failure: the record is unavailable and gets no handle. Its
// detail never leaves the process (no logs, no store, no receipt).
var errUnavailable = errors.New("unavailable")

// AdapterConfig is one operator-configured adapter (environment only; the policy can select
// and narrow it, never create one).
type AdapterConfig struct {
	Name            string
	Type            string // stdio or remote
	Tenants         []string
	ResourceClasses []string
	Command         string
	Args            []string
	EnvFrom         []string
	URL             string
	HeadersFrom     map[string]string
}

var (
	envNameRE    = regexp.MustCompile(`^[A-Z_][A-Z0-9_]{0,127}$`)
	headerNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,63}$`)
	// reservedHeaders are transport headers the toolkit owns.
	reservedHeaders = map[string]bool{"Host": true, "Content-Length": true, "Content-Type": true, "Transfer-Encoding": true, "Connection": true, "Accept": true, "Proxy-Authorization": true, "Cookie": true}
)

func adapterErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrAdapterConfig, fmt.Sprintf(format, a...))
}

// ParseAdapters validates OCR_REVIEW_CONTEXT_ADAPTERS_JSON.
func ParseAdapters(s string) ([]AdapterConfig, error) {
	root, err := parseStrict([]byte(s))
	if err != nil {
		return nil, adapterErr("%v", err)
	}
	if root.kind != 'a' {
		return nil, adapterErr("$: must be a JSON array")
	}
	if len(root.arr) > 16 {
		return nil, adapterErr("$: %d adapters, at most 16", len(root.arr))
	}
	var out []AdapterConfig
	names := map[string]bool{}
	for i, v := range root.arr {
		p := fmt.Sprintf("$[%d]", i)
		a, err := decodeAdapter(p, v)
		if err != nil {
			return nil, err
		}
		if !nameRE.MatchString(a.Name) || names[a.Name] {
			return nil, adapterErr("%s.name: must match [a-z][a-z0-9_-]{0,63} and be unique", p)
		}
		names[a.Name] = true
		if err := checkAdapterScope(p, &a); err != nil {
			return nil, err
		}
		if a.Type == "stdio" {
			err = checkStdioAdapter(p, &a)
		} else {
			err = checkRemoteAdapter(p, &a)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// decodeAdapter decodes one adapter object strictly: only the keys of its type, each of the
// right JSON type.
func decodeAdapter(p string, v *strictValue) (AdapterConfig, error) {
	o, err := newObj(p, v)
	if err != nil {
		return AdapterConfig{}, adapterErr("%v", err)
	}
	a := AdapterConfig{Name: o.str("name", true), Type: o.str("type", true), Tenants: o.strList("tenants", true), ResourceClasses: o.strList("resource_classes", true)}
	switch a.Type {
	case "stdio":
		a.Command = o.str("command", true)
		a.Args = o.strList("args", false)
		a.EnvFrom = o.strList("env_from", false)
	case "remote":
		a.URL = o.str("url", true)
		if hv := o.field("headers_from", false); hv != nil {
			if a.HeadersFrom, err = decodeHeadersFrom(p+".headers_from", hv); err != nil {
				return a, err
			}
		}
	default:
		if o.err == nil {
			return a, adapterErr("%s.type: must be stdio or remote", p)
		}
	}
	if err := o.done(); err != nil {
		return a, adapterErr("%v", err)
	}
	return a, nil
}

func decodeHeadersFrom(p string, hv *strictValue) (map[string]string, error) {
	ho, err := newObj(p, hv)
	if err != nil {
		return nil, adapterErr("%v", err)
	}
	out := map[string]string{}
	for _, k := range hv.keys {
		out[k] = ho.str(k, true)
	}
	if err := ho.done(); err != nil {
		return nil, adapterErr("%v", err)
	}
	return out, nil
}

// checkAdapterScope checks the tenants and resource classes every adapter declares.
func checkAdapterScope(p string, a *AdapterConfig) error {
	if len(a.Tenants) == 0 || len(a.Tenants) > 16 {
		return adapterErr("%s.tenants: need 1..16", p)
	}
	for _, t := range a.Tenants {
		if !nameRE.MatchString(t) {
			return adapterErr("%s.tenants: %q must match [a-z][a-z0-9_-]{0,63}", p, t)
		}
	}
	if err := sortedUnique(p+".tenants", a.Tenants); err != nil {
		return adapterErr("%v", err)
	}
	if len(a.ResourceClasses) == 0 {
		return adapterErr("%s.resource_classes: need at least one", p)
	}
	for _, c := range a.ResourceClasses {
		if c != ResourceIssue && c != resourceDocument {
			return adapterErr("%s.resource_classes: %q must be issue or document", p, c)
		}
	}
	if err := sortedUnique(p+".resource_classes", a.ResourceClasses); err != nil {
		return adapterErr("%v", err)
	}
	return nil
}

func checkStdioAdapter(p string, a *AdapterConfig) error {
	if !filepath.IsAbs(a.Command) || filepath.Clean(a.Command) != a.Command || strings.ContainsAny(a.Command, "\x00") {
		return adapterErr("%s.command: must be an absolute clean path (no shell)", p)
	}
	if len(a.Args) > 16 {
		return adapterErr("%s.args: at most 16", p)
	}
	for _, x := range a.Args {
		if len(x) > 1024 || strings.ContainsRune(x, 0) {
			return adapterErr("%s.args: each at most 1024 bytes, no NUL", p)
		}
	}
	if len(a.EnvFrom) > 16 {
		return adapterErr("%s.env_from: at most 16", p)
	}
	seen := map[string]bool{}
	for _, e := range a.EnvFrom {
		if !envNameRE.MatchString(e) || seen[e] {
			return adapterErr("%s.env_from: %q must be a unique environment variable name", p, e)
		}
		seen[e] = true
	}
	return nil
}

func checkRemoteAdapter(p string, a *AdapterConfig) error {
	u, err := url.Parse(a.URL)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Fragment != "" || u.RawQuery != "" || !u.IsAbs() {
		return adapterErr("%s.url: must be one absolute https URL without credentials, query or fragment", p)
	}
	for h, e := range a.HeadersFrom {
		if !headerNameRE.MatchString(h) || reservedHeaders[textproto.CanonicalMIMEHeaderKey(h)] {
			return adapterErr("%s.headers_from: %q is not an allowed header name", p, h)
		}
		if !envNameRE.MatchString(e) {
			return adapterErr("%s.headers_from.%s: must name an environment variable (literal header values are not accepted)", p, h)
		}
	}
	return nil
}

// adapterLimits are the per-request limits.
type adapterLimits struct {
	MaxChars      int   `json:"max_chars"`
	MaxBytes      int   `json:"max_bytes"`
	MaxLines      int   `json:"max_lines"`
	MaxAgeSeconds int   `json:"max_age_seconds"`
	DeadlineMS    int64 `json:"deadline_ms"`
}

// adapterRequest is one ocr.context-adapter-request/v1 frame.
type adapterRequest struct {
	SchemaVersion   string        `json:"schema_version"`
	Operation       string        `json:"operation"`
	RequestID       string        `json:"request_id"`
	RunID           string        `json:"run_id"`
	Adapter         string        `json:"adapter"`
	Tenant          string        `json:"tenant"`
	ResourceClass   string        `json:"resource_class"`
	Candidate       string        `json:"candidate"`
	RequestedFields []string      `json:"requested_fields"`
	Limits          adapterLimits `json:"limits"`
}

// AdapterRecord is an admitted response's validated content.
type AdapterRecord struct {
	CanonicalObject string
	Version         string
	Expiry          time.Time
	Content         Content
}

// recordFields are the record keys a request can ask for (version and expiry are top-level
// response fields; digest is computed by the toolkit).
var recordFields = map[string]bool{"count": true, "descriptor": true, "state": true, "text": true}

// requestedFields derives requested_fields from a reference's retrieve projection.
func requestedFields(retrieve []string) []string {
	var out []string
	for _, f := range retrieve {
		if recordFields[f] {
			out = append(out, f)
		}
	}
	return out
}

// decodeAdapterResponse validates one response frame against its request. Any deviation —
// unknown field or status, mismatched identity, a partial or second frame, invalid UTF-8,
// excess bytes, a record whose keys differ from requested_fields, an expired or malformed
// expiry — returns an error (the record is unavailable). A well-formed unavailable response
// returns (nil, nil).
func decodeAdapterResponse(frame []byte, req *adapterRequest, now time.Time) (*AdapterRecord, error) {
	o, err := openFrame(frame)
	if err != nil {
		return nil, err
	}
	if admitted, err := responseStatus(o, req); err != nil || !admitted {
		return nil, err
	}
	r := &AdapterRecord{CanonicalObject: o.str("canonical_object", true), Version: o.str("version", true)}
	exp := o.str("expiry", true)
	rv := o.field("record", true)
	if err := o.done(); err != nil {
		return nil, err
	}
	if r.CanonicalObject == "" || len(r.CanonicalObject) > 512 || r.Version == "" || len(r.Version) > 128 {
		return nil, errors.New("$.canonical_object/version: empty or too long")
	}
	if r.Expiry, err = time.Parse(time.RFC3339, exp); err != nil || !r.Expiry.After(now) {
		return nil, errors.New("$.expiry: not a future RFC 3339 time")
	}
	if err := decodeRecord(rv, req, &r.Content); err != nil {
		return nil, err
	}
	return r, nil
}

// openFrame parses exactly one bounded frame as a strict JSON object.
func openFrame(frame []byte) (*objReader, error) {
	if len(frame) > maxFrameBytes {
		return nil, errors.New("frame over its byte bound")
	}
	frame = bytes.TrimSuffix(frame, []byte("\n"))
	if bytes.ContainsAny(frame, "\n\r") {
		return nil, errors.New("more than one frame")
	}
	v, err := parseStrict(frame)
	if err != nil {
		return nil, err
	}
	return newObj("$", v)
}

// responseStatus checks the frame's schema and identity against the request and reports
// whether it admits a record; a well-formed unavailable response is (false, nil).
func responseStatus(o *objReader, req *adapterRequest) (bool, error) {
	if o.str("schema_version", true) != adapterResponseSchema {
		o.fail(errors.New("$.schema_version: wrong schema"))
	}
	if o.str("request_id", true) != req.RequestID {
		o.fail(errors.New("$.request_id: mismatched identity"))
	}
	if o.str("run_id", true) != req.RunID {
		o.fail(errors.New("$.run_id: mismatched identity"))
	}
	status := o.str("status", true)
	if o.err != nil {
		return false, o.err
	}
	switch status {
	case "unavailable":
		if o.str("reason", true) != "unavailable" {
			o.fail(errors.New("$.reason: must be unavailable"))
		}
		return false, o.done()
	case "admitted":
		return true, nil
	default:
		return false, errors.New("$.status: unknown status")
	}
}

// decodeRecord reads exactly the requested fields of $.record into c and checks the
// request's limits.
func decodeRecord(rv *strictValue, req *adapterRequest, c *Content) error {
	ro, err := newObj("$.record", rv)
	if err != nil {
		return err
	}
	if len(rv.keys) != len(req.RequestedFields) {
		return errors.New("$.record: keys differ from requested_fields")
	}
	for _, f := range req.RequestedFields {
		if !ro.has(f) {
			return fmt.Errorf("$.record.%s: requested field missing", f)
		}
		switch f {
		case "count":
			c.Count = int(ro.integer(f, true, 0, 1<<31-1, 0))
		case "descriptor":
			c.Descriptor = ro.str(f, true)
		case "state":
			c.State = ro.str(f, true)
		case "text":
			c.Text = ro.str(f, true)
		}
	}
	if err := ro.done(); err != nil {
		return err
	}
	// The limits bound the whole record, not each field: three fields each within them could
	// otherwise triple what one reference hands the model.
	l := req.Limits
	if chars, bytes, lines := measure(*c); bytes > l.MaxBytes || chars > l.MaxChars || lines > l.MaxLines {
		return errors.New("$.record: over the requested limits (whole record)")
	}
	return nil
}

// Transport sends one request frame and returns one response frame.
type Transport interface {
	Exchange(ctx context.Context, req []byte) ([]byte, error)
}

// Env looks up environment variables for env_from and headers_from (never logged).
type Env func(string) (string, bool)

// stdioTransport runs the exact executable with no shell.
type stdioTransport struct {
	cfg AdapterConfig
	env Env
	// Stderr keeps the last child's bounded stderr, private to the run (never logged).
	stderr []byte
}

type boundedBuf struct {
	b   []byte
	max int
}

var errExcess = errors.New("excess bytes")

// capBuf keeps the first max bytes and silently drops the rest (stderr must never block or
// fail the child, only stay bounded).
type capBuf struct {
	b   []byte
	max int
}

func (w *capBuf) Write(p []byte) (int, error) {
	if room := w.max - len(w.b); room > 0 {
		w.b = append(w.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (w *boundedBuf) Write(p []byte) (int, error) {
	if len(w.b)+len(p) > w.max {
		w.b = append(w.b, p[:max(0, w.max-len(w.b))]...)
		return 0, errExcess
	}
	w.b = append(w.b, p...)
	return len(p), nil
}

// Exchange writes one JSONL request and reads one response under ctx's deadline (delivery,
// response and exit together). The child runs in its own process group with a clean
// allowlisted environment and an isolated owner-only home and working directory; on any
// failure, and always after exit, the whole group is killed so a forked child cannot linger.
func (s *stdioTransport) Exchange(ctx context.Context, req []byte) ([]byte, error) {
	home, err := os.MkdirTemp("", "ocr-adapter-")
	if err != nil {
		return nil, errUnavailable
	}
	defer os.RemoveAll(home)
	if err := os.Chmod(home, 0o700); err != nil {
		return nil, errUnavailable
	}
	envv := []string{"HOME=" + home, "TMPDIR=" + home, "PATH=/usr/bin:/bin", "LANG=C.UTF-8"}
	for _, n := range s.cfg.EnvFrom {
		v, ok := s.env(n)
		if !ok {
			return nil, errUnavailable
		}
		envv = append(envv, n+"="+v)
	}
	out := &boundedBuf{max: maxFrameBytes + 1}
	errb := &capBuf{max: maxStderrBytes}
	// No grace: the group is killed as soon as the deadline passes; the streams are closed
	// shortly after the child exits; the group is killed again once it is reaped.
	r := procgroup.Run(ctx, procgroup.Spec{Argv: append([]string{s.cfg.Command}, s.cfg.Args...), Env: envv, Dir: home,
		Stdin: bytes.NewReader(append(append([]byte{}, req...), '\n')), Stdout: out, Stderr: errb, WaitDelay: 200 * time.Millisecond})
	if r.StartErr != nil {
		return nil, errUnavailable
	}
	werr := r.WaitErr
	// Redaction can lengthen the text (a marker for a short value): bound it again after.
	red, _ := filter.New(nil).Redact(strings.ToValidUTF8(string(errb.b), ""))
	if len(red) > maxStderrBytes {
		n := maxStderrBytes
		for n > 0 && !utf8.RuneStart(red[n]) {
			n--
		}
		red = red[:n]
	}
	s.stderr = []byte(red)
	if werr != nil || ctx.Err() != nil || len(out.b) > maxFrameBytes {
		return nil, errUnavailable
	}
	b := out.b
	if len(b) == 0 || b[len(b)-1] != '\n' || bytes.Count(b, []byte("\n")) != 1 {
		return nil, errUnavailable // partial or multiple frames
	}
	return b, nil
}

// remoteTransport posts to one HTTPS endpoint.
type remoteTransport struct {
	cfg    AdapterConfig
	env    Env
	client *http.Client
}

// newRemoteTransport builds the client: TLS verified (roots nil = system pool; tests inject
// theirs), no proxy from the environment, no redirects.
func newRemoteTransport(cfg AdapterConfig, env Env, roots *x509.CertPool) *remoteTransport {
	tr := &http.Transport{
		Proxy:               nil,
		TLSClientConfig:     &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		DisableKeepAlives:   true,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	c := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &remoteTransport{cfg: cfg, env: env, client: c}
}

func (r *remoteTransport) Exchange(ctx context.Context, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return nil, errUnavailable
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for h, e := range r.cfg.HeadersFrom {
		v, ok := r.env(e)
		if !ok || v == "" || strings.ContainsAny(v, "\r\n") {
			return nil, errUnavailable
		}
		req.Header.Set(h, v)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, errUnavailable
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, errUnavailable // redirects included: they are never followed
	}
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return nil, errUnavailable
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxFrameBytes+1))
	if err != nil || len(b) > maxFrameBytes {
		return nil, errUnavailable
	}
	return b, nil
}

// Broker resolves reference candidates through the configured adapters.
type Broker struct {
	Adapters []AdapterConfig
	Env      Env
	// RootCAs is the TLS root pool for remote adapters (nil: the system pool). Only tests set
	// it.
	RootCAs *x509.CertPool
	// transports caches one transport per adapter name.
	transports map[string]Transport
}

func (b *Broker) adapter(name string) (*AdapterConfig, bool) {
	for i := range b.Adapters {
		if b.Adapters[i].Name == name {
			return &b.Adapters[i], true
		}
	}
	return nil, false
}

// CheckReferences verifies that every policy reference selects a configured adapter, tenant
// and resource class (policy narrows, never creates).
func (b *Broker) CheckReferences(refs []Reference) error {
	for i, r := range refs {
		a, ok := b.adapter(r.Adapter)
		if !ok {
			return fmt.Errorf("%w: $.references[%d].adapter: %q is not configured in %s", ErrPolicy, i, r.Adapter, EnvAdaptersJSON)
		}
		if !contains(a.Tenants, r.Tenant) {
			return fmt.Errorf("%w: $.references[%d].tenant: not allowed by adapter %q", ErrPolicy, i, r.Adapter)
		}
		if !contains(a.ResourceClasses, r.ResourceClass) {
			return fmt.Errorf("%w: $.references[%d].resource_class: not allowed by adapter %q", ErrPolicy, i, r.Adapter)
		}
	}
	return nil
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func (b *Broker) transport(a *AdapterConfig) Transport {
	if b.transports == nil {
		b.transports = map[string]Transport{}
	}
	if t, ok := b.transports[a.Name]; ok {
		return t
	}
	var t Transport
	if a.Type == "stdio" {
		t = &stdioTransport{cfg: *a, env: b.Env}
	} else {
		t = newRemoteTransport(*a, b.Env, b.RootCAs)
	}
	b.transports[a.Name] = t
	return t
}

// Resolve sends one authorize_and_resolve request for candidate and returns the admitted
// record, or nil when the adapter answered unavailable or failed in any way.
func (b *Broker) Resolve(ctx context.Context, runID, requestID string, ref Reference, candidate string, now time.Time) *AdapterRecord {
	a, ok := b.adapter(ref.Adapter)
	if !ok {
		return nil
	}
	var deadline int64 = 1
	if d, ok := ctx.Deadline(); ok {
		deadline = max(1, time.Until(d).Milliseconds())
	}
	req := &adapterRequest{
		SchemaVersion: adapterRequestSchema, Operation: adapterOperation, RequestID: requestID, RunID: runID,
		Adapter: ref.Adapter, Tenant: ref.Tenant, ResourceClass: ref.ResourceClass, Candidate: candidate,
		RequestedFields: requestedFields(ref.Projections.Retrieve),
		Limits:          adapterLimits{MaxChars: ref.Budgets.MaxChars, MaxBytes: ref.Budgets.MaxBytes, MaxLines: ref.Budgets.MaxLines, MaxAgeSeconds: ref.MaxAgeSeconds, DeadlineMS: deadline},
	}
	if req.RequestedFields == nil {
		req.RequestedFields = []string{}
	}
	frame, err := json.Marshal(req)
	if err != nil {
		return nil
	}
	resp, err := b.transport(a).Exchange(ctx, frame)
	if err != nil || ctx.Err() != nil {
		return nil
	}
	rec, err := decodeAdapterResponse(resp, req, now)
	if err != nil {
		return nil
	}
	return rec
}
