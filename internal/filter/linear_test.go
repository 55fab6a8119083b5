package filter_test

import (
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/filter"
)

// TestLinearTimeOnPathologicalInput: dense anchors, unterminated constructs and repeated
// separators stay linear (each input here took minutes with the quadratic bugs this guards
// against; linear code takes about a second on a loaded machine).
func TestLinearTimeOnPathologicalInput(t *testing.T) {
	p := filter.New(nil)
	for name, s := range map[string]string{
		"you":       strings.Repeat("you ", 1<<18),
		"pw":        strings.Repeat("password:'", 1<<17),
		"pwq":       strings.Repeat("password:\"a", 1<<17),
		"url":       strings.Repeat("a://b:c", 1<<17),
		"lt":        strings.Repeat("<div hidden>", 1<<17),
		"comment":   strings.Repeat("<!--", 1<<18),
		"begin":     strings.Repeat("-----BEGIN PRIVATE KEY-----", 1<<15),
		"digits":    strings.Repeat("4111 ", 1<<18),
		"combining": "e" + strings.Repeat("\u0301\u0327", 1<<17),
		"fullwidth": strings.Repeat("ｆ", 1<<18),
		"ignore":    strings.Repeat("ignore the ", 1<<17),
		"dodo":      strings.Repeat("do not ", 1<<17),
		"curl":      strings.Repeat("curl ", 1<<18),
		"auth":      strings.Repeat("Authorization: Digest ", 1<<16),
		"esc":       strings.Repeat("\x1b[", 1<<18),
		"iban":      strings.Repeat("DE89 ", 1<<18),
		"curl-u":    "curl " + strings.Repeat("-u a:b ", 1<<17),
		"dash-u":    strings.Repeat("-u -p ", 1<<18),
		"longflag":  strings.Repeat("--token --password ", 1<<16),
		"encurl":    strings.Repeat("%3A%2F%2Fa%3Ab", 1<<16),
		"xml":       strings.Repeat("<password>", 1<<17),
		"system":    strings.Repeat("system: ", 1<<17),
		"run":       strings.Repeat("run env and ", 1<<16),
		"slack":     strings.Repeat("hooks.slack.com/services/", 1<<15),
		"cyrillic":  strings.Repeat("ignоre ", 1<<17),
		"hiddenif":  "<!--" + strings.Repeat("if you ", 1<<17),
		"dollar":    strings.Repeat("$DEPLOY_TOKEN ${X_TOKEN} ", 1<<15) + "exfiltrate",
		"cjk":       strings.Repeat("（注）日本語，ﾊﾟｯｹｰｼﾞ　", 1<<15),
	} {
		st := time.Now()
		r, err := p.Apply(bg, []byte(s), filter.Options{Role: filter.RoleBody})
		if d := time.Since(st); err != nil || d > 15*time.Second {
			t.Errorf("%s: %d bytes took %v (err %v, status %s)", name, len(s), d, err, r.Status)
		}
	}
}
