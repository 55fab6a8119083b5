package reviewpub

import (
	"strings"
	"testing"
	"unicode"

	"github.com/forgectx/forgectx/internal/review/reviewresult"
)

// projectWith projects r with custom inputs.
func projectWith(t *testing.T, r *reviewresult.Result, in Inputs) *Outcome {
	t.Helper()
	o, err := Project(r, in)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// oneMessage projects a result holding one finding with message msg and reports whether the
// finding was removed, with the closed reasons that fired.
func oneMessage(t *testing.T, msg string, in Inputs) (removed bool, reasons map[Reason]bool) {
	t.Helper()
	r := baseResult()
	r.Findings = []reviewresult.Finding{finding(msg)}
	o := projectWith(t, r, in)
	reasons = map[Reason]bool{}
	for _, d := range o.Decisions {
		reasons[d.Reason] = true
	}
	return len(o.Publication.Findings) == 0, reasons
}

// TestExcerptBoundary24: the spec compares "normalized contiguous excerpts of at least 24
// characters". A 24-character excerpt of the context as written (spaces and punctuation
// included) is caught, however re-spaced or laundered; in a value without separators, 24
// characters are caught and 23 are not (shorter excerpts are not claimed).
func TestExcerptBoundary24(t *testing.T) {
	// contextText[9:33] is "the rollout must keep th": 24 characters, 20 letters. The
	// earlier index (24 letters/digits only) let it through.
	raw24 := contextText[9:33]
	if len([]rune(raw24)) != 24 {
		t.Fatalf("fixture: %q", raw24)
	}
	for _, msg := range []string{
		"Quote: " + raw24 + " end",
		"Quote: " + strings.ToUpper(raw24) + " end",
		"Quote: " + strings.ReplaceAll(raw24, " ", "  ") + " end",
		"Quote: " + strings.ReplaceAll(raw24, " ", "-") + " end",
	} {
		if removed, rs := oneMessage(t, msg, inputs()); !removed || !rs[ReasonForbiddenContext] {
			t.Errorf("24-character excerpt %q published (%v)", msg, rs)
		}
	}
	token := "k7Qz9Lm2Xp4Rt8Wv1Ny6Bc3Hd5Jf0Gs"
	in := Inputs{Forbidden: []string{"the config token is " + token + " do not share"}}
	if removed, rs := oneMessage(t, "Value "+token[:24]+" here.", in); !removed || !rs[ReasonForbiddenContext] {
		t.Errorf("24 characters of an unseparated value published (%v)", rs)
	}
	if removed, rs := oneMessage(t, "Value "+token[1:24]+" here.", in); removed {
		t.Errorf("23 characters flagged (%v): the bound is 24", rs)
	}
}

// TestForbiddenLaunderingForms: a copy of context text is caught through zero-width
// splitting, non-ASCII decimal digits, HTML numeric entities and percent-encoding.
func TestForbiddenLaunderingForms(t *testing.T) {
	in := Inputs{Forbidden: []string{"release key 4815162342 4815162342 rotates on 2027-01-01 only"}}
	arabic := strings.NewReplacer("0", "٠", "1", "١", "2", "٢", "3", "٣", "4", "٤", "5", "٥", "6", "٦", "8", "٨")
	devanagari := strings.NewReplacer("1", "१", "2", "२", "4", "४", "5", "५", "6", "६", "8", "८")
	base := "key 4815162342 4815162342 rotates"
	for name, msg := range map[string]string{
		"zero-width split":    strings.Join(strings.Split(base, ""), "\u200b"),
		"arabic-indic digits": arabic.Replace(base),
		"devanagari digits":   devanagari.Replace(base),
		"math bold digits":    strings.NewReplacer("4", "𝟒", "8", "𝟖").Replace(base),
		"numeric entities":    strings.ReplaceAll(base, "4", "&#52;"),
		"hex entities":        strings.ReplaceAll(base, "8", "&#x38;"),
		"percent-encoded":     strings.ReplaceAll(base, " ", "%20"),
		"double percent":      strings.ReplaceAll(base, " ", "%2520"),
	} {
		if removed, rs := oneMessage(t, "See "+msg+".", in); !removed || !rs[ReasonForbiddenContext] {
			t.Errorf("%s: context copy published (%v)", name, rs)
		}
	}
}

// TestSecretLaunderingForms: a configured secret is caught in the same laundering forms.
func TestSecretLaunderingForms(t *testing.T) {
	arabic := strings.NewReplacer("3", "٣", "9", "٩", "2", "٢")
	pct := ""
	for _, b := range []byte(runSecret) {
		pct += "%" + strings.ToUpper(string("0123456789abcdef"[b>>4])+string("0123456789abcdef"[b&15]))
	}
	for name, msg := range map[string]string{
		"arabic-indic digits": arabic.Replace(runSecret),
		"percent-encoded":     pct,
		"entity-encoded":      "&#115;" + runSecret[1:],
		"zero-width split":    runSecret[:5] + "\u2060" + runSecret[5:],
	} {
		if removed, rs := oneMessage(t, "The token "+msg+" leaks.", inputs()); !removed || !rs[ReasonSecret] {
			t.Errorf("%s: secret published (%v)", name, rs)
		}
	}
}

// TestWholeForbiddenValue: a value equal to a whole forbidden value is caught even when it is
// shorter than the excerpt and whole-substring bounds.
func TestWholeForbiddenValue(t *testing.T) {
	in := Inputs{Forbidden: []string{"issue DEMO-7"}}
	r := baseResult()
	r.Warnings = []string{"Issue demo-7.", "Issue demo-8."}
	o := projectWith(t, r, in)
	if len(o.Publication.Warnings) != 1 || o.Publication.Warnings[0] != "Issue demo-8." || o.Signal.Reasons.ForbiddenContext != 1 {
		t.Errorf("warnings %v signal %+v", o.Publication.Warnings, o.Signal)
	}
}

// TestMarkdownDestinationForms: inline, reference-style (full, collapsed, in a block quote
// or list item), image, autolink and entity-encoded destinations are all caught in prose.
func TestMarkdownDestinationForms(t *testing.T) {
	for _, msg := range []string{
		"See [docs][ref].",
		"See [ref][].",
		"See ![img][ref].",
		"[ref]: /relative/path",
		"Note.\n> [ref]: /relative/path",
		"Note.\n- [ref]: /relative/path",
		"Note.\n1. [ref]: /relative/path",
		"Go to <https://evil.example/x>.",
		"Mail <mailto:x@evil.example>.",
		"Chat at <irc:evil.example/room>.",
		"Open www.evil.example now.",
		"&#91;x&#93;&#40;/p&#41;",
		"［x］（/p）",
	} {
		if removed, rs := oneMessage(t, msg, inputs()); !removed || !rs[ReasonMarkdownDestination] {
			t.Errorf("%q published (%v)", msg, rs)
		}
	}
}

// TestHomoglyphLaundering: a word mixing Latin and Cyrillic letters is laundering; Russian
// prose and Greek letters beside Latin ones are not.
func TestHomoglyphLaundering(t *testing.T) {
	if removed, rs := oneMessage(t, "The p\u0430ssword check is skipped.", Inputs{}); !removed || !rs[ReasonLaundering] {
		t.Errorf("mixed-script word published (%v)", rs)
	}
	for _, msg := range []string{"Комментарий: цикл без ограничения.", "The cost is O(nα) with α small."} {
		if removed, rs := oneMessage(t, msg, Inputs{}); removed {
			t.Errorf("%q flagged (%v)", msg, rs)
		}
	}
}

// TestFoldDigitRanges proves foldDigit's premise for the linked Unicode tables: every Nd
// range is stride 1 and a whole number of ten-digit runs starting at a zero.
func TestFoldDigitRanges(t *testing.T) {
	for _, rg := range unicode.Nd.R16 {
		if rg.Stride != 1 || (rg.Hi-rg.Lo+1)%10 != 0 {
			t.Errorf("Nd range %#x..%#x", rg.Lo, rg.Hi)
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if rg.Stride != 1 || (rg.Hi-rg.Lo+1)%10 != 0 {
			t.Errorf("Nd range %#x..%#x", rg.Lo, rg.Hi)
		}
	}
	if foldDigit('٣') != '3' || foldDigit('९') != '9' || foldDigit('x') != 'x' {
		t.Error("foldDigit")
	}
	if percentDecode("100% sure, 50%") != "100% sure, 50%" || percentDecode("a%2520b") != "a b" {
		t.Error("percentDecode")
	}
}

// TestTabOnlyInCodeFields: a horizontal tab is allowed only in existing_code and
// suggestion_code, and there only when the value passes every other detector.
func TestTabOnlyInCodeFields(t *testing.T) {
	r := baseResult()
	r.Status = reviewresult.StatusCompletedWithErrors
	r.Coverage = reviewresult.Coverage{Kind: reviewresult.CoveragePartial, FilesTotal: 4, FilesReviewed: 3, FilesFailed: 1}
	code := finding("Tabbed code is fine.")
	code.ExistingCode, code.SuggestionCode = "if x {\n\treturn\n}", "if x {\n\treturn nil\n}"
	leaky := finding("Tabbed code with a secret.")
	leaky.ExistingCode, leaky.SuggestionCode = "key :=\t\""+runSecret+"\"", "key := os.Getenv(\"K\")\t// ok"
	r.Findings = []reviewresult.Finding{code, leaky, finding("tab\tin message"), {Severity: "low", Path: "a\tb.go", Line: 1, Message: "tab in path"}}
	r.Warnings = []string{"tab\tin warning", "plain warning"}
	r.OutcomeMessage = "tab\tin outcome"
	r.ToolNames = []string{"ocr_toolkit_evidence", "tab\ttool"}
	r.ManifestFailure = &reviewresult.ManifestFailure{Path: "pkg/\tx.go", Reason: "too\tlarge"}
	r.Metadata["note"] = "tab\tin metadata"
	o := project(t, r)
	p := o.Publication
	if len(p.Findings) != 2 || p.Findings[0] != code {
		t.Fatalf("findings %+v", p.Findings)
	}
	if p.Findings[1].ExistingCode != "" || p.Findings[1].SuggestionCode != leaky.SuggestionCode {
		t.Errorf("tabbed secret code kept or clean tabbed code dropped: %+v", p.Findings[1])
	}
	if len(p.Warnings) != 1 || p.OutcomeMessage != withheldOutcome || len(p.ToolNames) != 1 ||
		p.ManifestFailure.Path != withheldValue || p.ManifestFailure.Reason != withheldValue || o.Private.Metadata["note"] != sanitizedValue {
		t.Errorf("a tab survived outside the code fields: %+v %+v", p, o.Private.Metadata)
	}
	if o.Signal.Reasons.Control < 7 {
		t.Errorf("tab counts %+v", o.Signal.Reasons)
	}
}

// TestCompletedWithErrorsProjection: a filtered completed result becomes
// completed_with_errors with the original coverage kind and counts (complete coverage is not
// relabelled partial), the retained/omitted counts add up, and it is publication-filtered.
func TestCompletedWithErrorsProjection(t *testing.T) {
	r := baseResult()
	r.Findings = []reviewresult.Finding{finding("ok one"), finding("leak " + contextText), finding("ok two")}
	r.Warnings = []string{"w1", "see https://evil.example"}
	o := project(t, r)
	p := o.Publication
	if o.Decision != DecisionPublicationFiltered || p.Status != reviewresult.StatusCompletedWithErrors || p.Coverage != r.Coverage || p.Coverage.Kind != reviewresult.CoverageComplete {
		t.Errorf("decision %s status %s coverage %+v", o.Decision, p.Status, p.Coverage)
	}
	s := o.Signal
	if s.FindingsRetained+s.FindingsOmitted != 3 || s.FindingsOmitted != 1 || s.WarningsRetained+s.WarningsOmitted != 2 || s.WarningsOmitted != 1 || s.PublicationFiltered != 2 {
		t.Errorf("counts %+v", s)
	}
	if p.Findings[0].Message != "ok one" || p.Findings[1].Message != "ok two" {
		t.Errorf("safe findings not passed independently: %+v", p.Findings)
	}
}

// TestPrivateMetadataIdentifiers: opaque SHAs, UUIDs, item identities and bare build numbers
// in private metadata are not phone-like and leave the decision clean; a separator-bearing
// identifier the conservative detector calls phone-like is sanitized privately
// (private-sanitized) without making any publication sink partial.
func TestPrivateMetadataIdentifiers(t *testing.T) {
	r := baseResult()
	r.Findings = []reviewresult.Finding{finding("The loop has no upper bound.")}
	r.Metadata = map[string]string{"sha": strings.Repeat("0123456789", 4), "uuid": "123e4567-e89b-12d3-a456-426614174000",
		"item": "4711081542", "build": "202612021234567", "run": "987654321012345678"}
	if o := project(t, r); o.Decision != DecisionClean || o.Signal.PrivateSanitized != 0 {
		t.Fatalf("identifiers flagged: %s %+v", o.Decision, o.Decisions)
	}
	r.Metadata["ticket"] = "415-555-0100-22"
	r.Metadata["ticket2"] = "(415) 555-0100"
	o := project(t, r)
	if o.Decision != decisionPrivateSanitized || o.Publication.Status != reviewresult.StatusCompleted || len(o.Publication.Findings) != 1 || o.Signal.PublicationFiltered != 0 {
		t.Errorf("decision %s publication %+v signal %+v", o.Decision, o.Publication, o.Signal)
	}
}

// TestRetainedProjectionHoldsNoUnsafeValue: neither retained projection carries an unsafe
// value or its location; only the explicit sidecar attributes (path, size, hash).
func TestRetainedProjectionHoldsNoUnsafeValue(t *testing.T) {
	r := baseResult()
	r.Findings = []reviewresult.Finding{finding("leak " + runSecret), finding("ok")}
	r.Warnings = []string{"context: " + contextText}
	r.Metadata["debug"] = runSecret
	o := project(t, r)
	for _, res := range []*reviewresult.Result{o.Publication, o.Private} {
		b, err := reviewresult.Encode(res)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{runSecret, "retry budget", "$.findings", "$.metadata", "$.warnings"} {
			if strings.Contains(string(b), bad) {
				t.Errorf("retained projection holds %q", bad)
			}
		}
	}
	side, _ := o.DecisionsJSON()
	if !strings.Contains(string(side), `"path":"$.metadata.debug"`) || strings.Contains(string(side), runSecret) {
		t.Errorf("sidecar %s", side)
	}
}

// TestPIIForms: the closed PII patterns catch common written forms, laundered ones included,
// while bare digit runs stay publishable.
func TestPIIForms(t *testing.T) {
	for _, msg := range []string{
		"Call (415)555-0100.", "Call (415) 555-0100.", "Call +44 20 7946 0958.", "Call 415.555.0100.",
		"Mail jane&#64;example.com.", "Mail ｊａｎｅ＠ｅｘａｍｐｌｅ．ｃｏｍ.", "Card 4111-1111-1111-1111.",
		"IBAN DE89 3704 0044 0532 0130 00.",
	} {
		if removed, rs := oneMessage(t, msg, Inputs{}); !removed || !rs[ReasonPII] {
			t.Errorf("%q published (%v)", msg, rs)
		}
	}
	for _, msg := range []string{"Build 4711081542 failed.", "Commit 0a1b2c3d4e5f60718293a4b5c6d7e8f901234567.", "Use <T:Trait> bounds."} {
		if removed, rs := oneMessage(t, msg, Inputs{}); removed {
			t.Errorf("%q flagged (%v)", msg, rs)
		}
	}
}

// TestMixedDirectionText: explicit bidi controls (an override that displays reversed context
// text as the original, an isolate, a mark) are laundering wherever they appear, while
// right-to-left prose without controls is publishable.
func TestMixedDirectionText(t *testing.T) {
	reversed := "\u202Eevif woleb tegdub yrter eht peek tsum tuollor eht\u202C"
	for _, msg := range []string{reversed, "ok \u2067שלום\u2069 ok", "value\u200F = 1", "a\u061Cb"} {
		if removed, rs := oneMessage(t, msg, inputs()); !removed || !rs[ReasonLaundering] {
			t.Errorf("%q published (%v)", msg, rs)
		}
	}
	for _, msg := range []string{"הלולאה אינה מוגבלת.", "الحلقة غير محدودة."} {
		if removed, rs := oneMessage(t, msg, inputs()); removed {
			t.Errorf("%q flagged (%v)", msg, rs)
		}
	}
}
