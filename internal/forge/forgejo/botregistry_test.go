package forgejo

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/snapshot"
)

// TestOperatorRegistryAttestsForgejoBots: Forgejo exposes no positive bot flag, so for Forgejo
// the operator's registry is the bot attestation. A registered ID (with its login) becomes
// kind bot, role bot, role_verified false, and its receipts are admitted; a registry entry whose
// login does not match attests nothing and the actor stays a human.
func TestOperatorRegistryAttestsForgejoBots(t *testing.T) {
	s := issueScenario()
	cases := []struct {
		name     string
		bots     []snapshot.BotIdentity
		wantKind string
		wantRuns int // agent_runs authorization_failed
	}{
		// bob's forged receipt (9007) stays refused; release-bot's (9006) is admitted.
		{"registered", []snapshot.BotIdentity{{ID: "150", Login: "release-bot", BotRole: "release"}}, "bot", 1},
		{"registered by id only", []snapshot.BotIdentity{{ID: "150", BotRole: "release"}}, "bot", 1},
		{"login mismatch", []snapshot.BotIdentity{{ID: "150", Login: "renamed-bot", BotRole: "release"}}, "human", 2},
		{"no registry", nil, "human", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, _ := replayScenario(t, s, nil)
			tree, err := snapshot.Assemble(context.Background(), a, snapshot.Config{Profile: s.profile, Category: "observation", Bots: c.bots, Filter: filter.New(nil)})
			if err != nil {
				t.Fatal(err)
			}
			var actors struct {
				Actors []struct {
					ID           string  `json:"id"`
					Kind         string  `json:"kind"`
					Role         *string `json:"role"`
					RoleVerified bool    `json:"role_verified"`
				} `json:"actors"`
			}
			var idx struct {
				Gaps []struct {
					Scope, Code string
					Count       int
				} `json:"gaps"`
			}
			for _, f := range tree.Files {
				if f.Path == "state/actors.json" {
					if err := json.Unmarshal(f.Data, &actors); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := json.Unmarshal(tree.Index, &idx); err != nil {
				t.Fatal(err)
			}
			found := false
			for _, ac := range actors.Actors {
				if ac.ID != "150" {
					continue
				}
				found = true
				if ac.Kind != c.wantKind {
					t.Errorf("kind = %s, want %s", ac.Kind, c.wantKind)
				}
				if c.wantKind == "bot" && (ac.Role == nil || *ac.Role != "bot" || ac.RoleVerified) {
					t.Errorf("bot row = %+v, want role bot, role_verified false", ac)
				}
			}
			if !found {
				t.Fatal("actor 150 has no state row")
			}
			runs := 0
			for _, g := range idx.Gaps {
				if g.Scope == "agent_runs" && g.Code == "authorization_failed" {
					runs = g.Count
				}
			}
			if runs != c.wantRuns {
				t.Errorf("agent_runs authorization_failed = %d, want %d", runs, c.wantRuns)
			}
		})
	}
}
