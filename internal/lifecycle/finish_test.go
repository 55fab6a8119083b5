package lifecycle

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"
)

// trace records the finishing steps as they run, with the outcome each was given.
type trace []string

func (tr *trace) step(name string, again bool, change func(string) string) FinishStep[string] {
	return FinishStep[string]{Name: name, Again: again, Run: func(_ context.Context, out string) string {
		*tr = append(*tr, name+":"+out)
		if change != nil {
			return change(out)
		}
		return out
	}}
}

func noPanic(t *testing.T) func(string, any) {
	return func(step string, _ any) { t.Fatalf("unexpected panic in %s", step) }
}

func long(string) time.Duration { return time.Minute }

func TestFinishRunsStepsInOrder(t *testing.T) {
	var tr trace
	f := Finish[string]{Budget: long, Report: noPanic(t), Steps: []FinishStep[string]{
		tr.step("status", false, nil), tr.step("receipt", false, nil), tr.step("cleanup", false, nil),
	}}
	if out := f.Run(context.Background(), "success"); out != "success" {
		t.Fatalf("outcome %q, want success", out)
	}
	if want := (trace{"status:success", "receipt:success", "cleanup:success"}); !reflect.DeepEqual(tr, want) {
		t.Fatalf("steps %v, want %v", tr, want)
	}
}

// A panicking step is reported by its name, leaves the outcome as it was, and the later steps
// still run.
func TestFinishProtectsEachStep(t *testing.T) {
	var tr trace
	var reported []string
	f := Finish[string]{Budget: long, Report: func(step string, _ any) { reported = append(reported, step) }, Steps: []FinishStep[string]{
		tr.step("status", false, nil),
		{Name: "receipt", Run: func(context.Context, string) string { panic("body text") }},
		tr.step("cleanup", false, nil),
	}}
	if out := f.Run(context.Background(), "success"); out != "success" {
		t.Fatalf("outcome %q after a panicking step, want it unchanged", out)
	}
	if !reflect.DeepEqual(reported, []string{"receipt"}) || !reflect.DeepEqual(tr, trace{"status:success", "cleanup:success"}) {
		t.Fatalf("reported %v, steps %v", reported, tr)
	}
}

// The steps' context is detached from the lifecycle's cancellation: a cancelled run still
// posts. It keeps the parent's values.
func TestFinishDetachesFromCancellation(t *testing.T) {
	type key struct{}
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	cancel()
	var err error
	var val any
	f := Finish[string]{Budget: long, Report: noPanic(t), Steps: []FinishStep[string]{{Name: "status", Run: func(ctx context.Context, out string) string {
		err, val = ctx.Err(), ctx.Value(key{})
		return out
	}}}}
	f.Run(parent, "cancelled")
	if err != nil || val != "v" {
		t.Fatalf("step context: err %v, value %v; want live and carrying the parent's values", err, val)
	}
}

// The steps' context ends after the budget chosen from the outcome the steps start with: a
// step blocked on a forge that never answers returns, and the later steps still run.
func TestFinishHonoursTheBudget(t *testing.T) {
	var asked []string
	budget := func(out string) time.Duration {
		asked = append(asked, out)
		if out == "cancelled" {
			return 50 * time.Millisecond
		}
		return time.Hour
	}
	var tr trace
	var deadline time.Duration
	f := Finish[string]{Budget: budget, Report: noPanic(t), Steps: []FinishStep[string]{
		{Name: "status", Run: func(ctx context.Context, out string) string {
			d, _ := ctx.Deadline()
			deadline = time.Until(d)
			select { // a hung forge
			case <-ctx.Done():
			case <-time.After(5 * time.Second):
				t.Error("the step's context outlived its budget")
			}
			if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				t.Errorf("step context ended with %v, want its deadline", ctx.Err())
			}
			return out
		}},
		tr.step("cleanup", false, nil),
	}}
	start := time.Now()
	f.Run(context.Background(), "cancelled")
	if took := time.Since(start); took > 5*time.Second || deadline > 50*time.Millisecond {
		t.Fatalf("finishing took %s with a deadline %s away; want the 50ms budget", took, deadline)
	}
	if !reflect.DeepEqual(asked, []string{"cancelled"}) || !reflect.DeepEqual(tr, trace{"cleanup:cancelled"}) {
		t.Fatalf("budget asked for %v, later steps %v", asked, tr)
	}
}

// A step that changes the outcome makes every earlier step marked Again run once more with the
// new outcome, before the next step; unmarked steps do not run again, and a change made
// during the re-run does not start another round.
func TestFinishRerunsOnChangedOutcome(t *testing.T) {
	var tr trace
	fail := func(string) string { return "failure" }
	f := Finish[string]{Budget: long, Report: noPanic(t), Steps: []FinishStep[string]{
		tr.step("cleanup", false, nil),
		tr.step("status", true, func(out string) string {
			if out == "failure" {
				return "changed-again"
			}
			return out
		}),
		tr.step("receipt", false, nil),
		tr.step("required", false, fail),
		tr.step("summary", false, nil),
	}}
	out := f.Run(context.Background(), "success")
	want := trace{"cleanup:success", "status:success", "receipt:success", "required:success", "status:failure", "summary:changed-again"}
	if !reflect.DeepEqual(tr, want) {
		t.Fatalf("steps %v, want %v", tr, want)
	}
	if out != "changed-again" {
		t.Fatalf("outcome %q", out)
	}
	// No change, no re-run.
	tr = nil
	f.Steps = []FinishStep[string]{tr.step("status", true, nil), tr.step("receipt", false, nil), tr.step("required", false, nil)}
	f.Run(context.Background(), "success")
	if len(tr) != 3 {
		t.Fatalf("steps %v, want each once", tr)
	}
}
