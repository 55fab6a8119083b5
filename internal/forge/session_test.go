package forge_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge"
)

// The transport policy: https anywhere; plain http only to a loopback host or with
// --insecure-http, which is logged; anything else is a *ConfigError naming --api-url.
func TestAPIURLMustBeHTTPSExceptLoopback(t *testing.T) {
	for _, tc := range []struct {
		url      string
		insecure bool
		ok       bool
	}{
		{"https://api.github.com", false, true},
		{"https://gitlab.example:8443/api/v4", false, true},
		{"http://127.0.0.1:8080/api/v1", false, true},
		{"http://127.9.9.9/api/v1", false, true},
		{"http://[::1]:3000/api/v1", false, true},
		{"http://localhost:3000/api/v1", false, true},
		{"http://LOCALHOST./api/v1", false, true},
		{"http://forge.example/api/v1", false, false},
		{"http://10.0.0.7/api/v1", false, false},
		{"http://localhost.evil.example/api/v1", false, false},
		{"http://forge.example/api/v1", true, true},
		{"ftp://forge.example", true, false},
		{"forge.example", false, false},
	} {
		var logs bytes.Buffer
		err := forge.CheckAPIURL(tc.url, tc.insecure, zerolog.New(&logs))
		var ce *forge.ConfigError
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s (insecure %v): %v", tc.url, tc.insecure, err)
		case !tc.ok && (!errors.As(err, &ce) || ce.Field != "--api-url"):
			t.Errorf("%s (insecure %v): err = %v, want a --api-url ConfigError", tc.url, tc.insecure, err)
		}
		if warned := strings.Contains(logs.String(), "insecure-http"); warned != (tc.ok && tc.insecure) {
			t.Errorf("%s (insecure %v): warning logged = %v", tc.url, tc.insecure, warned)
		}
	}
}
