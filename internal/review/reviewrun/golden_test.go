package reviewrun

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/forgectx/forgectx/internal/review/reviewpub"
	"github.com/forgectx/forgectx/internal/review/reviewresult"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if string(want) != got {
		t.Fatalf("%s differs from the golden file:\n%s", name, got)
	}
}

// The posted bytes are deterministic: the summary note and a finding discussion, golden.
func TestRenderGolden(t *testing.T) {
	p := testProjection()
	p.Result.Status, p.Result.OutcomeMessage = reviewresult.StatusCompletedWithErrors, "Reviewed 3 files."
	p.Result.Coverage = reviewresult.Coverage{Kind: reviewresult.CoverageComplete, FilesTotal: 3, FilesReviewed: 3}
	p.Result.Warnings, p.Result.ToolNames = []string{"One file was generated code."}, []string{"ocr_toolkit_evidence"}
	p.Signal = reviewpub.Signal{SchemaVersion: reviewpub.SignalSchema, Result: reviewpub.DecisionPublicationFiltered, FindingsRetained: 1, FindingsOmitted: 2, PublicationFiltered: 2}
	p.Receipt.PublicationDLP = PublicationDLP{Result: DLPPublicationFiltered, Retained: 2, Omitted: 2}
	body, err := renderSummary(p, Eligible(EligibilityInput{AutoApprove: "true", Receipt: p.Receipt, Findings: 1}))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.md", body)
	f := p.Result.Findings[0]
	golden(t, "finding.md", renderFinding(f, Fingerprint(f)))
}
