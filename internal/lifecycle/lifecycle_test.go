package lifecycle

import (
	"context"
	"io"
	"reflect"
	"syscall"
	"testing"
	"time"

	"github.com/forgectx/forgectx/pkg/prescript"
)

func TestDefaults(t *testing.T) {
	var c Common
	c.Defaults()
	if c.Environ == nil || c.Now == nil || c.KillGrace != prescript.DefaultKillGrace || c.Stdout != io.Discard || c.Stderr != io.Discard {
		t.Fatalf("defaults not applied: %+v", c)
	}
	now := func() time.Time { return time.Unix(1, 0) }
	set := Common{Now: now, KillGrace: time.Second}
	set.Defaults()
	if set.Now().Unix() != 1 || set.KillGrace != time.Second {
		t.Fatalf("a set field was overwritten: %+v", set)
	}
}

func TestSequenceRunsInOrderAndStops(t *testing.T) {
	var trace []string
	ph := func(name string, done bool) Phase[string] {
		return Phase[string]{Name: name, Run: func(context.Context) (string, bool) {
			trace = append(trace, "run:"+name)
			return name, done
		}}
	}
	s := Sequence[string]{
		Phases: []Phase[string]{ph("a", false), ph("b", true), ph("c", false)},
		Before: func(_ context.Context, name string) (string, bool) {
			trace = append(trace, "before:"+name)
			return "", false
		},
		After: func(name string, done bool) { trace = append(trace, "after:"+name) },
	}
	out, done := s.Run(context.Background())
	if out != "b" || !done {
		t.Fatalf("outcome %q done=%v, want b true", out, done)
	}
	want := []string{"before:a", "run:a", "after:a", "before:b", "run:b", "after:b"}
	if !reflect.DeepEqual(trace, want) {
		t.Fatalf("trace %v, want %v", trace, want)
	}
	// Before ends the lifecycle before the phase runs.
	trace = nil
	s.Before = func(_ context.Context, name string) (string, bool) { return "stopped", name == "b" }
	if out, done := s.Run(context.Background()); out != "stopped" || !done {
		t.Fatalf("outcome %q done=%v, want stopped true", out, done)
	}
	if !reflect.DeepEqual(trace, []string{"run:a", "after:a"}) {
		t.Fatalf("trace %v", trace)
	}
	// Every phase ran: the zero outcome, not done.
	trace = nil
	s = Sequence[string]{Phases: []Phase[string]{ph("a", false), ph("c", false)}}
	if out, done := s.Run(context.Background()); out != "" || done {
		t.Fatalf("outcome %q done=%v, want \"\" false", out, done)
	}
}

func TestSequenceRecover(t *testing.T) {
	boom := func(context.Context) (string, bool) { panic("content") }
	ok := func(context.Context) (string, bool) { return "", false }
	s := Sequence[string]{
		Phases:  []Phase[string]{{Name: "a", Run: ok}, {Name: "b", Run: boom}, {Name: "c", Run: ok}},
		Recover: func(name string, p any) string { return "failed in " + name },
	}
	if out, done := s.Run(context.Background()); out != "failed in b" || !done {
		t.Fatalf("outcome %q done=%v, want the panicking phase's outcome", out, done)
	}
	// A panic in Before is the phase's too.
	s.Phases = []Phase[string]{{Name: "a", Run: ok}, {Name: "b", Run: ok}}
	s.Before = func(_ context.Context, name string) (string, bool) {
		if name == "b" {
			panic("hook")
		}
		return "", false
	}
	if out, done := s.Run(context.Background()); out != "failed in b" || !done {
		t.Fatalf("outcome %q done=%v, want the panic in b's Before recovered", out, done)
	}
	// Without Recover a panic propagates.
	s.Recover = nil
	defer func() {
		if recover() == nil {
			t.Fatal("a panic was swallowed without Recover")
		}
	}()
	s.Run(context.Background())
}

func TestProtectRecovers(t *testing.T) {
	var got string
	after := false
	Protect("receipt", func() { panic("x") }, func(step string, p any) { got = step })
	after = true
	if got != "receipt" || !after {
		t.Fatalf("panic not reported for its step: %q", got)
	}
	Protect("status", func() {}, func(string, any) { t.Fatal("report called without a panic") })
}

func TestCleanupsReverseOnce(t *testing.T) {
	var c Cleanups
	var order []int
	for i := 1; i <= 3; i++ {
		c.Add(func() { order = append(order, i) })
	}
	c.Run()
	c.Run()
	c.Add(func() { order = append(order, 9) })
	c.Run()
	if !reflect.DeepEqual(order, []int{3, 2, 1}) {
		t.Fatalf("order %v, want [3 2 1] once", order)
	}
}

func TestWatchSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		ctx, g := WatchSignals(context.Background())
		if g.Signal() != nil {
			t.Fatal("signal before any was sent")
		}
		if err := syscall.Kill(syscall.Getpid(), sig); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
			t.Fatalf("%v did not cancel the guarded context", sig)
		}
		if g.Signal() != sig {
			t.Fatalf("signal %v, want %v", g.Signal(), sig)
		}
		g.Stop()
		g.Stop()
	}
	// The parent's cancellation ends the guarded context too, with no signal recorded.
	parent, cancel := context.WithCancel(context.Background())
	ctx, g := WatchSignals(parent)
	defer g.Stop()
	cancel()
	<-ctx.Done()
	if g.Signal() != nil {
		t.Fatalf("signal %v without one sent", g.Signal())
	}
	var none *SignalGuard
	if none.Signal() != nil {
		t.Fatal("nil guard reports a signal")
	}
	none.Stop()
}
