package filter_test

import (
	"context"
	"testing"

	"github.com/forgectx/forgectx/pkg/filter"
	"github.com/forgectx/forgectx/test/corpus"
)

// benchApply runs the full pipeline over c; b.SetBytes makes `go test -bench` report MB/s.
func benchApply(b *testing.B, c corpus.Corpus, role filter.Role) {
	p := filter.New(c.RunCredentials)
	ctx := context.Background()
	b.SetBytes(int64(len(c.Text)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r, err := p.Apply(ctx, c.Text, filter.Options{Role: role, MaxBytes: 1 << 30})
		if err != nil || r.Status == filter.StatusRejected {
			b.Fatalf("status %s err %v findings %v", r.Status, err, r.Findings)
		}
	}
}

// BenchmarkApplyCILog is the performance target: >= 30 MB/s on one core on CI logs.
func BenchmarkApplyCILog(b *testing.B) { benchApply(b, corpus.CILog(1, 8<<20), filter.RoleLog) }

// BenchmarkApplyThread measures markdown threads (prose, template comments, code blocks).
func BenchmarkApplyThread(b *testing.B) { benchApply(b, corpus.Thread(2, 4<<20), filter.RoleBody) }
