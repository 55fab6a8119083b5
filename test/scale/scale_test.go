// Package scale holds the scale benchmarks of a 100,000-record pull request: the
// snapshot pipeline (acquisition.Read of the JSON file, snapshot.AssembleTo) against
// its floor (writing the same files and bytes plus their SHA-256), then verify, stage and
// prompt on the written tree, and `forgectx run`'s whole snapshot-to-sealed-copy path
// (BenchmarkRunStage), each at 1k, 10k and 100k records of acqcorpus.MakeBusy.
//
// Every benchmark reports peak-rss-MB, the process's peak resident set (VmHWM) during the
// timed loop: the peak is reset (debug.FreeOSMemory, then "5" written to
// /proc/self/clear_refs) before the loop and read from /proc/self/status after it, so the
// figure covers the loop only. BenchmarkAssemble also reports acq-MB (the acquisition file's
// size), rss-per-acq (peak RSS over it), floor-ms (the floor measured in the same run on the
// same tree) and x-floor (ns/op over the floor), and the same in CPU time (floor-cpu-ms,
// x-floor-cpu). Every benchmark also reports cpu-ms, the process's CPU time per op: file
// creation on a shared disk makes wall times noisy, CPU time much less so.
//
// 100k records are heavy (minutes of CPU, about 1.5 GB of memory): run them sparingly, e.g.
//
//	TMPDIR=/dev/shm go test ./test/scale -run XXX -bench '/records=100000$' -benchtime 1x
//
// (the pattern needs its leading slash: it matches the sub-benchmark, not the benchmark).
// TMPDIR on a tmpfs keeps other processes' disk traffic out of the wall times and the floor;
// the figures and how they were taken are in docs/snapshot.md "Scale".
package scale_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/internal/snapshot/checkdigest"
	"github.com/forgectx/forgectx/internal/snapshot/prompt"
	"github.com/forgectx/forgectx/internal/snapshot/stage"
	"github.com/forgectx/forgectx/internal/snapshot/treefs"
	"github.com/forgectx/forgectx/internal/snapshot/verify"
	"github.com/forgectx/forgectx/test/acqcorpus"
)

var sizes = []int{1000, 10000, 100000}

// corpus is one size's acquisition file and (once built) its assembled tree on disk.
type corpus struct {
	n        int
	acqPath  string
	acqBytes int64
	treeDir  string
	digest   string
}

var (
	tmpRoot string
	mu      sync.Mutex
	corpora = map[int]*corpus{}
)

func TestMain(m *testing.M) {
	var err error
	if tmpRoot, err = os.MkdirTemp("", "forgectx-scale-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(tmpRoot)
	os.Exit(code)
}

func config(n int) snapshot.Config {
	return snapshot.Config{Profile: acqcorpus.Profile(n), Category: snapshot.CategoryObservation, Filter: filter.New(nil)}
}

// get returns the corpus of n records, writing its acquisition file the first time.
func get(b *testing.B, n int) *corpus {
	mu.Lock()
	defer mu.Unlock()
	if c, ok := corpora[n]; ok {
		return c
	}
	c := &corpus{n: n, acqPath: filepath.Join(tmpRoot, fmt.Sprintf("acq-%d.json", n))}
	f, err := os.Create(c.acqPath)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := acquisition.Write(w, acqcorpus.MakeBusy(n)); err != nil {
		b.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(c.acqPath)
	if err != nil {
		b.Fatal(err)
	}
	c.acqBytes = fi.Size()
	corpora[n] = c
	return c
}

// tree returns the corpus with its tree assembled and written (once).
func tree(b *testing.B, n int) *corpus {
	c := get(b, n)
	mu.Lock()
	defer mu.Unlock()
	if c.treeDir == "" {
		dir := filepath.Join(tmpRoot, fmt.Sprintf("tree-%d", n))
		t, err := pipeline(c, dir)
		if err != nil {
			b.Fatal(err)
		}
		c.treeDir, c.digest = dir, t.IndexSHA256
	}
	return c
}

// pipeline is `forgectx snapshot --from-acquisition FILE --out DIR`: read, then assemble with
// snapshot.AssembleTo, which streams the record files to disk as they are final, under the
// soft memory limit snapshot.MemoryLimit of the file's size.
func pipeline(c *corpus, out string) (*snapshot.Tree, error) {
	return pipelineWith(c, out, false)
}

// pipelineWith reads the acquisition and assembles it, either as pipeline does or (inMemory)
// with snapshot.Assemble holding the whole tree, then WriteDir: the form before AssembleTo.
func pipelineWith(c *corpus, out string, inMemory bool) (*snapshot.Tree, error) {
	// As forgectx snapshot does: the soft memory limit of the acquisition's size, from before
	// the file is read.
	if !inMemory && os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(snapshot.MemoryLimit(c.acqBytes)))
	}
	f, err := os.Open(c.acqPath)
	if err != nil {
		return nil, err
	}
	acq, err := acquisition.Read(f)
	f.Close()
	if err != nil {
		return nil, err
	}
	cfg := config(c.n)
	cfg.ReleaseBodies = true // as forgectx snapshot does
	if !inMemory {
		return snapshot.AssembleTo(context.Background(), acq, cfg, out)
	}
	t, err := snapshot.Assemble(context.Background(), acq, cfg)
	if err != nil {
		return nil, err
	}
	return t, t.WriteDir(out)
}

