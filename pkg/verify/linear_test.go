package verify

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/forgectx/forgectx/pkg/filter"
	"github.com/forgectx/forgectx/pkg/snapshot"
	"github.com/forgectx/forgectx/test/acqcorpus"
)

// Load's memory traffic grows linearly with the tree and stays at its level: the bytes it
// allocates per byte of tree are about the same for a tree eight times larger, and below a
// bound the code before issue #23's verify round exceeded. This is the benchmark-free guard of
// the scale targets (test/scale measures the time): a cost that grows faster than the tree
// (re-reading the index per record, a quadratic append) raises the per-byte figure with n,
// and decoding or copying the 77 MB index again raises its level. Allocation does not depend
// on the machine's load, so unlike CPU time it can be asserted.
func TestLoadAllocatesLinearly(t *testing.T) {
	const maxAllocPerTreeByte = 16.5
	if testing.Short() {
		t.Skip("assembles and verifies trees of 1,000 and 8,000 records")
	}
	perByte := map[int]float64{}
	for _, n := range []int{1000, 8000} {
		tree, err := snapshot.Assemble(context.Background(), acqcorpus.MakeBusy(n), snapshot.Config{Profile: acqcorpus.Profile(n),
			Category: snapshot.CategoryObservation, Filter: filter.New(nil)})
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), fmt.Sprint(n))
		if err := tree.WriteDir(dir); err != nil {
			t.Fatal(err)
		}
		tree = nil
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		snap, rep, err := Load(context.Background(), dir, Options{})
		runtime.ReadMemStats(&after)
		if err != nil || snap == nil {
			t.Fatalf("%d records: %v %v", n, err, rep.Violations)
		}
		perByte[n] = float64(after.TotalAlloc-before.TotalAlloc) / float64(rep.Bytes)
		t.Logf("%d records: %d bytes of tree, %.2f bytes allocated per byte", n, rep.Bytes, perByte[n])
	}
	// And the level: 14.7 bytes per tree byte (mostly the schema validator's decoded chunks);
	// 19.5 before index.json was split in place and canonical forms were checked without
	// Transform's parse tree (three more decodes and copies of the index, a node per value).
	if perByte[8000] > maxAllocPerTreeByte {
		t.Errorf("Load allocates %.2f bytes per tree byte at 8,000 records; at most %.1f expected", perByte[8000], maxAllocPerTreeByte)
	}
	if r := perByte[8000] / perByte[1000]; r > 1.15 {
		t.Errorf("Load allocates %.2f bytes per tree byte at 8,000 records and %.2f at 1,000 (%.2f×): a cost grows faster than the tree",
			perByte[8000], perByte[1000], r)
	}
}
