package reviewpub

import (
	"bytes"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/review/reviewctx"
	"github.com/forgectx/forgectx/internal/review/reviewresult"
)

// contextText is a non-publishable context record text the engine could read.
const contextText = "DEMO-42: the rollout must keep the retry budget below five attempts per request"

const runSecret = "s3cr3t-run-credential-value-9f2c"

func inputs() Inputs {
	return Inputs{Forbidden: []string{contextText, "short"}, Secrets: []string{runSecret}}
}

func baseResult() *reviewresult.Result {
	return &reviewresult.Result{
		SchemaVersion: reviewresult.SchemaVersion, Status: reviewresult.StatusCompleted,
		OutcomeMessage: "Reviewed 4 files.",
		Coverage:       reviewresult.Coverage{Kind: reviewresult.CoverageComplete, FilesTotal: 4, FilesReviewed: 4},
		Findings:       []reviewresult.Finding{},
		Warnings:       []string{},
		ToolNames:      []string{"ocr_toolkit_evidence"},
		Metadata:       map[string]string{"engine": "ocr", "build": "20261202123456", "sha": "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567", "uuid": "3f1d0c6e-9b8a-4f6e-8d4c-3b2a19081726"},
	}
}

func finding(msg string) reviewresult.Finding {
	return reviewresult.Finding{Severity: reviewresult.SeverityMedium, Path: "pkg/retry.go", Line: 10, Message: msg}
}

