package snapshot_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/forgectx/forgectx/pkg/acquisition"
	"github.com/forgectx/forgectx/pkg/filter"
	"github.com/forgectx/forgectx/pkg/snapshot"
	"github.com/forgectx/forgectx/pkg/snapshot/schema"
)

// FuzzAssemble feeds arbitrary acquisition documents (untrusted input: --from-acquisition) to
// the reader and the assembler: neither may panic, and every tree that assembles is complete
// (an entity record, the index digest), validates against the project and published bundles
// and passes verify.Dir with its index digest — aborts and errors are fine.
func FuzzAssemble(f *testing.F) {
	for _, name := range scenarios {
		b, err := os.ReadFile(filepath.Join(fixtureDir, name, "acquisition.json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	cfgs := map[string]snapshot.Config{
		acquisition.KindChangeProposal: loadScenario(f, "rejected-records").cfg,
		acquisition.KindWorkItem:       loadScenario(f, "work-item").cfg,
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		acq, err := acquisition.Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		cfg, ok := cfgs[acq.Entity.Kind]
		if !ok {
			cfg = cfgs[acquisition.KindChangeProposal] // an unknown kind must abort
		}
		cfg.Filter = filter.New(nil)
		tree, err := snapshot.Assemble(context.Background(), acq, cfg)
		if err != nil {
			var ab *snapshot.AbortError
			if !errors.As(err, &ab) && !snapshot.IsConfigError(err) && !bytes.Contains([]byte(err.Error()), []byte("acquisition")) {
				t.Fatalf("unexpected error type: %v", err)
			}
			return
		}
		if tree.IndexSHA256 == "" || len(tree.Files) < 8 {
			t.Fatalf("incomplete tree: %d files", len(tree.Files))
		}
		// Property: every tree that assembles passes both schema bundles and the
		// consumer-side verifier with its retained index digest.
		validateBoth(t, tree)
		verifyWritten(t, tree)
	})
}

// FuzzReadProfileAndBots: the profile and bots readers never panic, and an accepted profile
// serialises to a collection.json the project schema accepts.
func FuzzReadProfileAndBots(f *testing.F) {
	for _, name := range scenarios {
		p, err := os.ReadFile(filepath.Join(fixtureDir, name, "profile.json"))
		if err != nil {
			f.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(fixtureDir, name, "bots.json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(p, b)
	}
	bundle, err := schema.Project()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, profile, bots []byte) {
		if p, err := snapshot.ReadProfile(bytes.NewReader(profile)); err == nil {
			coll, _, err := snapshot.CollectionJSON(p, snapshot.CategoryMutation)
			if err != nil {
				t.Fatalf("accepted profile does not serialise: %v", err)
			}
			if err := bundle.Validate(schema.Collection, coll); err != nil {
				t.Fatalf("accepted profile gives an invalid collection.json: %v", err)
			}
		} else if !snapshot.IsConfigError(err) {
			t.Fatalf("profile error is not a ConfigError: %v", err)
		}
		if _, err := snapshot.ReadBots(bytes.NewReader(bots)); err != nil && !snapshot.IsConfigError(err) {
			t.Fatalf("bots error is not a ConfigError: %v", err)
		}
	})
}
