package gitlab

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/test/httpfake"
)

// TestPoolLatencyFigures measures the fault matrix's merge request (discussions, pipelines and
// jobs at 2 a page) against a forge 20 ms away, at concurrency 1 and 4 through a pool:
// requests, wall and the pool's longest chain, logged (FORGECTX_LATENCY_FIGURES=1, -v;
// docs/request-pool.md). It asserts the same records and gaps at both.
func TestPoolLatencyFigures(t *testing.T) {
	if os.Getenv("FORGECTX_LATENCY_FIGURES") == "" {
		t.Skip("set FORGECTX_LATENCY_FIGURES=1 to measure")
	}
	const delay = 20 * time.Millisecond
	var want []byte
	for _, conc := range []int{1, 4} {
		f := httpfake.NewFaults(t, httpfake.GitLabPaging)
		f.Now = glTicking()
		world := glMatrixWorld().serve(t, f)
		slow := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			time.Sleep(delay)
			resp, err := http.Get(world + r.URL.RequestURI())
			if err != nil {
				rw.WriteHeader(http.StatusBadGateway)
				return
			}
			defer resp.Body.Close()
			for k, vs := range resp.Header {
				rw.Header()[k] = vs
			}
			rw.WriteHeader(resp.StatusCode)
			_, _ = io.Copy(rw, resp.Body)
		}))
		t.Cleanup(slow.Close)
		pool := forge.NewPool(conc, zerolog.Nop())
		c, err := New(Options{APIURL: slow.URL + "/api/v4", Token: testToken, Log: zerolog.Nop(), Concurrency: conc,
			Limiter: pool.RetryLimiter(), HTTPClient: &http.Client{Transport: pool.Wrap(nil), Timeout: time.Minute}})
		if err != nil {
			t.Fatal(err)
		}
		c.pageSize = glLimit
		a, err := c.Acquire(context.Background(), forge.Ref{Repo: "42", Number: 7}, glMatrixProfile(listMRDiscussions))
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal([]any{glRecordsOf(a), glGapSet(a.Outcomes)})
		if err != nil {
			t.Fatal(err)
		}
		if want == nil {
			want = got
		} else if !reflect.DeepEqual(got, want) {
			t.Errorf("concurrency %d: another acquisition than at 1", conc)
		}
		tm := pool.Timing()
		d := float64(delay.Milliseconds())
		t.Logf("gitlab/matrix concurrency %d: %4d requests, wall %6d ms, max in flight %d, longest chain %4d, wall/(requests×delay) %.2f, wall/(chain×delay) %.2f",
			conc, tm.Requests, tm.WallMS, tm.MaxInFlight, tm.LongestChain,
			float64(tm.WallMS)/(float64(tm.Requests)*d), float64(tm.WallMS)/(float64(tm.LongestChain)*d))
	}
}