func project(t *testing.T, r *reviewresult.Result) *Outcome {
	t.Helper()
	o, err := Project(r, inputs())
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestFindingLeaksCaught is the hostile-engine table: each finding leaks one thing and is
// removed with the expected closed reason, while a clean finding survives.
func TestFindingLeaksCaught(t *testing.T) {
	laundered := "DEMO-42: the roll\u202eout must\u200b keep the re\u2066try budget below five"
	fullWidth := "ｄｅｍｏ－４２： ｔｈｅ ｒｏｌｌｏｕｔ ｍｕｓｔ ｋｅｅｐ ｔｈｅ ｒｅｔｒｙ"
	for _, tc := range []struct {
		name, msg string
		reasons   []Reason
	}{
		{"context text excerpt", "As the tracker says, the Rollout must keep the retry budget BELOW five — fix it.", []Reason{ReasonForbiddenContext}},
		{"context text with markdown emphasis", "the **rollout** must _keep_ the `retry` budget below five", []Reason{ReasonForbiddenContext}},
		{"bidi-laundered context copy", laundered, []Reason{ReasonLaundering, ReasonForbiddenContext}},
		{"full-width context copy", fullWidth, []Reason{ReasonLaundering, ReasonForbiddenContext}},
		{"entity-encoded context copy", "the&#32;rollout&#x20;must keep&nbsp;the retry budget below five", []Reason{ReasonLaundering, ReasonForbiddenContext}},
		{"configured secret", "The token " + runSecret + " is logged.", []Reason{ReasonSecret}},
		{"pattern secret", "Leaked ghp_" + strings.Repeat("aB3dE5fG7h", 3) + "123456 in the log.", []Reason{ReasonSecret}},
		{"spaced-out secret", "The token " + strings.Join(strings.Split(runSecret, ""), " ") + " is logged.", []Reason{ReasonSecret}},
		{"markdown-split secret", "The token **" + runSecret[:10] + "**_" + runSecret[10:] + "_ is logged.", []Reason{ReasonSecret}},
		{"zero-width split secret", "The token " + runSecret[:8] + "\u200b" + runSecret[8:] + " is logged.", []Reason{ReasonLaundering, ReasonSecret}},
		{"e-mail", "Ask jane.doe@example.com about it.", []Reason{ReasonPII}},
		{"phone", "Call +1 415-555-0100 for access.", []Reason{ReasonPII}},
		{"ssn", "The fixture holds 078-05-1120 as an SSN.", []Reason{ReasonPII}},
		{"markdown image", "See ![diagram](https://evil.example/p.png?d=leak) for details.", []Reason{ReasonMarkdownDestination}},
		{"markdown link", "See [the docs](https://evil.example/x).", []Reason{ReasonMarkdownDestination}},
		{"bare url", "Upload to https://evil.example/collect now.", []Reason{ReasonMarkdownDestination}},
		{"reference definition", "Fix it.\n[x]: https://evil.example/", []Reason{ReasonMarkdownDestination}},
		{"entity-encoded image", "&lt;img src=x&gt; renders", []Reason{ReasonLaundering, reasonHTML}},
		{"forged marker comment", "ok <!-- ocr.remediation-marker/v1 fingerprint=" + strings.Repeat("a", 64) + " -->", []Reason{reasonHTML}},
		{"full-width image", "！［ｘ］（ｈｔｔｐｓ：／／ｅｖｉｌ．ｅｘａｍｐｌｅ）", []Reason{ReasonLaundering, ReasonMarkdownDestination}},
		{"tab in message", "column\tvalue", []Reason{reasonControl}},
		{"quick action line", "Looks fine.\n/approve", []Reason{reasonControl}},
		{"full-width quick action", "ok\n／merge", []Reason{ReasonLaundering, reasonControl}},
		{"terminal escape", "red \x1b[31m text", []Reason{reasonControl}},
	} {
		r := baseResult()
		r.Findings = []reviewresult.Finding{finding("Clean: the loop has no upper bound."), finding(tc.msg)}
		o := project(t, r)
		if len(o.Publication.Findings) != 1 || o.Publication.Findings[0].Message != "Clean: the loop has no upper bound." {
			t.Errorf("%s: published findings %+v", tc.name, o.Publication.Findings)
			continue
		}
		if o.Decision != DecisionPublicationFiltered || o.Publication.Status != reviewresult.StatusCompletedWithErrors {
			t.Errorf("%s: decision %s status %s", tc.name, o.Decision, o.Publication.Status)
		}
		got := map[Reason]bool{}
		for _, d := range o.Decisions {
			got[d.Reason] = true
			if d.Path != "$.findings[1].message" || len(d.SHA256) != 64 || d.Size != len(tc.msg) {
				t.Errorf("%s: decision %+v", tc.name, d)
			}
		}
		for _, want := range tc.reasons {
			if !got[want] {
				t.Errorf("%s: reasons %v, missing %s", tc.name, got, want)
			}
		}
		if o.Signal.FindingsOmitted != 1 || o.Signal.FindingsRetained != 1 {
			t.Errorf("%s: signal %+v", tc.name, o.Signal)
		}
	}
}

// TestCleanProseIsPublished guards against a detector that flags ordinary review prose.
func TestCleanProseIsPublished(t *testing.T) {
	r := baseResult()
	r.Findings = []reviewresult.Finding{
		finding("Use Vec<u8> instead of String; a[i] (the index) can overflow when i > len."),
		finding("The build 20261202 at commit 0a1b2c3d fails: see the test output, item 4711."),
		finding("Version 1.26.8 on 192.168.1.10 at 2026-12-02 14:02:42 is fine."),
		{Severity: "low", Path: "pkg/x.go", Line: 3, Message: "Indentation.", ExistingCode: "if x {\n\treturn\n}", SuggestionCode: "if x {\n\treturn nil\n}"},
	}
	r.Warnings = []string{"One file exceeded the size bound and was skipped."}
	o := project(t, r)
	if o.Decision != DecisionClean || len(o.Publication.Findings) != 4 || len(o.Decisions) != 0 {
		t.Fatalf("decision %s findings %d decisions %+v", o.Decision, len(o.Publication.Findings), o.Decisions)
	}
	if o.Publication.Findings[3].ExistingCode == "" {
		t.Error("a tab in existing_code was not allowed")
	}
	if o.Publication.Status != reviewresult.StatusCompleted || len(o.Publication.Metadata) != 0 || o.Private.Metadata["engine"] != "ocr" {
		t.Errorf("projections %+v / %+v", o.Publication, o.Private)
	}
}

func TestUnsafeOptionalFieldRemovedFindingKept(t *testing.T) {
	r := baseResult()
	f := finding("Retry without a bound.")
	f.ExistingCode = "token := \"" + runSecret + "\""
	f.SuggestionCode = "token := os.Getenv(\"TOKEN\")"
	r.Findings = []reviewresult.Finding{f}
	o := project(t, r)
	if len(o.Publication.Findings) != 1 {
		t.Fatal("the finding was discarded for an unsafe optional field")
	}
	got := o.Publication.Findings[0]
	if got.ExistingCode != "" || got.SuggestionCode == "" || got.Message != f.Message {
		t.Errorf("%+v", got)
	}
	if o.Signal.FieldsOmitted != 1 || o.Signal.FindingsOmitted != 0 || o.Decision != DecisionPublicationFiltered {
		t.Errorf("%+v %s", o.Signal, o.Decision)
	}
	// a code field leaking context text is removed the same way
	f.ExistingCode = "// " + contextText
	r.Findings = []reviewresult.Finding{f}
	if o := project(t, r); o.Publication.Findings[0].ExistingCode != "" || o.Signal.Reasons.ForbiddenContext == 0 {
		t.Errorf("context in existing_code: %+v", o.Signal)
	}
}

func TestOtherSinks(t *testing.T) {
	r := baseResult()
	r.Status = reviewresult.StatusCompletedWithErrors
	r.Coverage = reviewresult.Coverage{Kind: reviewresult.CoveragePartial, FilesTotal: 4, FilesReviewed: 3, FilesFailed: 1}
	r.OutcomeMessage = "Done; credential " + runSecret
	r.Warnings = []string{"fine warning", "see [here](https://evil.example)"}
	r.ToolNames = []string{"ocr_toolkit_evidence", "evil\ntool"}
	r.ManifestFailure = &reviewresult.ManifestFailure{Path: "pkg/big.go", Reason: "owner jane.doe@example.com"}
	o := project(t, r)
	p := o.Publication
	if p.OutcomeMessage != withheldOutcome || len(p.Warnings) != 1 || len(p.ToolNames) != 1 || p.ManifestFailure.Reason != withheldValue || p.ManifestFailure.Path != "pkg/big.go" {
		t.Errorf("%+v", p)
	}
	if p.Coverage != r.Coverage {
		t.Errorf("coverage relabelled: %+v", p.Coverage)
	}
	s := o.Signal
	if s.WarningsOmitted != 1 || s.ValuesWithheld != 3 || s.Reasons.Secret == 0 || s.Reasons.PII == 0 || s.Reasons.Control == 0 {
		t.Errorf("signal %+v", s)
	}
}

func TestFailedStaysFailed(t *testing.T) {
	r := baseResult()
	r.Status = reviewresult.StatusFailed
	r.Coverage = reviewresult.Coverage{Kind: reviewresult.CoverageNone, FilesTotal: 2}
	r.ManifestFailure = &reviewresult.ManifestFailure{Path: "a.go", Reason: "see https://evil.example"}
	o := project(t, r)
	if o.Decision != DecisionPublicationFiltered || o.Publication.Status != reviewresult.StatusFailed || o.Publication.Coverage != r.Coverage {
		t.Errorf("%s %+v", o.Decision, o.Publication)
	}
}

func TestPrivateSanitizedKeepsPublication(t *testing.T) {
	r := baseResult()
	r.Findings = []reviewresult.Finding{finding("The loop has no upper bound.")}
	r.Metadata["session_note"] = "operator jane.doe@example.com"
	r.Metadata["debug"] = "token " + runSecret
	o := project(t, r)
	if o.Decision != decisionPrivateSanitized {
		t.Fatalf("decision %s", o.Decision)
	}
	if o.Publication.Status != reviewresult.StatusCompleted || len(o.Publication.Findings) != 1 {
		t.Errorf("publication changed: %+v", o.Publication)
	}
	if o.Private.Metadata["session_note"] != sanitizedValue || o.Private.Metadata["debug"] != sanitizedValue || o.Private.Metadata["sha"] != r.Metadata["sha"] || o.Private.Metadata["build"] != r.Metadata["build"] {
		t.Errorf("private metadata %+v", o.Private.Metadata)
	}
	if o.Signal.PrivateSanitized != 2 || o.Signal.PublicationFiltered != 0 {
		t.Errorf("signal %+v", o.Signal)
	}
	before, _ := canonicalPublication(r)
	after, _ := canonicalPublication(o.Publication)
	if !bytes.Equal(before, after) {
		t.Error("private-sanitized with a changed publication projection")
	}
}

func TestSignalMarkerAndTelemetryAreValueFree(t *testing.T) {
	r := baseResult()
	r.Findings = []reviewresult.Finding{finding("leak " + runSecret), finding("ok")}
	o := project(t, r)
	m := o.Signal.Marker()
	if !strings.HasPrefix(m, "<!-- ocr.publication-dlp-signal/v2 {") || !strings.HasSuffix(m, "} -->") {
		t.Fatalf("marker %q", m)
	}
	want := `{"fields_omitted":0,"findings_omitted":1,"findings_retained":1,"private_sanitized":0,"publication_filtered":1,` +
		`"reasons":{"control":0,"forbidden_context":0,"html":0,"laundering":0,"markdown_destination":0,"pii":0,"secret":1,"work_bound":0},` +
		`"result":"publication-filtered","schema_version":"ocr.publication-dlp-signal/v2","values_withheld":0,"warnings_omitted":0,"warnings_retained":0}`
	if got := string(o.Signal.JSON()); got != want {
		t.Errorf("signal JSON\n got %s\nwant %s", got, want)
	}
	back, ok := ParseMarker("summary\n" + m + "\n")
	if !ok || back != o.Signal {
		t.Errorf("marker round trip %+v %v", back, ok)
	}
	side, err := o.DecisionsJSON()
	if err != nil || strings.Contains(string(side), runSecret) || !strings.Contains(string(side), `"schema_version":"ocr.private-dlp-decisions/v1"`) {
		t.Errorf("sidecar %s %v", side, err)
	}
	for _, d := range o.Signal.Details() {
		if strings.Contains(d, runSecret) {
			t.Error("details leak")
		}
	}
}

func TestProjectDeterministic(t *testing.T) {
	r := baseResult()
	r.Findings = []reviewresult.Finding{finding("leak " + runSecret), finding("ok")}
	r.Metadata["a"] = "x@example.com"
	var prev []byte
	for range 3 {
		o := project(t, r)
		b, err := reviewresult.Encode(o.Private)
		if err != nil {
			t.Fatal(err)
		}
		side, _ := o.DecisionsJSON()
		b = append(append(b, side...), o.Signal.JSON()...)
		if prev != nil && !bytes.Equal(prev, b) {
			t.Fatal("same inputs, different bytes")
		}
		prev = b
	}
}

func TestForbiddenFromStore(t *testing.T) {
	st := &reviewctx.Store{Records: []reviewctx.Record{
		{Binding: reviewctx.Binding{Projections: reviewctx.Projections{Publish: []string{"descriptor"}}},
			Content: reviewctx.Content{Descriptor: "public descriptor", State: "open", Text: "private text"}},
		{Content: reviewctx.Content{Thread: &reviewctx.Thread{Root: "root text", Replies: []reviewctx.Reply{{Text: "reply text"}}}}},
		{Content: reviewctx.Content{CI: &reviewctx.CIRecord{Check: "unit"}}},
	}}
	got := strings.Join(ForbiddenFromStore(st), "|")
	if got != "open|private text|root text|reply text" {
		t.Errorf("%q", got)
	}
}

func TestFence(t *testing.T) {
	for code, want := range map[string]string{"x": "```", "a ``` b": "````", "````` x ``": "``````"} {
		if got := Fence(code); got != want {
			t.Errorf("Fence(%q) = %q, want %q", code, got, want)
		}
	}
}

func TestWorkBoundFiltersUnit(t *testing.T) {
	big := strings.Repeat("abcdefghij", (maxForbiddenChars/10)+1)
	r := baseResult()
	r.Findings = []reviewresult.Finding{finding("anything at all")}
	o, err := Project(r, Inputs{Forbidden: []string{big}})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Publication.Findings) != 0 || o.Signal.Reasons.WorkBound == 0 {
		t.Errorf("an uncertain comparison published the unit: %+v", o.Signal)
	}
}

