package filter_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/test/corpus"
)

// TestCorpusRecallAndPrecision: every planted secret of every family is gone from the
// emitted bytes, and the number of redactions equals the number planted (look-alikes — SHAs,
// UUIDs, digests, base64 images, timestamps, phone numbers, order IDs, versions, digit-free
// variable names — are kept), on plain corpora and on the hostile one (no line in NFKC).
func TestCorpusRecallAndPrecision(t *testing.T) {
	for name, c := range map[string]corpus.Corpus{
		"ci-log":  corpus.CILog(1, 1<<20),
		"thread":  corpus.Thread(2, 1<<20),
		"mixed":   corpus.Mixed(3, 1<<20),
		"hostile": corpus.Hostile(4, 1<<20),
	} {
		t.Run(name, func(t *testing.T) {
			p := filter.New(c.RunCredentials)
			r, err := p.Apply(context.Background(), c.Text, filter.Options{Role: filter.RoleLog})
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != filter.StatusModified {
				t.Fatalf("status %s, findings %v", r.Status, r.Findings)
			}
			fams := map[string]bool{}
			for _, s := range c.Secrets {
				fams[s.Family] = true
				if bytes.Contains(r.Output, []byte(s.Value)) {
					t.Errorf("planted %s survived", s.Family)
				}
			}
			if len(fams) != len(corpus.Families) {
				t.Errorf("corpus planted %d families, want %d", len(fams), len(corpus.Families))
			}
			redactions := 0
			for _, f := range r.Findings {
				if len(f.Code) > 7 && f.Code[:7] == "redact." {
					redactions += f.Count
				}
			}
			if redactions != len(c.Secrets) {
				t.Errorf("%d redactions for %d planted secrets: %v", redactions, len(c.Secrets), r.Findings)
			}
		})
	}
}
