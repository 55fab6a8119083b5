package run

import (
	"context"
	"testing"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/run/harness"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/demo"
)

// forgectx run hands its acquisition over to the assembler and never reads it again, so it
// assembles with ReleaseBodies: every staged comment and review body is gone from
// the acquisition once the tree is built, and the tree is the one a body-keeping assembly
// gives.
func TestRunAssemblyReleasesBodies(t *testing.T) {
	acq, prof, bots, err := demo.Inputs()
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{c: &config{profile: prof, h: &harness.Harness{Agent: harness.Agent{Category: demo.Category}, Bots: bots}}, pipe: filter.New(nil)}
	cfg := r.assembleConfig()
	if !cfg.ReleaseBodies {
		t.Fatal("forgectx run assembles without ReleaseBodies")
	}
	released, err := snapshot.Assemble(context.Background(), acq, cfg)
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, c := range acq.Comments {
		if c.Body != "" {
			kept++
		}
	}
	for _, rv := range acq.Reviews {
		if rv.Body != "" {
			kept++
		}
	}
	// The demo's read-only user's comment is not admitted, so it is never filtered and keeps
	// its body; every staged one must be gone.
	staged := 0
	for _, s := range released.Summary.Sources {
		if s.Source == "comments" || s.Source == "reviews" {
			staged += s.Records
		}
	}
	if staged == 0 {
		t.Fatal("the demo staged no comment or review: the test would prove nothing")
	}
	total := len(acq.Comments) + len(acq.Reviews)
	if kept > total-staged {
		t.Fatalf("%d bodies still held after assembly; at most %d (the records not staged) may be", kept, total-staged)
	}
	fresh, _, _, err := demo.Inputs()
	if err != nil {
		t.Fatal(err)
	}
	cfg.ReleaseBodies = false
	whole, err := snapshot.Assemble(context.Background(), fresh, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if whole.IndexSHA256 != released.IndexSHA256 {
		t.Fatal("releasing bodies changed the tree")
	}
}
