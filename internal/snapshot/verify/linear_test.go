package verify

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/test/acqcorpus"
)

// Load's memory traffic grows linearly with the tree and stays at its level: the bytes it
// allocates per byte of tree are about the same for a tree eight times larger, and below a
// bound the code before the linear-verify rework exceeded. This is the benchmark-free guard of
// the scale targets (test/scale measures the time): a cost that grows faster than the tree
// (re-reading the index per record, a quadratic append) raises the per-byte figure with n,
// and decoding or copying the 77 MB index again raises its level. Allocation does not depend
// on the machine's load, so unlike CPU time it can be asserted.
func TestLoadAllocatesLinearly(t *testing.T) {
	const maxAllocPerTreeByte = 16.5
	if testing.Short() {
		t.Skip("assembles and verifies trees of 1,000 and 8,000 records")
	}
	if raceEnabled {
		t.Skip("the race detector's own allocations would be counted")
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
	// And the level: 13.2 bytes per tree byte (mostly the schema validator's decoded chunks);
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

// The files are read ahead on every core but accounted for in walk order: on a tree of
// several read batches, the files refused for the total bound and the file refused for the
// file count are exactly those a serial walk refuses (each directory's entries in name order,
// a directory's files before the files of a later subdirectory).
func TestBoundsAreAppliedInWalkOrder(t *testing.T) {
	const n = 1200 // over maxPendingFiles files in records/
	tree, err := snapshot.Assemble(context.Background(), acqcorpus.MakeBusy(n), snapshot.Config{Profile: acqcorpus.Profile(n),
		Category: snapshot.CategoryObservation, Filter: filter.New(nil)})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "tree")
	if err := tree.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	// The serial walk: paths and sizes in walk order.
	type file struct {
		path string
		size int64
	}
	var order []file
	var walk func(rel string)
	walk = func(rel string) {
		entries, err := os.ReadDir(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries { // sorted by name
			p := path.Join(rel, e.Name())
			if e.IsDir() {
				walk(p)
				continue
			}
			fi, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			order = append(order, file{p, fi.Size()})
		}
	}
	walk(".")
	if len(order) <= 2*maxPendingFiles {
		t.Fatalf("only %d files: fewer than three read batches", len(order))
	}
	var total int64
	for _, f := range order {
		total += f.size
	}
	maxTotal, maxFiles := total/2, len(order)-len(order)/4
	var want []string
	var sum int64
	for i, f := range order {
		switch {
		case i == maxFiles:
			want = append(want, f.path+": "+RuleTooManyFiles)
		case i > maxFiles:
		case f.size > maxTotal-sum:
			want = append(want, f.path+": "+RuleFileTooLarge)
		default:
			sum += f.size
		}
	}
	_, rep, err := LoadChecked(t, context.Background(), dir, Options{MaxTotalBytes: maxTotal, MaxFiles: maxFiles})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, v := range rep.Violations {
		if v.Rule == RuleFileTooLarge || v.Rule == RuleTooManyFiles {
			got[v.Path+": "+v.Rule] = true
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d bound violations, a serial walk gives %d", len(got), len(want))
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("missing %s", w)
		}
	}
	if len(want) < 2 {
		t.Fatalf("the bounds refuse %d files: the case tests nothing", len(want))
	}
}
