package gitlab

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/test/httpfake"
	"github.com/forgectx/forgectx/test/snapshottest"
)

func assemble(t *testing.T, a *acquisition.Acquisition, p acquisition.Profile, category string) *snapshot.Tree {
	t.Helper()
	tree, err := snapshot.Assemble(context.Background(), a, snapshot.Config{
		Profile: p, Category: category, Filter: filter.New(nil),
		Bots: []snapshot.BotIdentity{{ID: "104", Login: "project_42_bot_3cca1d029554e372cf8f39df76bf507d", BotRole: "ci"}},
	})
	if err != nil {
		t.Fatalf("Assemble: %v", err)
	}
	return tree
}

func gapOf(tree *snapshot.Tree, scope, code string) int {
	for _, g := range tree.Summary.Gaps {
		if g.Scope == scope && g.Code == code {
			return g.Count
		}
	}
	return 0
}

// TestGitLabScenariosAssembleIntoValidSnapshots: the replayed merge-request scenario and the
// issue scenario assemble, validate against both schema bundles, and carry the GitLab gaps.
func TestGitLabScenariosAssembleIntoValidSnapshots(t *testing.T) {
	t.Run("merge request replayed from the cassette", func(t *testing.T) {
		c, err := cassette.Load(filepath.Join(fixtureDir(t), "cassettes", "mr"))
		if err != nil {
			t.Fatal(err)
		}
		rp, err := cassette.NewReplayer(c)
		if err != nil {
			t.Fatal(err)
		}
		cl, err := New(Options{APIURL: "https://gitlab.example.com:8443/api/v4", HTTPClient: &http.Client{Transport: rp}, Log: zerolog.Nop()})
		if err != nil {
			t.Fatal(err)
		}
		a := acquireMR(t, cl)
		tree := assemble(t, a, profileMR(), "observation")
		snapshottest.Check(t, tree)
		if gapOf(tree, "reviews", "history_unavailable") != 1 {
			t.Errorf("reviews history_unavailable missing: %+v", tree.Summary.Gaps)
		}
		if gapOf(tree, "checks", "invalid_metadata") < 3 || gapOf(tree, "check_logs", "source_too_large") != 1 {
			t.Errorf("check gaps: %+v", tree.Summary.Gaps)
		}
		var actors struct {
			Actors []map[string]any `json:"actors"`
		}
		raw, _ := tree.File("state/actors.json")
		if err := json.Unmarshal(raw, &actors); err != nil {
			t.Fatal(err)
		}
		roles := map[string]any{}
		for _, ac := range actors.Actors {
			roles[ac["id"].(string)] = ac["role"]
		}
		if roles["104"] != "bot" || roles["102"] != "maintain" || roles["103"] != nil {
			t.Errorf("actor roles %v", roles)
		}
	})
	t.Run("issue", func(t *testing.T) {
		f := httpfake.New(t)
		expectIssueScenario(t, f)
		a, err := testClient(t, f).Acquire(context.Background(), forge.Ref{Repo: "42", Number: 3}, profileIssue())
		if err != nil {
			t.Fatal(err)
		}
		a.Source.Host = "gitlab.example.com:8443"
		tree := assemble(t, a, profileIssue(), "observation")
		snapshottest.Check(t, tree)
		// The issue author is a Reporter (triage): enough for an observation agent, not for a
		// mutation agent, where the entity body is unauthorized and assembly aborts.
		_, err = snapshot.Assemble(context.Background(), a, snapshot.Config{Profile: profileIssue(), Category: "mutation", Filter: filter.New(nil)})
		var ab *snapshot.AbortError
		if !errors.As(err, &ab) || ab.Scope != "entity" || ab.Code != "authorization_failed" {
			t.Errorf("mutation agent on a Reporter's issue: err = %v, want entity authorization_failed abort", err)
		}
	})
}
