package reviewpub

import (
	"fmt"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/review/reviewresult"
)

// BenchmarkProject: the largest result the format allows in findings (200 findings with
// 8 KiB messages and 16 KiB code) against a 500,000-character forbidden corpus.
func BenchmarkProject(b *testing.B) {
	var forbidden []string
	for i := range 500 {
		forbidden = append(forbidden, strings.Repeat(fmt.Sprintf("context record %d says the retry budget is bounded; ", i), 20))
	}
	r := baseResult()
	for i := range reviewresult.MaxFindings {
		f := finding(strings.Repeat(fmt.Sprintf("Finding %d: the loop over items has no upper bound. ", i), 200)[:8000])
		f.ExistingCode = strings.Repeat("for {\n\tretry(ctx)\n}\n", 800)[:16000]
		r.Findings = append(r.Findings, f)
	}
	in := Inputs{Forbidden: forbidden, Secrets: []string{runSecret}}
	b.ResetTimer()
	for range b.N {
		if _, err := Project(r, in); err != nil {
			b.Fatal(err)
		}
	}
}
