package reviewrun

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/forgectx/forgectx/internal/review/reviewctx"
)

const (
	testHead   = "1111111111111111111111111111111111111111"
	testTarget = "2222222222222222222222222222222222222222"
	testDigest = "3333333333333333333333333333333333333333333333333333333333333333"
)

func protectedReceipt() *Receipt {
	return &Receipt{
		SchemaVersion: ReceiptSchema, SourceSHA: testHead, TargetSHA: testTarget, PolicyDigest: testDigest,
		TargetState: TargetProtected, ContextMode: reviewctx.ModeEnriched,
		Sources: []ReceiptSource{
			{Source: reviewctx.SourceMetadata, Completeness: reviewctx.Complete, Records: 1},
			{Source: reviewctx.SourceDiscussions, Completeness: reviewctx.Partial, Records: 2, Omitted: 1, Degradations: 1},
		},
		AdmittedMutable: true,
		EvidenceTools:   EvidenceToolUse{Evidence: 2, EvidenceSummary: 1, Search: 1},
		ContextTools:    ContextToolUse{List: 1, Get: 2},
		FailedTool:      FailedTool{State: FailedToolAbsent},
		PublicationDLP:  PublicationDLP{Result: DLPClean, Retained: 3},
		Cleanup:         CleanupComplete,
	}
}

func receiptSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("../../../docs/schemas/review-receipt-v8.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	const url = "https://forgectx.invalid/schemas/review-receipt-v8.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validateSchema(t *testing.T, s *jsonschema.Schema, b []byte) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(v)
}

// jsonFields lists the JSON names of a struct type's fields, recursively, as dotted paths.
func jsonFields(t reflect.Type, prefix string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		p := prefix + name
		out = append(out, p)
		ft := f.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct {
			out = append(out, jsonFields(ft, p+".")...)
		}
	}
	sort.Strings(out)
	return out
}

// schemaFields lists the property names of the compiled schema the same way.
func schemaFields(s *jsonschema.Schema, prefix string) []string {
	var out []string
	for name, sub := range s.Properties {
		p := prefix + name
		out = append(out, p)
		if sub.Ref != nil {
			sub = sub.Ref
		}
		if sub.Items2020 != nil {
			sub = sub.Items2020
		}
		out = append(out, schemaFields(sub, p+".")...)
	}
	sort.Strings(out)
	return out
}

// Spec "Receipt v8 stores only …": the field set is closed. The Go type and the published
// JSON Schema name exactly the same fields, every object of the schema forbids additional
// properties, and a receipt with any extra field fails both the schema and ParseReceipt.
func TestReceiptFieldsClosed(t *testing.T) {
	s := receiptSchema(t)
	got, want := schemaFields(s, ""), jsonFields(reflect.TypeFor[Receipt](), "")
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("schema fields\n%v\nstruct fields\n%v", got, want)
	}
	b, err := protectedReceipt().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := validateSchema(t, s, b); err != nil {
		t.Fatalf("valid receipt fails the schema: %v", err)
	}
	for _, extra := range []func(m map[string]any){
		func(m map[string]any) { m["comment"] = "x" },
		func(m map[string]any) { m["sources"].([]any)[0].(map[string]any)["url"] = "https://x" },
		func(m map[string]any) { m["failed_tool"].(map[string]any)["path"] = "/tmp/x" },
		func(m map[string]any) { m["evidence_tools"].(map[string]any)["shell"] = 1 },
		func(m map[string]any) { m["publication_dlp"].(map[string]any)["value"] = "secret" },
	} {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		extra(m)
		bad, _ := json.Marshal(m)
		if err := validateSchema(t, s, bad); err == nil {
			t.Errorf("schema accepts an extra field: %s", bad)
		}
		if _, err := ParseReceipt(bad); err == nil {
			t.Errorf("ParseReceipt accepts an extra field: %s", bad)
		}
	}
	r, err := ParseReceipt(b)
	if err != nil || !reflect.DeepEqual(r, protectedReceipt()) {
		t.Fatalf("round trip: %v %+v", err, r)
	}
}

