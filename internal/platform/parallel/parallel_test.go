package parallel

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
)

func TestDoVisitsEveryIndexOnce(t *testing.T) {
	for _, procs := range []int{1, 4} {
		old := runtime.GOMAXPROCS(procs)
		seen := make([]atomic.Int32, 1000)
		Do(len(seen), func(i int) { seen[i].Add(1) })
		runtime.GOMAXPROCS(old)
		for i := range seen {
			if n := seen[i].Load(); n != 1 {
				t.Fatalf("GOMAXPROCS=%d: index %d visited %d times", procs, i, n)
			}
		}
	}
}

func TestEachReturnsTheLowestFailingIndex(t *testing.T) {
	for _, procs := range []int{1, 4} {
		old := runtime.GOMAXPROCS(procs)
		err := Each(500, func(i int) error {
			if i == 137 || i == 400 {
				return fmt.Errorf("index %d", i)
			}
			return nil
		})
		runtime.GOMAXPROCS(old)
		if err == nil || err.Error() != "index 137" {
			t.Fatalf("GOMAXPROCS=%d: got %v, want the error of index 137", procs, err)
		}
	}
	if err := Each(10, func(int) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := Each(0, func(int) error { return errors.New("called") }); err != nil {
		t.Fatal("Each(0) called fn")
	}
}
