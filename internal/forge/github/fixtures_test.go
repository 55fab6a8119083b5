package github_test

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/test/ghscenario"
)

// The committed cassettes under test/fixtures/github/<scenario> are exactly what the scenario
// maker produces (regenerate with -update); a hand edit or a maker change that is not
// regenerated fails here.
func TestFixturesMatchTheScenarioMaker(t *testing.T) {
	names := sortedScenarios()
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			c := build(t, ghscenario.Small()[name]())
			if *update {
				writeFixture(t, name, c)
				return
			}
			tmp := t.TempDir()
			if err := cassette.Write(tmp, c); err != nil {
				t.Fatal(err)
			}
			want := readTree(t, tmp)
			got := readTree(t, filepath.Join(fixturesDir, name))
			if len(got) != len(want) {
				t.Fatalf("fixture has %d files, maker %d (run go test -run TestFixtures -update)", len(got), len(want))
			}
			for p, b := range want {
				if got[p] != b {
					t.Errorf("%s differs from the maker's output (run go test -run TestFixtures -update)", p)
				}
			}
		})
	}
}

func sortedScenarios() []string {
	var names []string
	for n := range ghscenario.Small() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		if rel == "acquisition.golden.json" {
			return err // the replay test's golden file, not part of the cassette
		}
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
