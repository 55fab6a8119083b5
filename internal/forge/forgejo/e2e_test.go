package forgejo

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/test/snapshottest"
)

// TestScenariosAssembleIntoValidSnapshots: every replayed Forgejo scenario assembles (for both
// agent categories) into a tree whose JSON documents validate against the project bundle and
// the published v1 bundle (collection.json without its admission member, the bundle's known
// difference), and assembling twice gives the same index digest.
func TestScenariosAssembleIntoValidSnapshots(t *testing.T) {
	for _, s := range scenarios() {
		for _, category := range []string{"observation", "mutation"} {
			t.Run(s.name+"/"+category, func(t *testing.T) {
				a, _ := replayScenario(t, s, nil)
				cfg := snapshot.Config{Profile: s.profile, Category: category, Filter: filter.New(nil)}
				tree, err := snapshot.Assemble(context.Background(), a, cfg)
				if err != nil {
					t.Fatalf("Assemble: %v", err)
				}
				again, _ := replayScenario(t, s, nil)
				tree2, err := snapshot.Assemble(context.Background(), again, cfg)
				if err != nil || tree2.IndexSHA256 != tree.IndexSHA256 {
					t.Fatalf("second assembly differs: %v", err)
				}
				validated := snapshottest.ValidateBundles(t, tree)
				var idx struct {
					Gaps []struct {
						Scope, Code string
						Count       int
					} `json:"gaps"`
				}
				if err := json.Unmarshal(tree.Index, &idx); err != nil {
					t.Fatal(err)
				}
				authGap, runsGap := 0, 0
				for _, g := range idx.Gaps {
					if g.Scope == "comments" && g.Code == "authorization_failed" {
						authGap = g.Count
					}
					if g.Scope == "agent_runs" && g.Code == "authorization_failed" {
						runsGap = g.Count
					}
				}
				// Both receipts are refused: on Forgejo no actor is kind bot, and the assembler
				// admits only receipts by a registered bot (see docs/forgejo.md, "Bots").
				if want := map[string]int{"issue": 2}[s.name]; runsGap != want {
					t.Errorf("agent_runs authorization_failed = %d, want %d (gaps %+v)", runsGap, want, idx.Gaps)
				}
				// issue: Ghost, the Actions pseudo-user and dave (404) are not admitted;
				// release-bot is a write collaborator and, with no positive bot flag, is
				// admitted as a human. pull: carol (read) and dave (404).
				want := map[string]int{"issue": 3, "pull": 2}[s.name]
				if authGap != want {
					t.Errorf("comments authorization_failed = %d, want %d (gaps %+v)", authGap, want, idx.Gaps)
				}
				if validated < 7 {
					t.Errorf("only %d JSON documents validated", validated)
				}
				if s.name == "pull" {
					checks := 0
					for _, f := range tree.Files {
						if strings.HasPrefix(f.Path, "checks/") && strings.HasSuffix(f.Path, "/metadata.json") {
							checks++
						}
					}
					if checks != 12 {
						t.Errorf("check metadata files = %d, want 12", checks)
					}
				}
			})
		}
	}
}

// TestUnauthorizedEntityAuthorAborts: a pull request whose author has only read access cannot
// be staged (the entity body needs an admitted author), whatever the adapter delivered.
func TestUnauthorizedEntityAuthorAborts(t *testing.T) {
	s := pullScenario()
	a, _ := replayScenario(t, s, nil)
	carol := "103" // read
	a.Entity.Author.ID = &carol
	_, err := snapshot.Assemble(context.Background(), a, snapshot.Config{Profile: s.profile, Category: "observation", Filter: filter.New(nil)})
	var ab *snapshot.AbortError
	if !errors.As(err, &ab) || ab.Scope != "entity" {
		t.Fatalf("err = %v, want an entity abort", err)
	}
}
