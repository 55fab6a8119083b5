package snapshot_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/forgectx/forgectx/pkg/acquisition"
	"github.com/forgectx/forgectx/pkg/filter"
	"github.com/forgectx/forgectx/pkg/snapshot"
	"github.com/forgectx/forgectx/pkg/snapshot/schema"
	"github.com/forgectx/forgectx/pkg/verify"
)

var update = flag.Bool("update", false, "rewrite the golden snapshot trees under test/golden/snapshot")

const (
	fixtureDir = "../../test/fixtures/acquisition"
	goldenDir  = "../../test/golden/snapshot"
)

// scenario is one fixture directory: acquisition, profile, bots and category.
type scenario struct {
	acq      *acquisition.Acquisition
	cfg      snapshot.Config
	category string
}

func loadScenario(t testing.TB, name string) scenario {
	t.Helper()
	dir := filepath.Join(fixtureDir, name)
	open := func(f string) *os.File {
		fh, err := os.Open(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { fh.Close() })
		return fh
	}
	acq, err := acquisition.Read(open("acquisition.json"))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	prof, err := snapshot.ReadProfile(open("profile.json"))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	bots, err := snapshot.ReadBots(open("bots.json"))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	cat, err := os.ReadFile(filepath.Join(dir, "category"))
	if err != nil {
		t.Fatal(err)
	}
	category := strings.TrimSpace(string(cat))
	return scenario{acq: acq, category: category, cfg: snapshot.Config{Profile: prof, Category: category, Bots: bots, Filter: filter.New(nil)}}
}

// clone deep-copies an acquisition through its interchange form.
func clone(t testing.TB, a *acquisition.Acquisition) *acquisition.Acquisition {
	t.Helper()
	var buf bytes.Buffer
	if err := acquisition.Write(&buf, a); err != nil {
		t.Fatal(err)
	}
	c, err := acquisition.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// assemble builds a tree and validates every emitted JSON document against both bundles, so
// every tree any test builds is checked for interoperability too.
func assemble(t testing.TB, acq *acquisition.Acquisition, cfg snapshot.Config) *snapshot.Tree {
	t.Helper()
	tree, err := snapshot.Assemble(context.Background(), acq, cfg)
	if err != nil {
		t.Fatalf("Assemble: %v", err)
	}
	validateBoth(t, tree)
	verifyWritten(t, tree)
	return tree
}

// verifyWritten writes the tree to a fresh directory and runs the consumer-side verifier
// (pkg/verify, what `forgectx verify` and the host run) with the retained index digest: every
// tree the assembler returns must pass it with zero violations.
func verifyWritten(t testing.TB, tree *snapshot.Tree) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "context")
	if err := tree.WriteDir(dir); err != nil {
		t.Fatalf("WriteDir: %v", err)
	}
	rep, err := verify.Dir(context.Background(), dir, verify.Options{IndexSHA256: tree.IndexSHA256})
	if err != nil {
		t.Fatalf("verify.Dir: %v", err)
	}
	if !rep.OK() {
		for _, v := range rep.Violations {
			t.Errorf("verify: %s", v)
		}
		t.FailNow()
	}
	if rep.IndexSHA256 != tree.IndexSHA256 || rep.Files != len(tree.Files)+1 {
		t.Fatalf("verify read %d files (index %s); the tree has %d (index %s)", rep.Files, rep.IndexSHA256, len(tree.Files)+1, tree.IndexSHA256)
	}
}

func assembleErr(acq *acquisition.Acquisition, cfg snapshot.Config) error {
	_, err := snapshot.Assemble(context.Background(), acq, cfg)
	return err
}

func asAbort(t testing.TB, err error) *snapshot.AbortError {
	t.Helper()
	var ab *snapshot.AbortError
	if !errors.As(err, &ab) {
		t.Fatalf("want *AbortError, got %v", err)
	}
	return ab
}

// index decodes index.json into generic JSON for assertions.
type indexDoc struct {
	Filter  filterDoc `json:"filter"`
	Files   []fileDoc `json:"files"`
	Records []struct {
		Kind         string    `json:"kind"`
		ID           string    `json:"id"`
		RecordKey    string    `json:"record_key"`
		ContentPath  string    `json:"content_path"`
		MetadataPath string    `json:"metadata_path"`
		LogPath      string    `json:"log_path"`
		AuthorID     *string   `json:"author_id"`
		Author       *string   `json:"author"`
		CreatedAt    string    `json:"created_at"`
		Filter       filterDoc `json:"filter"`
	} `json:"records"`
	Gaps []snapshot.Gap `json:"gaps"`
}

type filterDoc struct {
	Status   string           `json:"status"`
	Findings []filter.Finding `json:"findings"`
}

type fileDoc struct {
	Path      string     `json:"path"`
	Role      string     `json:"role"`
	MediaType string     `json:"media_type"`
	Bytes     int        `json:"bytes"`
	SHA256    string     `json:"sha256"`
	Filter    *filterDoc `json:"filter"`
}

func index(t testing.TB, tree *snapshot.Tree) indexDoc {
	t.Helper()
	var d indexDoc
	if err := json.Unmarshal(tree.Index, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func gapCount(d indexDoc, scope, code string) int {
	for _, g := range d.Gaps {
		if g.Scope == scope && g.Code == code {
			return g.Count
		}
	}
	return 0
}

func fileJSON(t testing.TB, tree *snapshot.Tree, path string, v any) {
	t.Helper()
	b, ok := tree.File(path)
	if !ok {
		t.Fatalf("no %s in the tree", path)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

var (
	pubOnce   sync.Once
	pubBundle *schema.Bundle
	pubErr    error
)

func publishedBundle(t testing.TB) *schema.Bundle {
	t.Helper()
	pubOnce.Do(func() { pubBundle, pubErr = schema.Load(os.DirFS("../../test/fixtures/ecs-v1-published")) })
	if pubErr != nil {
		t.Fatal(pubErr)
	}
	return pubBundle
}

// validateBoth checks every JSON document of a tree against the project bundle and the
// published bundle; collection.json differs only by admission (the known difference).
func validateBoth(t testing.TB, tree *snapshot.Tree) {
	t.Helper()
	proj, err := schema.Project()
	if err != nil {
		t.Fatal(err)
	}
	pub := publishedBundle(t)
	all := append([]snapshot.File{{Path: "index.json", Data: tree.Index}}, tree.Files...)
	for _, f := range all {
		name := schema.ForPath(f.Path)
		if name == "" {
			continue
		}
		if err := proj.Validate(name, f.Data); err != nil {
			t.Errorf("%s: project bundle: %v", f.Path, err)
		}
		data := f.Data
		if f.Path == "collection.json" {
			if pub.Validate(name, data) == nil {
				t.Errorf("collection.json with admission validated against the published bundle, which does not allow it")
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			if _, ok := m["admission"].(map[string]any)["human_min_role"]; !ok {
				t.Errorf("collection.json lacks admission.human_min_role")
			}
			delete(m, "admission")
			data, _ = json.Marshal(m)
		}
		if err := pub.Validate(name, data); err != nil {
			t.Errorf("%s: published bundle: %v", f.Path, err)
		}
	}
}
