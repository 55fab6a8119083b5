package rework

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func readDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../docs/rework.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDocumentedMarkerExamplesAreByteExact: the examples in docs/rework.md are what the
// renderers produce, so the documented format and the code cannot drift apart.
func TestDocumentedMarkerExamplesAreByteExact(t *testing.T) {
	doc := readDoc(t)
	body := "discovery-draft/v2\n# Widget cache\n"
	tg := &Target{Owner: "acme", Repository: "demo", Issue: 7, PR: 9, Head: "0123456789abcdef0123456789abcdef01234567", ContractSHA256: SpecResultDigest(body)}
	spec := RenderSpecReview(tg, "Spec review result.", VerdictApproved, tg.Head, tg.ContractSHA256)
	m := ParseMarker(spec)
	corrInput := strings.Join([]string{SpecCorrelationTag, "acme/demo", "7", "9", tg.Head, tg.ContractSHA256, m.Result}, "\n")
	for name, want := range map[string]string{
		"code marker":       RenderCodeMarker(VerdictRequestChanges, tg.Head, tg.ContractSHA256),
		"spec body":         spec,
		"correlation input": corrInput,
		"target example":    `"contract_sha256":"` + tg.ContractSHA256 + `"`,
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("docs/rework.md lacks the exact %s:\n%s", name, want)
		}
	}
	if SpecCorrelation(tg, tg.Head, tg.ContractSHA256, m.Result) != SpecResultDigest(corrInput) {
		t.Error("SpecCorrelation is not the SHA-256 of the LF-joined fields")
	}
	ex, err := os.ReadFile("../../examples/rework/rework-input.json")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ParseTarget(ex); err != nil || got.ContractSHA256 != tg.ContractSHA256 {
		t.Errorf("examples/rework/rework-input.json: %v", err)
	}
	cb, err := os.ReadFile("../../examples/rework/provider-contract.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseContract(cb, 11); err != nil {
		t.Errorf("examples/rework/provider-contract.json: %v", err)
	}
}

// TestEveryBlockingReasonIsDocumentedAndHasANamedTest: each reason is a row of the doc's
// table and the CamelCase form of its name appears in a test name of this package.
func TestEveryBlockingReasonIsDocumentedAndHasANamedTest(t *testing.T) {
	doc := readDoc(t)
	files, _ := filepath.Glob("*_test.go")
	var src strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	names := regexp.MustCompile(`(?:func (Test\w+)|name: "(\w+)"|\{"(\w+)",|t\.Run\("(\w+)")`).FindAllStringSubmatch(src.String(), -1)
	var all strings.Builder
	for _, n := range names {
		all.WriteString(n[1] + n[2] + n[3] + n[4] + "\n")
	}
	for _, r := range AllReasons {
		if !strings.Contains(doc, "| `"+string(r)+"` |") {
			t.Errorf("docs/rework.md has no table row for %s", r)
		}
		camel := ""
		for _, p := range strings.Split(string(r), "_") {
			camel += strings.ToUpper(p[:1]) + p[1:]
		}
		if !strings.Contains(strings.ToLower(all.String()), strings.ToLower(camel)) {
			t.Errorf("no test is named after %s (want a name containing %s)", r, camel)
		}
	}
}