// Spec: "Receipt v1-v7 is rejected; ephemeral results have no migration path."
func TestReceiptEarlierVersionsRejected(t *testing.T) {
	b, _ := protectedReceipt().Marshal()
	for v := 1; v <= 7; v++ {
		old := bytes.Replace(b, []byte("ocr.review-receipt/v8"), []byte("ocr.review-receipt/v"+string(rune('0'+v))), 1)
		if _, err := ParseReceipt(old); !errors.Is(err, ErrReceiptVersion) {
			t.Errorf("v%d: %v, want ErrReceiptVersion", v, err)
		}
		body := "summary\n" + receiptMarkerPrefix[:len(receiptMarkerPrefix)-2] + string(rune('0'+v)) + " " + string(old) + " -->"
		if _, err := ReceiptFromBody(body); !errors.Is(err, ErrReceiptVersion) {
			t.Errorf("v%d in a body: %v, want ErrReceiptVersion", v, err)
		}
	}
	for _, v := range []string{"ocr.review-receipt/v9", "ocr.review-receipt/v08", ""} {
		bad := bytes.Replace(b, []byte("ocr.review-receipt/v8"), []byte(v), 1)
		if _, err := ParseReceipt(bad); !errors.Is(err, ErrReceiptVersion) {
			t.Errorf("%q: %v", v, err)
		}
	}
}

// Each closed rule of Validate, named after the field it guards.
func TestReceiptValidateRules(t *testing.T) {
	one := 1
	cases := map[string]func(r *Receipt){
		"source_sha":                   func(r *Receipt) { r.SourceSHA = "main" },
		"target_sha":                   func(r *Receipt) { r.TargetSHA = strings.Repeat("A", 40) },
		"policy_digest":                func(r *Receipt) { r.PolicyDigest = "sha256:" + testDigest },
		"enriched needs policy":        func(r *Receipt) { r.PolicyDigest = "" },
		"target_state":                 func(r *Receipt) { r.TargetState = "maybe" },
		"unprotected enriched":         func(r *Receipt) { r.TargetState = TargetUnprotected },
		"context_mode":                 func(r *Receipt) { r.ContextMode = "full" },
		"sources nil":                  func(r *Receipt) { r.Sources = nil },
		"source name":                  func(r *Receipt) { r.Sources[0].Source = "wiki" },
		"source twice":                 func(r *Receipt) { r.Sources[1].Source = r.Sources[0].Source },
		"completeness":                 func(r *Receipt) { r.Sources[0].Completeness = "fine" },
		"negative":                     func(r *Receipt) { r.Sources[0].Omitted = -1 },
		"summary exceeds":              func(r *Receipt) { r.EvidenceTools.EvidenceSummary = 3 },
		"failed count without state":   func(r *Receipt) { r.FailedTool.Count = &one },
		"verified without count":       func(r *Receipt) { r.FailedTool.State = FailedToolVerified },
		"failed_tool.state":            func(r *Receipt) { r.FailedTool.State = "broken" },
		"publication_dlp.result":       func(r *Receipt) { r.PublicationDLP.Result = "ok" },
		"cleanup":                      func(r *Receipt) { r.Cleanup = "partial" },
		"context tools outside enrich": func(r *Receipt) { r.ContextMode, r.PolicyDigest = reviewctx.ModeMetadata, "" },
	}
	for name, mut := range cases {
		r := protectedReceipt()
		mut(r)
		if err := r.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	r := protectedReceipt()
	r.FailedTool = FailedTool{State: FailedToolVerified, Count: &one}
	if err := r.Validate(); err != nil {
		t.Errorf("verified with count: %v", err)
	}
}

func TestReceiptBlockRoundTrip(t *testing.T) {
	blk, err := ReceiptBlock(protectedReceipt())
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReceiptFromBody("## Review\n\ntext\n\n" + blk + "\n")
	if err != nil || !reflect.DeepEqual(got, protectedReceipt()) {
		t.Fatalf("%v %+v", err, got)
	}
}