// written is an assembled tree read back from disk: the floor's input.
type written struct {
	files []treefs.File
	index []byte
}

// readWritten loads the tree written under dir (not timed: the floor's bytes must be in
// memory, as an assembler's are once produced).
func readWritten(dir string) (written, error) {
	var w written
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		if rel == "index.json" {
			w.index = b
		} else {
			w.files = append(w.files, treefs.File{Path: filepath.ToSlash(rel), Data: b})
		}
		return err
	})
	sort.Slice(w.files, func(i, j int) bool { return w.files[i].Path < w.files[j].Path })
	return w, err
}

// floor writes the same files and bytes as the assembled tree and hashes each with SHA-256:
// the least any assembler of this tree must do.
func floor(t written, out string) error {
	if err := os.Mkdir(out, 0o700); err != nil {
		return err
	}
	for _, f := range t.files {
		sha256.Sum256(f.Data)
	}
	sha256.Sum256(t.index)
	return treefs.Write(out, t.files, t.index)
}

func resetPeak(b *testing.B) {
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Logf("peak RSS cannot be reset (%v): peak-rss-MB covers the whole process", err)
	}
}

// peakRSS is VmHWM from /proc/self/status, in bytes.
func peakRSS(b *testing.B) float64 {
	s, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(s), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb * 1024
		}
	}
	b.Fatal("no VmHWM in /proc/self/status")
	return 0
}

const mib = 1 << 20

// cpuTime is the process's user+system CPU time (GC included). On a shared, loaded machine it
// shows the cost more faithfully than wall time: each benchmark reports it per op as cpu-ms.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measure runs the timed loop body b.N times between a peak-RSS reset and its reading, and
// reports peak-rss-MB and cpu-ms (per op).
func measure(b *testing.B, op func(i int)) (rss float64, cpu time.Duration) {
	resetPeak(b)
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		op(i)
	}
	b.StopTimer()
	cpu = (cpuTime() - cpu0) / time.Duration(b.N)
	rss = peakRSS(b)
	b.ReportMetric(rss/mib, "peak-rss-MB")
	b.ReportMetric(float64(cpu.Milliseconds()), "cpu-ms")
	return rss, cpu
}

func each(b *testing.B, fn func(b *testing.B, n int)) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) { fn(b, n) })
	}
}

// BenchmarkAssemble is `forgectx snapshot` (pipeline: AssembleTo); BenchmarkAssembleInMemory
// the same with Assemble then WriteDir, the tree held whole until written.
func BenchmarkAssemble(b *testing.B) {
	each(b, func(b *testing.B, n int) { benchAssemble(b, n, false) })
}
func BenchmarkAssembleInMemory(b *testing.B) {
	each(b, func(b *testing.B, n int) { benchAssemble(b, n, true) })
}

