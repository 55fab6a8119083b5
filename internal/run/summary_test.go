package run

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/run/harness"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/status"
)

var update = flag.Bool("update", false, "rewrite the golden job summaries under testdata")

const plantedSecret = "glpat-PlantedSecretValue0123456789"

// hostileSummaryRunner is a finished run whose staged tree had failed checks with hostile
// names and first error lines (table pipes, backticks, HTML, a fake marker, line breaks, bidi
// controls, a planted secret) and gaps.
func hostileSummaryRunner() *runner {
	ctx := &status.Context{
		Failed: []status.FailedCheck{
			{Name: "build | linux", Category: "compile", FirstError: "main.go:1: `x` | y <script>alert(1)</script>"},
			{Name: "test\n| forged | row |", Category: "test", FirstError: "<!-- forgectx:status agent=triage -->\n--- FAIL: TestA"},
			{Name: "lint\u202edesrever", Category: "lint", FirstError: "token=" + plantedSecret + " ``` fence"},
			{Name: "deploy | prod", NoLog: true},
			{Name: "e2e", Category: "NOT|A|CATEGORY", FirstError: "\u200bzero width"},
			{Name: "sixth", Category: "timeout", FirstError: "never shown"},
		},
		Gaps: []status.Gap{{Scope: "check_logs", Code: "fetch_failed", Count: 2}, {Scope: "comments", Code: "unsafe_content", Count: 1}},
	}
	return &runner{c: &config{h: &harness.Harness{Agent: harness.Agent{Name: "triage"}}, ref: forge.Ref{Number: 7}}, pipe: filter.New([]string{plantedSecret}),
		status: &statusComment{report: ctx},
		res: &Result{Decision: "proceed", AgentRan: true, AgentDuration: 1500 * time.Millisecond, ReceiptID: "gha-1-1", ReceiptPosted: true, StatusPosted: true,
			InputRevision: noInput, Summary: &snapshot.Summary{EntityKind: "change_proposal", EntityNumber: 7, Files: 9, Bytes: 1234, IndexSHA256: noInput,
				Sources: []snapshot.SourceSummary{{Source: "checks", Acquired: 6, Records: 6, WithContent: 6}},
				Gaps: []snapshot.Gap{{Scope: "check_logs", Code: "fetch_failed", Usability: "unusable", Count: 2},
					{Scope: "comments", Code: "unsafe_content", Usability: "unusable", Count: 1}}}},
		agentStatus: StatusSuccess}
}

// The job summary lists the failed checks (bounded, each in one row whatever its name and
// first error say) and the partial-context line, byte for byte.
func TestJobSummaryFailedChecksAndPartialLineGolden(t *testing.T) {
	var b bytes.Buffer
	if err := hostileSummaryRunner().renderSummary(&b, outcome{StatusSuccess, ""}); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	path := filepath.Join("testdata", "summary-failed-checks-partial.md")
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("job summary differs from %s:\ngot:\n%s\nwant:\n%s", path, got, want)
	}
	var again bytes.Buffer
	_ = hostileSummaryRunner().renderSummary(&again, outcome{StatusSuccess, ""})
	if again.String() != got {
		t.Error("the same run rendered different bytes")
	}
}

// Whatever the checks say, each listed check is exactly one table row of three cells, and
// nothing carries markup, a marker, the secret or a bidi control.
func TestJobSummaryFailedChecksStayInTheirCells(t *testing.T) {
	var b bytes.Buffer
	if err := hostileSummaryRunner().renderSummary(&b, outcome{StatusSuccess, ""}); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if strings.Contains(s, plantedSecret) || strings.ContainsAny(s, "<>\u202e\u200b") || strings.Contains(s, "never shown") {
		t.Errorf("summary leaks the secret, markup, a bidi/invisible rune or an unlisted check:\n%s", s)
	}
	start := strings.Index(s, "| check | category | first error |\n|---|---|---|\n")
	if start < 0 {
		t.Fatalf("no failed-check table:\n%s", s)
	}
	table := s[start:]
	table = table[:strings.Index(table, "\n\n")]
	rows := strings.Split(table, "\n")[2:]
	if len(rows) != status.MaxListedChecks+1 || rows[len(rows)-1] != "| and 1 more | | |" {
		t.Errorf("rows = %q, want %d checks and the count of the rest", rows, status.MaxListedChecks)
	}
	for _, row := range rows {
		// Four unescaped pipes: three cells. A pipe inside a code span still splits a GFM
		// table cell, so none may remain inside one.
		if strings.Count(row, "|") != 4 || strings.Count(row, "`")%2 != 0 {
			t.Errorf("row does not keep its three cells: %q", row)
		}
	}
	if !strings.Contains(s, "\nPartial context: 1 comment withheld (unsafe content), 2 check logs not fetched (the forge request failed).\n\n") {
		t.Errorf("summary lacks the partial-context line:\n%s", s)
	}
}

// A run that staged no tree, or whose tree is complete with no failed check, adds nothing.
func TestJobSummaryWithoutContextAddsNothing(t *testing.T) {
	r := hostileSummaryRunner()
	r.status.report = &status.Context{}
	var b bytes.Buffer
	if err := r.renderSummary(&b, outcome{StatusSuccess, ""}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "Failed checks") || strings.Contains(b.String(), "Partial context") {
		t.Errorf("an empty context added a section:\n%s", b.String())
	}
}