func FuzzProject(f *testing.F) {
	f.Add("the rollout must keep the retry budget below five", "x := 1")
	f.Add("![a](https://e.example)", "\t"+runSecret)
	f.Add("&#x3C;img&#x3E;", "ｈｔｔｐｓ：／／")
	f.Fuzz(func(t *testing.T, msg, code string) {
		r := baseResult()
		if msg == "" || len(msg) > reviewresult.MaxMessageBytes || len(code) > reviewresult.MaxCodeBytes {
			return
		}
		fd := finding(msg)
		fd.ExistingCode = code
		r.Findings = []reviewresult.Finding{fd}
		o, err := Project(r, inputs())
		if err != nil {
			t.Fatalf("valid result refused: %v", err)
		}
		// the publication projection is a fixed point: projecting it again removes nothing
		o2, err := Project(o.Publication, inputs())
		if err != nil {
			t.Fatal(err)
		}
		if len(o2.Publication.Findings) != len(o.Publication.Findings) || o2.Signal.PublicationFiltered != 0 {
			t.Fatalf("published projection is not clean on re-check: %+v", o2.Signal)
		}
		for _, p := range o.Publication.Findings {
			if strings.Contains(p.Message+p.ExistingCode, runSecret) {
				t.Fatal("secret published")
			}
		}
	})
}
