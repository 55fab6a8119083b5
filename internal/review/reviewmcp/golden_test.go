package reviewmcp

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/tools-*.golden.json")

// TestToolDefinitionsGolden pins the advertised tool definitions (names, descriptions, input
// schemas) per mode, as a client receives them from tools/list: the engine-facing contract.
func TestToolDefinitionsGolden(t *testing.T) {
	for _, mode := range []struct {
		name string
		s    *session
	}{
		{"constrained", mustStart(t, constrainedConfig(t, "demo"))},
		{"enriched", mustStart(t, enrichedConfig(t, testStore(t)))},
	} {
		res, err := mode.s.cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.MarshalIndent(res.Tools, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		path := filepath.Join("testdata", "tools-"+mode.name+".golden.json")
		if *update {
			os.MkdirAll("testdata", 0o755)
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s tool definitions changed; review and run with -update:\n%s", mode.name, got)
		}
	}
}