func benchAssemble(b *testing.B, n int, inMemory bool) {
	c := get(b, n)
	var outs []string
	rss, cpu := measure(b, func(i int) {
		out := filepath.Join(tmpRoot, fmt.Sprintf("assemble-%d-%d", n, i))
		t, err := pipelineWith(c, out, inMemory)
		if err != nil {
			b.Fatal(err)
		}
		if len(t.Files) < n {
			b.Fatalf("only %d files for %d records", len(t.Files), n)
		}
		outs = append(outs, out) // removed after the loop: removal is neither assembly nor floor
	})
	last, err := readWritten(outs[len(outs)-1])
	if err != nil {
		b.Fatal(err)
	}
	for _, o := range outs {
		os.RemoveAll(o)
	}
	perOp := b.Elapsed() / time.Duration(b.N)
	// The floor, in the same run on the same tree: median of three, wall and CPU.
	var fl, flCPU []time.Duration
	for i := 0; i < 3; i++ {
		out := filepath.Join(tmpRoot, fmt.Sprintf("floor-%d-%d", n, i))
		start, cpu0 := time.Now(), cpuTime()
		if err := floor(last, out); err != nil {
			b.Fatal(err)
		}
		fl, flCPU = append(fl, time.Since(start)), append(flCPU, cpuTime()-cpu0)
		os.RemoveAll(out)
	}
	sort.Slice(fl, func(i, j int) bool { return fl[i] < fl[j] })
	sort.Slice(flCPU, func(i, j int) bool { return flCPU[i] < flCPU[j] })
	b.ReportMetric(float64(c.acqBytes)/mib, "acq-MB")
	b.ReportMetric(rss/float64(c.acqBytes), "rss-per-acq")
	b.ReportMetric(float64(fl[1].Milliseconds()), "floor-ms")
	b.ReportMetric(float64(flCPU[1].Milliseconds()), "floor-cpu-ms")
	b.ReportMetric(float64(perOp)/float64(fl[1]), "x-floor")
	b.ReportMetric(float64(cpu)/float64(flCPU[1]), "x-floor-cpu")
}

// BenchmarkFloor is the floor alone: write the assembled tree's files and bytes and hash them.
func BenchmarkFloor(b *testing.B) {
	each(b, func(b *testing.B, n int) {
		c := get(b, n)
		src := filepath.Join(tmpRoot, fmt.Sprintf("floor-src-%d", n))
		if _, err := pipeline(c, src); err != nil {
			b.Fatal(err)
		}
		t, err := readWritten(src)
		if err != nil {
			b.Fatal(err)
		}
		os.RemoveAll(src)
		var outs []string
		measure(b, func(i int) {
			out := filepath.Join(tmpRoot, fmt.Sprintf("floor-%d-%d", n, i))
			if err := floor(t, out); err != nil {
				b.Fatal(err)
			}
			outs = append(outs, out)
		})
		for _, o := range outs {
			os.RemoveAll(o)
		}
	})
}

// BenchmarkRead is acquisition.Read of the corpus file alone (the first step of
// BenchmarkAssemble): one streamed decode with the version check and the member-name check on
// the same pass.
func BenchmarkRead(b *testing.B) {
	each(b, func(b *testing.B, n int) {
		c := get(b, n)
		measure(b, func(int) {
			f, err := os.Open(c.acqPath)
			if err != nil {
				b.Fatal(err)
			}
			acq, err := acquisition.Read(f)
			f.Close()
			if err != nil || len(acq.Comments) == 0 {
				b.Fatal(err)
			}
		})
		b.ReportMetric(float64(c.acqBytes)/mib, "acq-MB")
	})
}

func BenchmarkVerify(b *testing.B) {
	each(b, func(b *testing.B, n int) {
		c := tree(b, n)
		measure(b, func(int) {
			snap, rep, err := verify.Load(context.Background(), c.treeDir, verify.Options{IndexSHA256: c.digest})
			if err != nil || snap == nil {
				b.Fatal(err, rep.Violations)
			}
		})
	})
}

