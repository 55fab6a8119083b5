package forge_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge"
)

// The shared client sends the token to the API's own origin only, hands a redirect to another
// origin back unfollowed, and retries a 502 under the shared policy.
func TestNewHTTPClientAuthOriginRedirectAndRetry(t *testing.T) {
	var mu sync.Mutex
	var otherAuth []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		otherAuth = append(otherAuth, r.Header.Get("Authorization"))
		mu.Unlock()
	}))
	defer other.Close()
	calls := 0
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "token s3cr3t" {
			t.Errorf("%s: Authorization %q", r.URL.Path, r.Header.Get("Authorization"))
		}
		switch r.URL.Path {
		case "/api/flaky":
			if calls++; calls == 1 {
				w.WriteHeader(http.StatusBadGateway)
			}
		case "/api/away":
			http.Redirect(w, r, other.URL+"/x", http.StatusFound)
		}
	}))
	defer api.Close()
	hc, err := forge.NewHTTPClient(forge.Options{APIURL: api.URL + "/api", Token: "s3cr3t", Log: zerolog.Nop()}, forge.ClientSpec{
		Forge: "test", Auth: forge.BearerAuth("token"), Retry: forge.Retry{Max: 2, WaitMin: time.Millisecond, WaitMax: time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Get(api.URL + "/api/flaky")
	if err != nil || resp.StatusCode != 200 || calls != 2 {
		t.Fatalf("flaky: %v %v after %d calls, want 200 after one retry", resp, err, calls)
	}
	resp.Body.Close()
	resp, err = hc.Get(api.URL + "/api/away")
	if err != nil || resp.StatusCode != http.StatusFound {
		t.Fatalf("redirect: %v %v, want the 302 handed back", resp, err)
	}
	resp.Body.Close()
	resp, err = hc.Get(other.URL + "/direct")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(otherAuth) != 1 || otherAuth[0] != "" {
		t.Errorf("other origin saw Authorization %q, want one request without it", otherAuth)
	}
	// The transport policy holds here too.
	if _, err := forge.NewHTTPClient(forge.Options{APIURL: "http://forge.example/api", Token: "x"}, forge.ClientSpec{}); err == nil {
		t.Error("plain http to a non-loopback host was accepted")
	}
}
