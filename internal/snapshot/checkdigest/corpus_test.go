package checkdigest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/filter"
)

// corpusDir holds the labelled CI logs: NAME.log, as a forge serves it, and NAME.want.json.
const corpusDir = "../../../test/fixtures/ci-logs"

// want is a log's label: the substrings of its key error lines, its category, its format and
// (when the log names one) the failing step.
type want struct {
	Category Category `json:"category"`
	Format   string   `json:"format"`
	Key      []string `json:"key"`
	Step     string   `json:"step,omitempty"`
}

type labelled struct {
	name string
	log  []byte // as the forge served it
	want want
}

// The goals the corpus must meet (docs/check-digest.md, "Measures").
const (
	goalRecall   = 0.95
	goalAccuracy = 0.90
)

// planted are the secrets and invisible characters the corpus plants; the snapshot's filter
// must remove every one before the digest sees the log.
var planted = []string{"ghp_", "glpat-", "AKIA", "wJalrXUtnFEMI", "\u202e", "\u200b", "\u2066", "\x1b", "\r"}

func loadCorpus(t testing.TB) []labelled {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(corpusDir, "*.log"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no corpus under %s: %v", corpusDir, err)
	}
	var out []labelled
	for _, p := range logs {
		name := strings.TrimSuffix(filepath.Base(p), ".log")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		wb, err := os.ReadFile(strings.TrimSuffix(p, ".log") + ".want.json")
		if err != nil {
			t.Fatalf("%s: no label: %v", name, err)
		}
		var w want
		if err := json.Unmarshal(wb, &w); err != nil || len(w.Key) == 0 || w.Category == "" || w.Format == "" {
			t.Fatalf("%s: label needs category, format and key lines (%v)", name, err)
		}
		out = append(out, labelled{name, b, w})
	}
	return append(out, generated()...)
}

// generated are the corpus's huge logs, built here rather than committed: a GitHub job whose
// one failure follows 30,000 passing lines, and a GitLab job with 4,000 failing tests.
func generated() []labelled {
	var gh strings.Builder
	gh.WriteString("2026-09-03T14:00:00.0000000Z ##[group]Run go test -v ./...\n2026-09-03T14:00:00.0000001Z ##[endgroup]\n")
	for i := range 30000 {
		fmt.Fprintf(&gh, "2026-09-03T14:%02d:%02d.%07dZ === RUN   TestGenerated%05d\n", i/3600%60, i/60%60, i, i)
	}
	gh.WriteString("2026-09-03T14:59:00.0000000Z --- FAIL: TestLastOne (0.01s)\n2026-09-03T14:59:00.0000001Z     last_test.go:9: boom\n2026-09-03T14:59:00.0000002Z FAIL\texample.com/widgets/internal/last\t12.000s\n2026-09-03T14:59:01.0000000Z ##[error]Process completed with exit code 1.\n")
	var gl strings.Builder
	gl.WriteString("Running with gitlab-runner 17.5.2 (c6eae8b0)\nsection_start:1764900000:step_script\nExecuting \"step_script\" stage of the job script\n$ pytest\n")
	for i := range 4000 {
		fmt.Fprintf(&gl, "FAILED tests/test_gen.py::test_case_%04d - assert %d == 0\n", i, i+1)
	}
	gl.WriteString("===================== 4000 failed in 81.20s =====================\nsection_end:1764900090:step_script\nERROR: Job failed: exit code 1\n")
	return []labelled{
		{"generated-gha-huge", []byte(gh.String()), want{Category: catTest, Format: formatGitHub, Key: []string{"--- FAIL: TestLastOne", "last_test.go:9: boom"}, Step: "go test -v ./..."}},
		{"generated-gitlab-many-failures", []byte(gl.String()), want{Category: catTest, Format: formatGitLab, Key: []string{"FAILED tests/test_gen.py::test_case_0000"}, Step: "step_script"}},
	}
}

