package gitlab

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/test/glcorpus"
)

// BenchmarkMapDiscussions decodes and maps 1000 generated discussions (one large MR).
func BenchmarkMapDiscussions(b *testing.B) {
	data := glcorpus.Discussions(1, 1000)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		var ds []*gl.Discussion
		if err := json.Unmarshal(data, &ds); err != nil {
			b.Fatal(err)
		}
		mapDiscussions(ds)
	}
}

// BenchmarkMapJobs decodes and maps 1000 generated jobs across every status.
func BenchmarkMapJobs(b *testing.B) {
	data := glcorpus.Jobs(1, 1000)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		var jobs []*gl.Job
		if err := json.Unmarshal(data, &jobs); err != nil {
			b.Fatal(err)
		}
		for _, j := range jobs {
			_, _ = mapJob(j, glcorpus.HeadSHA, glcorpus.HeadSHA)
		}
	}
}

// BenchmarkAcquireReplay runs the whole merge-request scenario from the recorded cassette.
func BenchmarkAcquireReplay(b *testing.B) {
	c, err := cassette.Load(filepath.Join(fixtureDir(b), "cassettes", "mr"))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		rp, err := cassette.NewReplayer(c)
		if err != nil {
			b.Fatal(err)
		}
		cl, err := New(Options{APIURL: "https://gitlab.example.com:8443/api/v4", HTTPClient: &http.Client{Transport: rp},
			Log: zerolog.Nop(), RetryWaitMin: time.Millisecond})
		if err != nil {
			b.Fatal(err)
		}
		acquireMR(b, cl)
	}
}

// TestGitLabCorpusMapsCleanly keeps the benchmark corpus honest: every generated job maps
// (the generator follows the timestamp rules) and every non-system note becomes a comment.
func TestGitLabCorpusMapsCleanly(t *testing.T) {
	var jobs []*gl.Job
	if err := json.Unmarshal(glcorpus.Jobs(3, 500), &jobs); err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		c, err := mapJob(j, glcorpus.HeadSHA, glcorpus.HeadSHA)
		if err != nil {
			t.Fatalf("job %d (%s): %v", j.ID, j.Status, err)
		}
		checkInvariants(t, c)
	}
	var ds []*gl.Discussion
	if err := json.Unmarshal(glcorpus.Discussions(3, 300), &ds); err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, d := range ds {
		for _, n := range d.Notes {
			if !n.System {
				want++
			}
		}
	}
	cs, _, out := mapDiscussions(ds)
	if len(cs) != want || len(out.Comments) != 0 {
		t.Errorf("comments %d, want %d; outcome %+v", len(cs), want, out)
	}
}