// BenchmarkContextReport is what `forgectx run` adds after staging for the final status
// comment and the job summary: open the host tree through verify.Open against its digest and
// digest the logs of its checks (checkdigest.FromSnapshot). Compare with BenchmarkRunStage.
func BenchmarkContextReport(b *testing.B) {
	each(b, func(b *testing.B, n int) {
		c := tree(b, n)
		measure(b, func(int) {
			snap, rep, err := verify.Open(context.Background(), c.treeDir, verify.Options{IndexSHA256: c.digest})
			if err != nil || snap == nil {
				b.Fatal(err, rep.Violations)
			}
			if _, err := checkdigest.FromSnapshot(snap, checkdigest.Limits{}); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// BenchmarkStage is staging as the previous rounds measured it: create the host tree with
// stage.Create from a tree held in memory (the verified snapshot of the corpus tree, loaded
// before the timer starts and dropped after Create), seal (copy the host tree, make the copy
// immutable, verify it), clean up. The source tree is live when the peak RSS is reset, so
// peak-rss-MB includes it; cpu-ms excludes loading it. It needs root for the ownership seal.
func BenchmarkStage(b *testing.B) {
	benchStage(b, nil)
}

// BenchmarkStageFromDir is `forgectx stage create --from TREE` then Seal and Cleanup, as a
// script drives the stage lifecycle: stage.CreateFromDir copies the corpus tree into the host
// tree file by file and verifies the copy (verify.Check: nothing held), then the same seal and
// cleanup. Unlike BenchmarkStage it includes the verification of the source tree (which
// BenchmarkStage does before its timer), so it does one more full verification.
func BenchmarkStageFromDir(b *testing.B) {
	benchStage(b, func(o stage.Options, c *corpus) (*stage.Stage, error) {
		return stage.CreateFromDir(context.Background(), o, c.treeDir, c.digest)
	})
}

func benchStage(b *testing.B, create func(stage.Options, *corpus) (*stage.Stage, error)) {
	if os.Geteuid() != 0 {
		b.Skip("needs root for the ownership seal")
	}
	each(b, func(b *testing.B, n int) {
		c := tree(b, n)
		base := filepath.Join(tmpRoot, fmt.Sprintf("stage-%d", n))
		if err := os.MkdirAll(base, 0o755); err != nil {
			b.Fatal(err)
		}
		o := stage.Options{Base: base, StateDir: filepath.Join(base, "state"), WorkDir: base, Getenv: func(string) string { return "" }}
		var cpu time.Duration
		var phase [3]time.Duration // create, seal, cleanup
		var rss float64
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			var snap *verify.Snapshot
			if create == nil {
				var rep verify.Report
				var err error
				if snap, rep, err = verify.Load(context.Background(), c.treeDir, verify.Options{IndexSHA256: c.digest}); err != nil || snap == nil {
					b.Fatal(err, rep.Violations)
				}
			}
			resetPeak(b)
			cpu0 := cpuTime()
			b.StartTimer()
			t0 := time.Now()
			var st *stage.Stage
			var err error
			if create != nil {
				st, err = create(o, c)
			} else {
				st, err = stage.Create(context.Background(), o, snap, snap.IndexSHA256)
				snap = nil // the run keeps only the retained digest
			}
			if err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			if _, err := st.Seal(context.Background(), stage.SealOptions{Mode: stage.ModeOwnership, AgentUID: 65534, AgentGID: 65534}); err != nil {
				b.Fatal(err)
			}
			t2 := time.Now()
			if err := st.Cleanup(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			t3 := time.Now()
			phase[0], phase[1], phase[2] = phase[0]+t1.Sub(t0), phase[1]+t2.Sub(t1), phase[2]+t3.Sub(t2)
			cpu += cpuTime() - cpu0
			rss = max(rss, peakRSS(b))
		}
		b.ReportMetric(rss/mib, "peak-rss-MB")
		b.ReportMetric(float64((cpu / time.Duration(b.N)).Milliseconds()), "cpu-ms")
		// Wall time per phase: which one grows faster than the tree.
		for i, name := range []string{"create-ms", "seal-ms", "cleanup-ms"} {
			b.ReportMetric(float64((phase[i] / time.Duration(b.N)).Milliseconds()), name)
		}
	})
}

// BenchmarkRunStage is what `forgectx run` does from the acquisition to the agent's copy:
// under the soft memory limit snapshot.MemoryLimit of the file's size (set before the file is
// read, as pipeline does; `forgectx run` sizes it by the acquisition's live heap, within a few
// percent of the file) acquisition.Read of the file, stage.Build with snapshot.AssembleTo
// writing the host tree (ReleaseBodies), the limit restored as the run's snapshot phase ends,
// then, under the same limit as the run's verify phase, Seal in ownership mode (compare the
// host index with the retained digest, copy the host tree file by file into the agent's copy,
// make it immutable, verify the sealed copy with verify.Check) and Cleanup. peak-rss-MB covers
// the whole op; build-peak-rss-MB is the peak up to the end of Build (the snapshot phase), so
// a peak-rss-MB above it is Seal's. It needs root for the ownership seal.
func BenchmarkRunStage(b *testing.B) {
	each(b, func(b *testing.B, n int) { benchRunStage(b, n, false) })
}

// BenchmarkRunStageInMemory is the form before stage.Build: the tree assembled in memory
// (snapshot.Assemble), written by stage.Create, then dropped; no memory limit in either phase.
func BenchmarkRunStageInMemory(b *testing.B) {
	each(b, func(b *testing.B, n int) { benchRunStage(b, n, true) })
}

func benchRunStage(b *testing.B, n int, inMemory bool) {
	if os.Geteuid() != 0 {
		b.Skip("needs root for the ownership seal")
	}
	c := get(b, n)
	base := filepath.Join(tmpRoot, fmt.Sprintf("runstage-%d", n))
	if err := os.MkdirAll(base, 0o755); err != nil {
		b.Fatal(err)
	}
	o := stage.Options{Base: base, StateDir: filepath.Join(base, "state"), WorkDir: base, Getenv: func(string) string { return "" }}
	var buildPeak float64
	rss, _ := measure(b, func(int) {
		st, files := runBuild(b, c, o, inMemory)
		buildPeak = max(buildPeak, peakRSS(b))
		if files < n {
			b.Fatalf("only %d files for %d records", files, n)
		}
		seal(b, c, st, inMemory)
	})
	b.ReportMetric(buildPeak/mib, "build-peak-rss-MB")
	b.ReportMetric(float64(c.acqBytes)/mib, "acq-MB")
	b.ReportMetric(rss/float64(c.acqBytes), "rss-per-acq")
}

// seal is the verify phase of `forgectx run` (runner.verify): Seal under the soft memory limit
// snapshot.MemoryLimit of the acquisition (the snapshot phase's), then Cleanup.
func seal(b *testing.B, c *corpus, st *stage.Stage, inMemory bool) {
	if !inMemory && os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(snapshot.MemoryLimit(c.acqBytes)))
	}
	if _, err := st.Seal(context.Background(), stage.SealOptions{Mode: stage.ModeOwnership, AgentUID: 65534, AgentGID: 65534}); err != nil {
		b.Fatal(err)
	}
	if err := st.Cleanup(); err != nil {
		b.Fatal(err)
	}
}

// runBuild is the snapshot phase of `forgectx run` (internal/run, runner.snapshot) on the corpus
// file: the staged tree is assembled straight into the host directory, and only the summary,
// digest and sums outlive the builder (inMemory: the form before, Assemble then Create). It
// returns the stage and the tree's file count.
func runBuild(b *testing.B, c *corpus, o stage.Options, inMemory bool) (*stage.Stage, int) {
	if !inMemory && os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(snapshot.MemoryLimit(c.acqBytes)))
	}
	f, err := os.Open(c.acqPath)
	if err != nil {
		b.Fatal(err)
	}
	acq, err := acquisition.Read(f)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	cfg := config(c.n)
	cfg.ReleaseBodies = true
	if inMemory {
		t, err := snapshot.Assemble(context.Background(), acq, cfg)
		if err != nil {
			b.Fatal(err)
		}
		st, err := stage.Create(context.Background(), o, t, t.IndexSHA256)
		if err != nil {
			b.Fatal(err)
		}
		return st, t.Summary.Files
	}
	files := 0
	st, err := stage.Build(context.Background(), o, func(ctx context.Context, dir string) (string, treefs.Sums, error) {
		t, err := snapshot.AssembleTo(ctx, acq, cfg, dir)
		if err != nil {
			return "", nil, err
		}
		files = t.Summary.Files
		return t.IndexSHA256, t.Sums(), nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return st, files
}

// BenchmarkPrompt is `forgectx prompt DIR --index-sha256 HEX`: verify (verify.Open: the
// record files are not held), then render the timeline's blocks as JSON, each record file read
// again and checked against its verified digest.
func BenchmarkPrompt(b *testing.B) {
	each(b, func(b *testing.B, n int) {
		c := tree(b, n)
		var size int64
		measure(b, func(int) {
			snap, rep, err := verify.Open(context.Background(), c.treeDir, verify.Options{IndexSHA256: c.digest})
			if err != nil || snap == nil {
				b.Fatal(err, rep.Violations)
			}
			cw := &countWriter{}
			if err := renderJSON(cw, snap); err != nil {
				b.Fatal(err)
			}
			size = cw.n
		})
		if size < int64(n)*100 {
			b.Fatalf("prompt output of %d bytes for %d records", size, n)
		}
		b.ReportMetric(float64(size)/mib, "out-MB")
	})
}

type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

func renderJSON(w io.Writer, snap *verify.Snapshot) error {
	_, err := prompt.StreamJSON(w, snap, prompt.Options{View: prompt.ViewTimeline})
	return err
}
