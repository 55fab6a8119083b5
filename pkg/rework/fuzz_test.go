package rework

import (
	"errors"
	"testing"
)

// FuzzParseTarget: the target file is untrusted; the parser never panics, and anything it
// accepts satisfies every rule.
func FuzzParseTarget(f *testing.F) {
	f.Add([]byte(goodTarget))
	f.Add([]byte(`{"schema":"gitea-agent.rework-input/v1","target":{"owner":"a","repository":"b","issue":1,"pr":1},"head":"","contract_sha256":""}`))
	f.Add([]byte(`{"schema":1}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		tg, err := ParseTarget(b)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error is not an *InputError: %v", err)
			}
			return
		}
		if !ValidOwner(tg.Owner) || !ValidRepository(tg.Repository) || tg.Issue <= 0 || tg.PR <= 0 || tg.Issue == tg.PR || !isHex(tg.Head, 40) || !isHex(tg.ContractSHA256, 64) {
			t.Fatalf("accepted an invalid target %+v", tg)
		}
	})
}

// FuzzParseContract: the provider contract is untrusted input too.
func FuzzParseContract(f *testing.F) {
	f.Add([]byte(contractJSON()))
	f.Add([]byte(`{"schema":"gitea-agent.rework-provider-contract/v1"}`))
	f.Add([]byte(`{"roles":{"spec_reviewer":{"id":1e3}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseContract(b, implID)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error is not an *InputError: %v", err)
			}
			return
		}
		if c.SpecReviewer.ID <= 0 || c.CodeReviewer.ID <= 0 || c.SpecReviewer.ID == c.CodeReviewer.ID || c.SpecReviewer.ID == implID || c.CodeReviewer.ID == implID || len(c.Counters) != 3 {
			t.Fatalf("accepted an invalid contract %+v", c)
		}
	})
}

// FuzzParseMarker: review bodies are untrusted; marker parsing never panics and a marker
// without a problem has well-formed fields.
func FuzzParseMarker(f *testing.F) {
	w := baseWorld()
	f.Add(specBody(w, VerdictApproved, tHead))
	f.Add(codeBody(w, VerdictRequestChanges, tHead))
	f.Add("\n")
	f.Fuzz(func(t *testing.T, body string) {
		m := ParseMarker(body)
		if m.Problem == "" && m.Kind != "none" && (!isHex(m.Head, 40) || !isHex(m.Contract, 64)) {
			t.Fatalf("marker without a problem has malformed fields: %+v", m)
		}
	})
}

// FuzzNextLink: the Link header is untrusted; it never steers the walk off the endpoint.
func FuzzNextLink(f *testing.F) {
	f.Add(`<http://h/api/v1/x?limit=50&page=2>; rel="next",<http://h/api/v1/x?limit=50&page=3>; rel="last"`)
	f.Add(`<//evil/api/v1/x?page=2>; rel=next`)
	f.Fuzz(func(t *testing.T, link string) {
		base, _ := ParseAPIURL("http://h/api/v1")
		h := map[string][]string{"Link": {link}}
		_, _ = nextLink(base, "/x", h, 1)
	})
}
