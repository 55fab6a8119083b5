package forge

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/internal/forge/retry"
)

// ClientSpec is what a forge package states about its HTTP API to get the shared client from
// NewHTTPClient.
type ClientSpec struct {
	// Forge names the client in log lines.
	Forge string
	// Auth places the token on a request (e.g. "Authorization: token …", "PRIVATE-TOKEN").
	// It is called only for requests to the API's own origin and only with a non-empty token.
	Auth func(h http.Header, token string)
	// Endpoint templates a request for the retry log line (no path values, no query).
	Endpoint func(*http.Request) string
	// Retry are the forge's default retry numbers (Options.Retry overrides field by field).
	Retry Retry
	// Timeout bounds each attempt (default 60s).
	Timeout time.Duration
}

// NewHTTPClient is the authenticated, policy-checked, retrying *http.Client of o, for forge
// code that needs plain HTTP beside (or instead of) a forge SDK — capability packages such as
// the rework gate and review-context enrichment use it through their provider's Options:
//
//   - the transport policy (CheckAPIURL) runs first, unless o.Transport replays a cassette;
//   - the token goes only to the API's origin (scheme, host and port of o.APIURL), and a
//     redirect to another origin is handed back unfollowed;
//   - retries follow internal/forge/retry (one log line per retry), with spec.Retry as defaults;
//   - o.Transport (cassette recorder or replayer, a test transport) is the innermost layer.
//
// Mark a write that must not be repeated with retry.Once on its context. Pagination over the
// answers is forge.Paginate.
func NewHTTPClient(o Options, spec ClientSpec) (*http.Client, error) {
	api, err := url.Parse(strings.TrimSuffix(o.APIURL, "/"))
	if err != nil || api.Host == "" {
		return nil, &ConfigError{Field: "--api-url", Rule: "must be an absolute https URL", Err: err}
	}
	if _, replay := o.Transport.(*cassette.Replayer); !replay {
		if err := CheckAPIURL(o.APIURL, o.InsecureHTTP, o.Log); err != nil {
			return nil, err
		}
	}
	inner := o.Transport
	if o.Pool != nil {
		inner = o.Pool.Wrap(inner)
	} else if inner == nil {
		inner = http.DefaultTransport.(*http.Transport).Clone()
	}
	origin := strings.ToLower(api.Scheme + "://" + api.Host)
	timeout := spec.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	rc := retryablehttp.NewClient()
	rc.HTTPClient = &http.Client{
		Transport:     &authTransport{next: inner, origin: origin, token: o.Token, auth: spec.Auth},
		Timeout:       timeout,
		CheckRedirect: sameOrigin(origin),
	}
	retry.New(retry.Policy{Forge: spec.Forge, Limits: o.Retry.Defaults(spec.Retry), Endpoint: spec.Endpoint, Log: o.Log, Limiter: o.Pool.RetryLimiter()}).Apply(rc)
	hc := retry.StandardClient(rc)
	hc.CheckRedirect = sameOrigin(origin)
	return hc, nil
}

// authTransport adds the credential to requests for the API origin only.
type authTransport struct {
	next   http.RoundTripper
	origin string
	token  string
	auth   func(http.Header, string)
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.token != "" && t.auth != nil && originOf(req.URL) == t.origin {
		req = req.Clone(req.Context())
		t.auth(req.Header, t.token)
	}
	return t.next.RoundTrip(req)
}

func originOf(u *url.URL) string { return strings.ToLower(u.Scheme + "://" + u.Host) }

// sameOrigin is the redirect policy: a hop to another origin is returned unfollowed (the
// caller sees the 3xx), at most 10 hops otherwise.
func sameOrigin(origin string) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if originOf(req.URL) != origin || len(via) >= 10 {
			return http.ErrUseLastResponse
		}
		return nil
	}
}

// BearerAuth is ClientSpec.Auth for "Authorization: <scheme> <token>" APIs.
func BearerAuth(scheme string) func(http.Header, string) {
	return func(h http.Header, token string) { h.Set("Authorization", fmt.Sprintf("%s %s", scheme, token)) }
}
