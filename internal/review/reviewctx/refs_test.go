package reviewctx

import (
	"strings"
	"testing"
)

func TestRecognizersExtractOnlyTheirOwnForms(t *testing.T) {
	refs := []Reference{
		{ResourceClass: ResourceIssue, MaxRecords: 8, Recognizer: Recognizer{Type: recognizerIssueKey, Prefix: "DEMO"}},
		{ResourceClass: resourceDocument, MaxRecords: 8, Recognizer: Recognizer{Type: recognizerHTTPSURL, Origin: "https://docs.example.invalid", PathPrefix: "/published/"}},
		{ResourceClass: resourceDocument, MaxRecords: 8, Recognizer: Recognizer{Type: recognizerExplicit}},
	}
	texts := []string{
		"Fixes DEMO-42 and DEMO-7, not XDEMO-3 nor DEMOX-1 nor demo-5 nor DEMO-0.",
		"See https://docs.example.invalid/published/arch.md and https://docs.example.invalid/private/x and http://docs.example.invalid/published/y",
		"Also https://docs.example.invalid.evil/published/z and https://docs.example.invalid/published/../private/k",
		"[[context:document:architecture-note]] [[context:issue:rollout-record]] [[context:secret:x]]",
	}
	got := recognize(refs, texts)
	var s []string
	for _, c := range got {
		s = append(s, string(rune('0'+c.Reference))+":"+c.Value)
	}
	want := "0:DEMO-42,0:DEMO-7,1:https://docs.example.invalid/published/arch.md,2:architecture-note"
	if strings.Join(s, ",") != want {
		t.Fatalf("got %v\nwant %s", s, want)
	}
}

func TestRecognitionIsBoundedPerReference(t *testing.T) {
	refs := []Reference{{ResourceClass: ResourceIssue, MaxRecords: 2, Recognizer: Recognizer{Type: recognizerIssueKey, Prefix: "A"}}}
	if got := recognize(refs, []string{"A-1 A-2 A-3 A-4"}); len(got) != 2 {
		t.Fatalf("%v", got)
	}
}

// Recognition grants nothing: a recognized candidate whose adapter answers unavailable (or
// is not configured) yields no record and no handle.
func TestRecognitionNeverGrantsAccess(t *testing.T) {
	p, _ := parsePolicy(examplePolicy(t))
	cands := recognize(p.References, []string{"DEMO-42"})
	if len(cands) != 1 {
		t.Fatalf("%v", cands)
	}
	adapters, _ := ParseAdapters(helperAdapterJSON(t, "tracker"))
	res := resolveReferences(t.Context(), &Broker{Adapters: adapters, Env: helperEnv("unavailable")}, p, "run-1", cands, fxNow)
	if len(res.Drafts) != 0 || res.State.Completeness != Unavailable {
		t.Fatalf("%+v", res)
	}
	res = resolveReferences(t.Context(), &Broker{}, p, "run-1", cands, fxNow)
	if len(res.Drafts) != 0 {
		t.Fatalf("an unconfigured adapter produced a record")
	}
}

func TestMarker(t *testing.T) {
	fp := strings.Repeat("ab", 32)
	body := "Finding text\n" + FormatMarker(fp) + "\n"
	got, rest, ok := ParseMarker(body)
	if !ok || got != fp || rest != "Finding text" {
		t.Fatalf("%q %q %v", got, rest, ok)
	}
	for _, bad := range []string{
		"no marker",
		"<!-- ocr.remediation-marker/v1 fingerprint=" + strings.Repeat("AB", 32) + " -->",
		"<!-- ocr.remediation-marker/v1 fingerprint=" + fp[:60] + " -->",
		FormatMarker(fp) + "\n" + FormatMarker(fp),
		"text " + FormatMarker(fp) + " trailing",
	} {
		if _, _, ok := ParseMarker(bad); ok {
			t.Errorf("accepted %q", bad)
		}
	}
}

func TestCommandsExcludedFromModelText(t *testing.T) {
	got, n := stripCommands("keep this\n/resolve\n@ocr-bot approve\n  /label ~x\n@ocr-bot", "ocr-bot")
	if got != "keep this" || n != 4 {
		t.Fatalf("%q %d", got, n)
	}
}
