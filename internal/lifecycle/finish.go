package lifecycle

import (
	"context"
	"time"
)

// FinishStep is one named finishing step: the status comment, the receipt, the failure note,
// cleanup, the job summary. Run is given the lifecycle's current outcome and returns it,
// changed when the step decides the lifecycle ended otherwise (forgectx run: a success whose
// receipt could not be posted is a failure).
type FinishStep[O comparable] struct {
	Name string
	Run  func(ctx context.Context, out O) O
	// Again makes the step run once more, with the new outcome, when a later step changes the
	// outcome: what it already published (the status comment) would otherwise state an outcome
	// the lifecycle no longer has.
	Again bool
}

// Finish is the finishing part of a lifecycle, the steps that run on every path once the
// phases ended (by success, failure, skip, signal or time-out). Each step runs under Protect,
// so a panic in one is reported by its name and the next still runs, and all run in one
// context detached from the lifecycle's cancellation: a cancelled or timed-out run still posts
// its failure and its receipt. The detached context is bounded by Budget, so a forge that
// hangs cannot hold the job past it; steps that do not take the context (cleanup) are not cut
// short by the budget.
type Finish[O comparable] struct {
	Steps []FinishStep[O]
	// Budget (required) is how long the steps' context lasts, chosen from the outcome the phases ended
	// with (forgectx run gives a cancellation less time than a success: the CI system kills
	// the job soon after cancelling it). A budget that is not positive gives an already
	// expired context: nothing that needs the forge succeeds.
	Budget func(out O) time.Duration
	// Report receives a step's panic (Protect); it must not print the panic value.
	Report func(step string, p any)
}

// Run runs the steps in order from the outcome out and returns the final outcome. When a step
// returns an outcome other than the one it was given, every earlier step marked Again runs
// once more, in order, with the new outcome, before the next step; a step that panics leaves
// the outcome as it was. A change made by a step run again does not cause another round.
func (f Finish[O]) Run(parent context.Context, out O) O {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(parent), f.Budget(out))
	defer cancel()
	step := func(s FinishStep[O]) {
		Protect(s.Name, func() { out = s.Run(ctx, out) }, f.Report)
	}
	for i, s := range f.Steps {
		before := out
		step(s)
		if out == before {
			continue
		}
		for _, prev := range f.Steps[:i] {
			if prev.Again {
				step(prev)
			}
		}
	}
	return out
}