// score counts one group's results: the hold-out logs (written without looking at the rule
// table) are reported apart from the logs the rules were written with.
type score struct{ logs, keys, found, right int }

// group names the part of the corpus a log belongs to: its name's prefix before the first "-"
// for the hold-out sets, "corpus" for the rest.
func group(name string) string {
	if p, _, ok := strings.Cut(name, "-"); ok && strings.HasPrefix(p, "holdout") {
		return p
	}
	return "corpus"
}

// filtered is the log as the snapshot tree holds it: through the snapshot's filter.
func filtered(t testing.TB, name string, log []byte) []byte {
	t.Helper()
	r, err := filter.New(nil).Apply(context.Background(), log, filter.Options{Role: filter.RoleLog, MaxBytes: 16 << 20})
	if err != nil || r.Status == filter.StatusRejected {
		t.Fatalf("%s: the filter rejects the log (%v %s)", name, err, r.Gap)
	}
	return r.Output
}

// TestCorpus measures the digest on the labelled corpus, every log first passed through the
// snapshot's filter: key-line recall, category accuracy, digest size; it fails below the goals
// and when a planted secret or invisible character reaches a digest.
func TestCorpus(t *testing.T) {
	corpus := loadCorpus(t)
	if len(corpus) < 40 {
		t.Fatalf("%d labelled logs, want at least 40", len(corpus))
	}
	var keys, found, foundKey, right int
	var sizes []int
	groups := map[string]*score{}
	for _, c := range corpus {
		g := groups[group(c.name)]
		if g == nil {
			g = &score{}
			groups[group(c.name)] = g
		}
		g.logs++
		g.keys += len(c.want.Key)
		log := filtered(t, c.name, c.log)
		d := Of(log, Limits{})
		text := Render(Check{Path: "checks/x/log.txt", Digest: d})
		sizes = append(sizes, len(text))
		for _, k := range c.want.Key {
			keys++
			hitAny, hitKey := false, false
			for _, l := range d.Lines {
				if strings.Contains(l.Text, k) {
					hitAny = true
					hitKey = hitKey || l.Key
				}
			}
			if hitAny {
				found++
				g.found++
			} else {
				t.Logf("%s: key line %q not in the digest", c.name, k)
			}
			if hitKey {
				foundKey++
			}
		}
		if d.Category == c.want.Category {
			right++
			g.right++
		} else {
			t.Logf("%s: category %s (rule %s), labelled %s", c.name, d.Category, d.Rule, c.want.Category)
		}
		if d.Format != c.want.Format {
			t.Errorf("%s: format %s, labelled %s", c.name, d.Format, c.want.Format)
		}
		if c.want.Step != "" && d.Step != c.want.Step {
			t.Errorf("%s: step %q, labelled %q", c.name, d.Step, c.want.Step)
		}
		for _, p := range planted {
			if strings.Contains(text, p) {
				t.Errorf("%s: %q survives into the digest", c.name, p)
			}
		}
	}
	recall := float64(found) / float64(keys)
	strict := float64(foundKey) / float64(keys)
	acc := float64(right) / float64(len(corpus))
	slices.Sort(sizes)
	t.Logf("corpus: %d logs, %d labelled key lines", len(corpus), keys)
	t.Logf("key-line recall %.3f (%d/%d; as key lines %.3f), category accuracy %.3f (%d/%d)", recall, found, keys, strict, acc, right, len(corpus))
	for _, name := range slices.Sorted(maps.Keys(groups)) {
		g := groups[name]
		t.Logf("  %s: %d logs, key lines %d/%d, categories %d/%d", name, g.logs, g.found, g.keys, g.right, g.logs)
	}
	t.Logf("rendered digest bytes: median %d, max %d", sizes[len(sizes)/2], sizes[len(sizes)-1])
	if recall < goalRecall {
		t.Errorf("key-line recall %.3f below the goal %.2f", recall, goalRecall)
	}
	if acc < goalAccuracy {
		t.Errorf("category accuracy %.3f below the goal %.2f", acc, goalAccuracy)
	}
}
