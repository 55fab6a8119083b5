package reviewresult

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const valid = `{
  "schema_version": "ocr.review-result/v1",
  "status": "completed",
  "outcome_message": "Reviewed 3 files; 1 finding.",
  "coverage": {"kind": "complete", "files_total": 3, "files_reviewed": 3, "files_failed": 0},
  "findings": [
    {"severity": "high", "path": "pkg/retry.go", "line": 42, "message": "The loop never stops.",
     "existing_code": "for {\n\tretry()\n}", "suggestion_code": "for i := 0; i < max; i++ {\n\tretry()\n}"},
    {"severity": "info", "path": "README.md", "line": 1, "message": "Typo."}
  ],
  "warnings": ["one file was large"],
  "tool_names": ["ocr_toolkit_evidence"],
  "metadata": {"engine": "ocr", "session_id": "3f1d0c6e"}
}`

func TestDecodeValid(t *testing.T) {
	r, err := Decode([]byte(valid))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) != 2 || r.Findings[0].Line != 42 || r.Findings[1].ExistingCode != "" || r.Coverage.FilesTotal != 3 || r.Metadata["engine"] != "ocr" {
		t.Fatalf("%+v", r)
	}
	b, err := Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := Encode(again)
	if !bytes.Equal(b, b2) {
		t.Error("Encode is not stable across a round trip")
	}
}

// edit replaces the first occurrence of old in the valid document.
func edit(old, new string) string {
	if !strings.Contains(valid, old) {
		panic("fixture does not contain " + old)
	}
	return strings.Replace(valid, old, new, 1)
}

// TestDecodeStrictRules: every rule of the format, each error naming the field path.
func TestDecodeStrictRules(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"unknown top-level field", edit(`"status"`, `"extra": 1, "status"`), "$: unknown field"},
		{"unknown finding field", edit(`"line": 42`, `"line": 42, "url": "x"`), "$.findings[0]: unknown field"},
		{"duplicate key", edit(`"status": "completed"`, `"status": "completed", "status": "failed"`), "$.status: duplicate key"},
		{"missing field", edit(`"warnings": ["one file was large"],`, ``), "$.warnings: required field missing"},
		{"missing finding message", edit(`, "message": "Typo."`, ``), "$.findings[1].message: required field missing"},
		{"null", edit(`"outcome_message": "Reviewed 3 files; 1 finding."`, `"outcome_message": null`), "$.outcome_message: null is not allowed"},
		{"wrong schema version", edit(`ocr.review-result/v1`, `ocr.review-result/v2`), "$.schema_version: not one of the closed values"},
		{"unknown status", edit(`"status": "completed"`, `"status": "done"`), "$.status: not one of"},
		{"unknown severity", edit(`"severity": "high"`, `"severity": "blocker"`), "$.findings[0].severity: not one of"},
		{"line zero", edit(`"line": 42`, `"line": 0`), "$.findings[0].line: out of range"},
		{"line float", edit(`"line": 42`, `"line": 42.0`), "$.findings[0].line: must be an integer in plain decimal form"},
		{"line exponent", edit(`"line": 42`, `"line": 4.2e1`), "$.findings[0].line: must be an integer"},
		{"line string", edit(`"line": 42`, `"line": "42"`), "$.findings[0].line: must be an integer"},
		{"empty path", edit(`"path": "README.md"`, `"path": ""`), "$.findings[1].path: must be 1..1024 bytes"},
		{"long message", edit(`"message": "Typo."`, `"message": "`+strings.Repeat("x", MaxMessageBytes+1)+`"`), "$.findings[1].message: must be 1..8192 bytes"},
		{"too many warnings", edit(`["one file was large"]`, `[`+strings.TrimSuffix(strings.Repeat(`"w",`, maxWarnings+1), ",")+`]`), "$.warnings: more than 50 items"},
		{"warning not a string", edit(`["one file was large"]`, `[1]`), "$.warnings[0]: must be a string"},
		{"findings not an array", edit(`"findings": [`, `"findings": {"a": [`), "$.findings: must be a JSON array"},
		{"metadata key", edit(`"engine": "ocr"`, `"Engine": "ocr"`), "$.metadata: key does not match"},
		{"metadata nested", edit(`"engine": "ocr"`, `"engine": {"x": 1}`), "$.metadata.engine: must be a string"},
		{"coverage counts", edit(`"files_reviewed": 3`, `"files_reviewed": 4`), "$.coverage: files_reviewed + files_failed exceeds files_total"},
		{"complete but failed", edit(`"files_reviewed": 3, "files_failed": 0`, `"files_reviewed": 2, "files_failed": 1`), "$.coverage.kind: complete needs"},
		{"partial but complete", edit(`"kind": "complete"`, `"kind": "partial"`), "$.coverage.kind: partial needs"},
		{"none but reviewed", edit(`"kind": "complete"`, `"kind": "none"`), "$.coverage.kind: none needs"},
		{"negative count", edit(`"files_failed": 0`, `"files_failed": -1`), "$.coverage.files_failed: out of range"},
		{"manifest failure on completed", edit(`"metadata"`, `"manifest_failure": {"path": "a", "reason": "b"}, "metadata"`), "$.manifest_failure: not allowed with status completed"},
		{"manifest failure empty reason", strings.Replace(edit(`"metadata"`, `"manifest_failure": {"path": "a", "reason": ""}, "metadata"`), `"status": "completed"`, `"status": "failed"`, 1), "$.manifest_failure.reason: must be 1..1024 bytes"},
		{"trailing data", valid + "{}", "$: trailing data"},
		{"not an object", `[]`, "$: must be a JSON object"},
		{"invalid UTF-8", edit(`Typo.`, "Typo\xff"), "$: not valid UTF-8"},
		{"deep nesting", edit(`"metadata": {`, `"metadata": {"a": `+strings.Repeat("[", 20)), "must be a string"},
	} {
		_, err := Decode([]byte(tc.doc))
		if !errors.Is(err, errResult) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestDecodeErrorsNeverEchoValues(t *testing.T) {
	doc := edit(`"status"`, `"SECRET-KEY-NAME": "SECRET-VALUE", "status"`)
	_, err := Decode([]byte(doc))
	if err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("%v", err)
	}
	_, err = Decode([]byte(edit(`"severity": "high"`, `"severity": "SECRET-VALUE"`)))
	if err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("%v", err)
	}
}

