package rework

// The gate reads the forge only through the Forgejo adapter's strict Reader and its typed
// services (internal/forge/forgejo: NewReadOnlyClient, NewReader): the shared forge client,
// the GET-only guard, the pagination walk and the provenance of every answer live there. This
// file holds the gate's own numbers and its API URL rule.

import (
	"net/url"
	"strings"
	"time"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/forgejo"
)

// PageSize is the `limit` of every list request: Gitea's default MAX_RESPONSE_ITEMS (50).
const PageSize = 50

// Bounds of one capture: a listing longer than MaxPages pages or MaxListItems rows, or a
// response larger than MaxResponseBytes, is an incomplete collection (blocking), never cut.
const (
	MaxPages         = 100
	MaxListItems     = 5000
	MaxResponseBytes = 8 << 20
)

// readerLimits are the bounds above as the Reader takes them.
var readerLimits = forgejo.ReaderLimits{PageSize: PageSize, MaxPages: MaxPages, MaxRows: MaxListItems, MaxResponseBytes: MaxResponseBytes}

// DefaultRetry are the gate's retry numbers: 3 retries of transport errors, 429 and 5xx (not
// 501), backing off from 500 ms to 10 s, a server-demanded wait capped at 2 minutes.
var DefaultRetry = forge.Retry{Max: 3, WaitMin: 500 * time.Millisecond, WaitMax: 10 * time.Second, MaxServerWait: 2 * time.Minute}

// Page is the provenance of one response (forgejo.RawPage): request, status, X-Total-Count and
// Link as sent, rows.
type Page = forgejo.RawPage

// ParseAPIURL validates an API base URL: absolute http(s), no query, fragment or credentials,
// path ending in /api/v1.
func ParseAPIURL(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(s, "/"))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, inErr("--api-url", "", "must be an absolute http(s) URL without credentials, query or fragment")
	}
	if !strings.HasSuffix(u.Path, "/api/v1") {
		return nil, inErr("--api-url", "", "must end with /api/v1 (the server URL plus /api/v1)")
	}
	return u, nil
}
