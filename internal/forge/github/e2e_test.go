package github_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/test/ghscenario"
	"github.com/forgectx/forgectx/test/snapshottest"
)

// Every replayed scenario (the committed ones and the generated large one) assembles, for
// both agent categories, into a tree whose JSON documents validate against the project and the
// published v1 bundles (collection.json without admission, the bundles' known difference) and
// that `forgectx verify` accepts against the retained index digest.
func TestReplayedScenariosAssembleIntoVerifiedSnapshots(t *testing.T) {
	type sc struct {
		name string
		s    *ghscenario.Scenario
	}
	var all []sc
	for _, n := range sortedScenarios() {
		all = append(all, sc{n, ghscenario.Small()[n]()})
	}
	all = append(all, sc{"large", ghscenario.Large()})
	bots := []snapshot.BotIdentity{{ID: ghscenario.Actions.NodeID, BotRole: "ci"}, {ID: ghscenario.Renovate.NodeID, BotRole: "dependency-bot"}}
	// The author (dave) is triage: below the mutation threshold, so the required entity
	// body is not admitted and assembly aborts, as the spec requires.
	aborts := map[string]bool{"issue/mutation": true}
	for _, x := range all {
		var c = build(t, x.s)
		if x.name != "large" {
			c = loadFixture(t, x.name)
		}
		for _, category := range []string{"observation", "mutation"} {
			t.Run(x.name+"/"+category, func(t *testing.T) {
				a, _, _ := acquireReplay(t, x.s, c)
				cfg := snapshot.Config{Profile: testProfile(kindOf(x.s)), Category: category, Bots: bots, Filter: filter.New(nil)}
				tree, err := snapshot.Assemble(context.Background(), a, cfg)
				if aborts[x.name+"/"+category] {
					var ab *snapshot.AbortError
					if !errors.As(err, &ab) || ab.Scope != "entity" || ab.Code != acquisition.GapAuthorizationFailed {
						t.Fatalf("Assemble = %v, want an entity authorization_failed abort", err)
					}
					return
				}
				if err != nil {
					t.Fatalf("Assemble: %v", err)
				}
				snapshottest.Check(t, tree)
				if x.name == "pr" && category == "observation" {
					// The acquisition's optional-scope gaps reach the index.
					var idx struct {
						Gaps []struct{ Scope, Code string } `json:"gaps"`
					}
					if err := json.Unmarshal(tree.Index, &idx); err != nil {
						t.Fatal(err)
					}
					found := false
					for _, g := range idx.Gaps {
						found = found || (g.Scope == acquisition.ScopeChecks && g.Code == acquisition.GapInvalidMetadata)
					}
					if !found {
						t.Errorf("checks invalid_metadata gap missing from index: %+v", idx.Gaps)
					}
				}
			})
		}
	}
}