func TestLoadFileRules(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "result.json")
	os.WriteFile(good, []byte(valid), 0o600)
	if _, err := Load(good); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	os.Symlink(good, link)
	if _, err := Load(link); !errors.Is(err, errResult) {
		t.Errorf("symlink: %v", err)
	}
	if _, err := Load(dir); !errors.Is(err, errResult) {
		t.Errorf("directory: %v", err)
	}
	big := filepath.Join(dir, "big.json")
	os.WriteFile(big, bytes.Repeat([]byte(" "), MaxFileBytes+1), 0o600)
	if _, err := Load(big); err == nil || !strings.Contains(err.Error(), "over the") {
		t.Errorf("oversized: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.json")); !errors.Is(err, errResult) {
		t.Errorf("missing: %v", err)
	}
}

func TestValidateInMemory(t *testing.T) {
	r, _ := Decode([]byte(valid))
	r.Findings[0].Severity = "urgent"
	if err := r.Validate(); err == nil || !strings.Contains(err.Error(), "$.findings[0].severity") {
		t.Errorf("%v", err)
	}
	r, _ = Decode([]byte(valid))
	r.Warnings = nil
	if _, err := Encode(r); err == nil {
		t.Error("encoded a result without warnings")
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(valid))
	f.Add([]byte(`{"schema_version":"ocr.review-result/v1"}`))
	f.Add([]byte(`{"findings":[{"line":1e9}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Decode(b)
		if err != nil {
			if !errors.Is(err, errResult) {
				t.Fatalf("error does not wrap ErrResult: %v", err)
			}
			return
		}
		// whatever decodes re-encodes and decodes to the same bytes
		enc, err := Encode(r)
		if err != nil {
			t.Fatalf("decoded result does not encode: %v", err)
		}
		r2, err := Decode(enc)
		if err != nil {
			t.Fatalf("encoded result does not decode: %v", err)
		}
		enc2, _ := Encode(r2)
		if !bytes.Equal(enc, enc2) {
			t.Fatal("encoding not stable")
		}
	})
}
