package httpfake_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/forgectx/forgectx/test/httpfake"
)

// MaxInFlight counts the requests being answered at once; Jitter answers concurrent requests
// in another order than they arrived; Latency delays every answer; ResetMaxInFlight starts a
// new count.
func TestInFlightJitterLatency(t *testing.T) {
	f := httpfake.New(t)
	f.Jitter(40*time.Millisecond, 7)
	f.Latency(5 * time.Millisecond)
	const n = 6
	for i := range n {
		f.Expect("GET", "/item?i="+string(rune('a'+i)), httpfake.JSON(200, "{}"))
	}
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * time.Millisecond) // arrive in index order
			resp, err := http.Get(f.URL + "/item?i=" + string(rune('a'+i)))
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if time.Since(start) < 5*time.Millisecond {
		t.Error("the latency was not waited")
	}
	if m := f.MaxInFlight(); m < 2 || m > n {
		t.Errorf("max in flight %d, want 2..%d", m, n)
	}
	sorted := true
	for i := range order {
		sorted = sorted && order[i] == i
	}
	if sorted {
		t.Errorf("answers completed in arrival order %v: the jitter shuffled nothing", order)
	}
	f.ResetMaxInFlight()
	f.Expect("GET", "/one", httpfake.JSON(200, "{}"))
	resp, err := http.Get(f.URL + "/one")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if m := f.MaxInFlight(); m != 1 {
		t.Errorf("after a reset one request gives max in flight %d", m)
	}
}
