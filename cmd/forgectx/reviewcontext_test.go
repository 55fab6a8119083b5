package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestReviewContextPolicyValidateExample(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"review-context", "policy", "validate", "../../pkg/reviewctx/testdata/policy-v2-example.json"}, nil, &out, &errb, func(string) string { return "" }, func() []string { return nil })
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !regexp.MustCompile(`^version: ocr.review-context-policy/v2\ndigest: sha256:[0-9a-f]{64}\nsources: forge_discussions remediation_threads references\n$`).MatchString(out.String()) {
		t.Fatalf("output %q", out.String())
	}
}

func TestReviewContextPolicyValidateRejectsWithExit2(t *testing.T) {
	f := filepath.Join(t.TempDir(), "p.json")
	if err := os.WriteFile(f, []byte(`{"schema_version":"ocr.review-context-policy/v9"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"review-context", "policy", "validate", f}, nil, &out, &errb, func(string) string { return "" }, func() []string { return nil })
	if code != 2 || out.Len() != 0 || !strings.Contains(errb.String(), "$.schema_version: unknown version") {
		t.Fatalf("exit %d out %q err %q", code, out.String(), errb.String())
	}
	link := filepath.Join(t.TempDir(), "l.json")
	if err := os.Symlink("../../pkg/reviewctx/testdata/policy-v2-example.json", link); err != nil {
		t.Fatal(err)
	}
	errb.Reset()
	if code := run(context.Background(), []string{"review-context", "policy", "validate", link}, nil, &out, &errb, func(string) string { return "" }, func() []string { return nil }); code != 2 || !strings.Contains(errb.String(), "regular file") {
		t.Fatalf("symlink: exit %d %q", code, errb.String())
	}
}
