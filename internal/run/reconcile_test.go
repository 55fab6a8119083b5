package run

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/status"
)

// TestReconcileOneDecidesFromTheRunState: a started comment is finalised only when its run is
// known to be over (completed, gone, this job, or no link to ask about), left alone while it
// runs, and left alone — undetermined, never guessed — when the forge cannot say (RunState
// Unknown, or a provider without RunState). A lookup failure is an error.
func TestReconcileOneDecidesFromTheRunState(t *testing.T) {
	const link = "https://ci.example/o/r/-/jobs/5"
	state := func(st forge.RunState, err error) func(context.Context, string, string) (forge.RunState, error) {
		return func(context.Context, string, string) (forge.RunState, error) { return st, err }
	}
	cases := []struct {
		name, link, current string
		runState            func(context.Context, string, string) (forge.RunState, error)
		want                ReconcileResult
		wantErr             bool
	}{
		{name: "completed", link: link, runState: state(forge.RunState{Found: true, Completed: true}, nil), want: ReconcileResult{Started: 1, Finalized: 1}},
		{name: "gone", link: link, runState: state(forge.RunState{}, nil), want: ReconcileResult{Started: 1, Finalized: 1}},
		{name: "running", link: link, runState: state(forge.RunState{Found: true, Status: "running"}, nil), want: ReconcileResult{Started: 1, Running: 1}},
		{name: "unknown", link: link, runState: state(forge.RunState{Unknown: true}, nil), want: ReconcileResult{Started: 1, Undetermined: 1}},
		{name: "no RunState", link: link, want: ReconcileResult{Started: 1, Undetermined: 1}},
		{name: "this job", link: link, current: link, runState: state(forge.RunState{}, errors.New("must not be asked")), want: ReconcileResult{Started: 1, Finalized: 1}},
		{name: "no link", runState: state(forge.RunState{}, errors.New("must not be asked")), want: ReconcileResult{Started: 1, Finalized: 1}},
		{name: "lookup fails", link: link, runState: state(forge.RunState{}, errors.New("HTTP 403")), want: ReconcileResult{Started: 1}, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body, err := status.Render(nil, status.Status{Agent: "triage", State: status.Started, RunURL: tc.link})
			if err != nil {
				t.Fatal(err)
			}
			m := &memCommenter{comments: []forge.Comment{{ID: "7", Body: body}}}
			rc := &reconciler{agent: "triage", current: tc.current, pipe: filter.New(nil),
				conn: &forge.Conn{Commenter: m, RunState: tc.runState}}
			var res ReconcileResult
			err = rc.reconcileOne(context.Background(), zerolog.Nop(), m.comments[0], &res)
			if (err != nil) != tc.wantErr || res != tc.want {
				t.Fatalf("result %+v, err %v; want %+v (error %v)", res, err, tc.want, tc.wantErr)
			}
			finalised := len(m.calls) == 1 && m.calls[0] == "update 7"
			if finalised != (tc.want.Finalized == 1) {
				t.Fatalf("calls %v", m.calls)
			}
			if finalised && !strings.Contains(m.comments[0].Body, ReconcileDetail) {
				t.Errorf("finalised body %q", m.comments[0].Body)
			}
		})
	}
}
