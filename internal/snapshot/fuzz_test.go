package snapshot_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/internal/snapshot/schema"
	"github.com/forgectx/forgectx/test/snapshottest"
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
	// Every hostile case is a seed too, so the seed run (plain `go test`) already proves the
	// property for each of them.
	base := loadScenario(f, "change-proposal").acq
	for _, hc := range hostileCases {
		a := clone(f, base)
		hc.mutate(a)
		var buf bytes.Buffer
		if err := acquisition.Write(&buf, a); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	// The configuration of the scenario with the same forge and entity kind (its bot
	// registry names that forge's bots), else any of the same kind.
	cfgs := map[string]snapshot.Config{}
	for _, name := range scenarios {
		sc := loadScenario(f, name)
		for _, k := range []string{sc.acq.Source.Forge + "/" + sc.acq.Entity.Kind, sc.acq.Entity.Kind} {
			if _, ok := cfgs[k]; !ok {
				cfgs[k] = sc.cfg
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		acq, err := acquisition.Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		cfg, ok := cfgs[acq.Source.Forge+"/"+acq.Entity.Kind]
		if !ok {
			if cfg, ok = cfgs[acq.Entity.Kind]; !ok {
				cfg = cfgs[acquisition.KindChangeProposal] // an unknown kind must abort
			}
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
		snapshottest.Check(t, tree)
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
