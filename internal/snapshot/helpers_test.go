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
	"testing"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/test/snapshottest"
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
	snapshottest.Check(t, tree)
	return tree
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
