package rework

import (
	"errors"
	"strings"
	"testing"
)

const goodTarget = `{"schema":"gitea-agent.rework-input/v1","target":{"owner":"acme","repository":"demo","issue":7,"pr":9},"head":"0123456789abcdef0123456789abcdef01234567","contract_sha256":"` +
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" + `"}`

func TestParseTargetAcceptsTheSpecExample(t *testing.T) {
	tg, err := ParseTarget([]byte(goodTarget))
	if err != nil {
		t.Fatal(err)
	}
	if tg.Owner != "acme" || tg.Repository != "demo" || tg.Issue != 7 || tg.PR != 9 || tg.Head[:4] != "0123" {
		t.Errorf("parsed %+v", tg)
	}
}

// TestTargetRules: one row per rule of "Independent input"; each failure names the field.
func TestTargetRules(t *testing.T) {
	rep := func(old, new string) string { return strings.Replace(goodTarget, old, new, 1) }
	cases := []struct{ name, doc, field string }{
		{"SchemaIsExact", rep("rework-input/v1", "rework-input/v1 "), "schema"},
		{"UnknownTopLevelFieldRefused", rep(`"head"`, `"extra":1,"head"`), "(document)"},
		{"UnknownTargetFieldRefused", rep(`"pr":9`, `"pr":9,"selected_review":3`), "target"},
		{"RepeatedFieldRefused", rep(`"issue":7`, `"issue":7,"issue":8`), "target.issue"},
		{"MissingFieldRefused", rep(`,"pr":9`, ``), "target.pr"},
		{"OwnerStrict", rep(`"acme"`, `"ac/me"`), "target.owner"},
		{"OwnerNoDoubleSpecial", rep(`"acme"`, `"ac--me"`), "target.owner"},
		{"RepositoryStrict", rep(`"demo"`, `"demo.git"`), "target.repository"},
		{"RepositoryNotDotDot", rep(`"demo"`, `".."`), "target.repository"},
		{"IssuePositive", rep(`"issue":7`, `"issue":0`), "target.issue"},
		{"IssueNotAFloat", rep(`"issue":7`, `"issue":7.0`), "target.issue"},
		{"IssueNotAString", rep(`"issue":7`, `"issue":"7"`), "target.issue"},
		{"IssueNotExponent", rep(`"issue":7`, `"issue":7e0`), "target.issue"},
		{"IssueAtMostTwoToThe53", rep(`"issue":7`, `"issue":9007199254740993`), "target.issue"},
		{"IssueAndPRDiffer", rep(`"pr":9`, `"pr":7`), "target.pr"},
		{"HeadLowercaseHex", rep("0123456789abcdef0123456789abcdef01234567", "0123456789ABCDEF0123456789abcdef01234567"), "head"},
		{"HeadFortyDigits", rep("0123456789abcdef0123456789abcdef01234567", "0123456789abcdef"), "head"},
		{"ContractSHA256SixtyFourDigits", rep(strings.Repeat("a", 64), strings.Repeat("a", 63)), "contract_sha256"},
		{"ContractSHA256NotNull", rep(`"`+strings.Repeat("a", 64)+`"`, "null"), "contract_sha256"},
		{"TrailingDocumentRefused", goodTarget + `{}`, "(document)"},
		{"NotAnObject", `[]`, "(document)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseTarget([]byte(c.doc))
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want an *InputError", err)
			}
			if ie.Field != c.field {
				t.Errorf("field = %q, want %q (%v)", ie.Field, c.field, err)
			}
		})
	}
}

func TestParseContractAcceptsTheDocumentedExample(t *testing.T) {
	c, err := ParseContract([]byte(contractJSON()), implID)
	if err != nil {
		t.Fatal(err)
	}
	if c.SpecReviewer.ID != specID || c.CodeReviewer.Login != "code-bot" || c.Counters[CounterPR].Field != "review_comments" || c.InlineEndpoint != InlineEndpointRequired {
		t.Errorf("parsed %+v", c)
	}
}

func TestContractRules(t *testing.T) {
	good := contractJSON()
	rep := func(old, new string) string { return strings.Replace(good, old, new, 1) }
	cases := []struct{ name, doc, field string }{
		{"SchemaIsExact", rep("provider-contract/v1", "provider-contract/v2"), "schema"},
		{"ProviderNameClosed", rep(`"name":"gitea"`, `"name":"github"`), "provider.name"},
		{"APIVersionRequired", rep(`"api_version":"1.25.5"`, `"api_version":""`), "provider.api_version"},
		{"AllThreeCountersDeclared", rep(`,"pr_issue":{"field":"comments","components":["pr_issue_comments"]}`, ``), "counters.pr_issue"},
		{"CounterFieldFromTheClosedVocabulary", rep(`"field":"review_comments"`, `"field":"comments"`), "counters.pr.field"},
		{"CounterComponentFromTheClosedVocabulary", rep(`["inline_records"]`, `["pr_issue_comments"]`), "counters.pr.components[0]"},
		{"CounterComponentsNotEmpty", rep(`["inline_records"]`, `[]`), "counters.pr.components"},
		{"CounterComponentsNotRepeated", rep(`["inline_records"]`, `["inline_records","inline_records"]`), "counters.pr.components[1]"},
		{"RoleIDPositive", rep(`"id":21`, `"id":-21`), "roles.spec_reviewer.id"},
		{"RoleIDDistinctFromActor", rep(`"id":21`, `"id":11`), "roles.spec_reviewer.id"},
		{"RoleIDsDistinct", rep(`"id":22`, `"id":21`), "roles.code_reviewer.id"},
		{"RoleLoginsConsistent", rep(`"login":"code-bot"`, `"login":"Spec-Bot"`), "roles.code_reviewer.login"},
		{"RoleLoginStrict", rep(`"login":"code-bot"`, `"login":"code bot"`), "roles.code_reviewer.login"},
		{"InlineEndpointDeclared", rep(`"inline_endpoint":"required"`, `"inline_endpoint":"optional"`), "inline_endpoint"},
		{"UnknownFieldRefused", rep(`"inline_endpoint"`, `"fallback":true,"inline_endpoint"`), "(document)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseContract([]byte(c.doc), implID)
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want an *InputError", err)
			}
			if ie.Field != c.field {
				t.Errorf("field = %q, want %q (%v)", ie.Field, c.field, err)
			}
		})
	}
}

// TestCounterOnlyDeclarationStillRequiresTheInlineEndpoint: per_review_or_pr_count is a valid
// declaration, and the gate still blocks on a 404 inline endpoint (TestCaptureRules covers the
// 404 with "required"; this covers the fallback declaration).
func TestCounterOnlyDeclarationStillRequiresTheInlineEndpoint(t *testing.T) {
	doc := strings.Replace(contractJSON(), `"inline_endpoint":"required"`, `"inline_endpoint":"per_review_or_pr_count"`, 1)
	if _, err := ParseContract([]byte(doc), implID); err != nil {
		t.Fatal(err)
	}
	w := reworkWorld()
	w.Reviews[0].InlineStatus = 404
	f := newFake(t)
	expectCapture(f, w)
	res, _ := runGate(t, newRun(t, f, targetJSON(w), doc))
	if !hasReason(res.Decision, ReasonInlineEndpointUnavailable) || res.Decision.Decision != DecisionBlocked {
		t.Fatalf("decision %s %v: a counter-only declaration must not permit the fallback", res.Decision.Decision, reasonsOf(res.Decision))
	}
}

func TestMarkers(t *testing.T) {
	w := baseWorld()
	tg := testTarget(w)
	body := RenderSpecReview(tg, "result\n", VerdictApproved, tHead, contractDigest(w))
	m := ParseMarker(body)
	if m.Kind != "spec" || m.Problem != "" || m.Result != SpecResultDigest("result\n") {
		t.Fatalf("spec marker %+v", m)
	}
	if m.Correlation != SpecCorrelation(tg, tHead, contractDigest(w), m.Result) {
		t.Error("correlation does not round-trip")
	}
	// The documented example (docs/rework.md) stays byte-exact.
	const docResult = "9ce693387b7272ae0fdcb4139e3da614419f8e06a65c3188e6aa9f7f3b6589f2"
	if got := SpecResultDigest("Spec review result."); got != docResult {
		t.Errorf("SpecResultDigest(example) = %s, want %s", got, docResult)
	}
	cases := []struct {
		name, body, kind string
		problem          bool
	}{
		{"CodeMarkerOnTheFirstLine", RenderCodeMarker(VerdictApproved, tHead, contractDigest(w)) + "\nok", "code", false},
		{"CodeMarkerNotOnTheFirstLineIsAProblem", "intro\n" + RenderCodeMarker(VerdictApproved, tHead, contractDigest(w)) + "\nok", "none", true},
		{"SpecMarkerWithTrailingLFIsNotLast", body + "\n", "none", true},
		{"SpecMarkerWithoutSeparatorIsAProblem", body[strings.LastIndexByte(body, '\n')+1:], "spec", true},
		{"CRLFBreaksTheCodeMarker", RenderCodeMarker(VerdictApproved, tHead, contractDigest(w)) + "\r\nok", "code", true},
		{"BothMarkersIsAProblem", RenderCodeMarker(VerdictApproved, tHead, contractDigest(w)) + "\n" + body, "code", true},
		{"NoMarker", "plain review", "none", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := ParseMarker(c.body)
			if m.Kind != c.kind || (m.Problem != "") != c.problem {
				t.Errorf("ParseMarker = %+v, want kind %s problem %v", m, c.kind, c.problem)
			}
		})
	}
}
