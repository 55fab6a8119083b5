package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/review/reviewctx"
	"github.com/forgectx/forgectx/internal/review/reviewmcp"
	"github.com/forgectx/forgectx/test/verifytest"
)

// TestMCPServesEvidenceToolsOverStdio speaks line-delimited JSON-RPC to the command, one
// request at a time (a client keeps stdin open until it has its answers).
func TestMCPServesEvidenceToolsOverStdio(t *testing.T) {
	dir := verifytest.Write(t, verifytest.Demo)
	usage := filepath.Join(t.TempDir(), "usage.json")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		args := asRootAgent([]string{"mcp", "--mode", "constrained", "--snapshot", dir, "--index-sha256", verifytest.IndexSHA256[verifytest.Demo], "--usage", usage})
		code := run(context.Background(), args, inR, outW, &errb, func(string) string { return "" }, func() []string { return nil })
		outW.Close()
		done <- code
	}()
	lines := bufio.NewScanner(outR)
	lines.Buffer(nil, 1<<20)
	ask := func(req string) string {
		if _, err := io.WriteString(inW, req+"\n"); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(req, `"id"`) && !lines.Scan() {
			t.Fatalf("no answer to %s", req)
		}
		return lines.Text()
	}
	init := ask(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if !strings.Contains(init, `"protocolVersion":"2025-06-18"`) {
		t.Errorf("initialize answer: %s", init)
	}
	ask(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	list := ask(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	for _, name := range []string{`"ocr_toolkit_evidence"`, `"ocr_toolkit_evidence_search"`, `"ocr_toolkit_evidence_coverage"`} {
		if !strings.Contains(list, name) {
			t.Errorf("tools/list lacks %s", name)
		}
	}
	if strings.Contains(list, "context_list") {
		t.Error("constrained mode lists context tools")
	}
	sum := ask(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ocr_toolkit_evidence","arguments":{"action":"summary"}}}`)
	if !strings.Contains(sum, "change_proposal") {
		t.Errorf("summary answer: %s", sum)
	}
	inW.Close()
	if code := <-done; code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	u, err := reviewmcp.ReadUsage(usage)
	if err != nil || u.EvidenceSummary != 1 {
		t.Errorf("usage %+v %v", u, err)
	}
}

func TestMCPRefusesBeforeServing(t *testing.T) {
	dir := verifytest.Write(t, verifytest.Demo)
	os.WriteFile(filepath.Join(dir, "extra.txt"), []byte("x"), 0o644)
	usage := filepath.Join(t.TempDir(), "usage.json")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "--mode", "constrained", "--snapshot", dir, "--usage", usage}, "snapshot verification failed"},
		{[]string{"mcp", "--mode", "enriched", "--snapshot", dir, "--usage", usage}, "mode enriched needs"},
		{[]string{"mcp", "--mode", "both", "--snapshot", dir, "--usage", usage}, "mode: must be constrained or enriched"},
		{[]string{"mcp", "--mode", "constrained", "--snapshot", dir}, "usage"},
	} {
		code, out, errOut := runCLI(t, nil, "", tc.args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, tc.want) || !strings.HasPrefix(errOut, "forgectx: ") {
			t.Errorf("%v: exit %d out %q err %q, want %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

// TestMCPCommandArgsRoundTrip: the arguments reviewmcp.Config.CommandArgs builds for an
// engine configuration are accepted by the command (enriched, every flag).
func TestMCPCommandArgsRoundTrip(t *testing.T) {
	now := time.Now().UTC()
	h, _ := reviewctx.NewHandle()
	c := reviewctx.Content{Descriptor: "d", Text: "t"}
	d, _ := c.Digest()
	pd := strings.Repeat("ab", 32)
	exp := now.Add(time.Hour).Format(time.RFC3339)
	st := &reviewctx.Store{SchemaVersion: reviewctx.StoreSchema, RunID: "run-x", Mode: reviewctx.ModeEnriched, PolicyDigest: pd,
		PolicySHA: strings.Repeat("1", 40), ReviewedHead: strings.Repeat("2", 40), CreatedAt: now.Format(time.RFC3339), ExpiresAt: exp,
		Sources: []reviewctx.SourceState{{Source: reviewctx.SourceReferences, Completeness: reviewctx.Complete, Records: 1, Reasons: []string{}}},
		Records: []reviewctx.Record{{Handle: h, Source: reviewctx.SourceReferences, Binding: reviewctx.Binding{RunID: "run-x", PolicyDigest: pd,
			CanonicalObject: "a/issue/1", ResourceClass: reviewctx.ResourceIssue, Projections: reviewctx.Projections{Retrieve: []string{"text"}, Model: []string{"text"}, Publish: []string{}, Retain: []string{}},
			Version: "1", Digest: d, ExpiresAt: exp}, Content: c}}}
	storeDir := filepath.Join(t.TempDir(), "ctx")
	id, err := reviewctx.CommitStore(storeDir, st)
	if err != nil {
		t.Fatal(err)
	}
	cfg := reviewmcp.Config{Mode: reviewmcp.ModeEnriched, SnapshotDir: verifytest.Write(t, verifytest.Demo), IndexSHA256: verifytest.IndexSHA256[verifytest.Demo],
		StoreDir: storeDir, RunID: "run-x", PolicyDigest: pd, StoreSHA256: id.SHA256, UsagePath: filepath.Join(t.TempDir(), "u.json")}
	code, _, errOut := runCLI(t, nil, "", cfg.CommandArgs()...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if u, err := reviewmcp.ReadUsage(cfg.UsagePath); err != nil || u.Mode != reviewmcp.ModeEnriched {
		t.Errorf("usage %+v %v", u, err)
	}
}

// TestMCPImmutableViewCommandArgsRoundTrip: the arguments of a metadata-mode engine entry
// (immutable view, metadata projection pinned by its digest) are accepted by the command, and
// a metadata file outside the immutable view is refused before serving.
func TestMCPImmutableViewCommandArgsRoundTrip(t *testing.T) {
	b, err := reviewmcp.EncodeMetadata(reviewmcp.MetadataDoc{Descriptor: "merge request metadata (untrusted)", Text: "Title: t", Completeness: "complete"})
	if err != nil {
		t.Fatal(err)
	}
	meta := filepath.Join(t.TempDir(), "metadata.json")
	if err := os.WriteFile(meta, b, 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	cfg := reviewmcp.Config{Mode: reviewmcp.ModeConstrained, SnapshotDir: verifytest.Write(t, verifytest.Demo), IndexSHA256: verifytest.IndexSHA256[verifytest.Demo],
		View: reviewmcp.ViewImmutable, MetadataPath: meta, MetadataSHA256: hex.EncodeToString(sum[:]), UsagePath: filepath.Join(t.TempDir(), "u.json")}
	if code, _, errOut := runCLI(t, nil, "", cfg.CommandArgs()...); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	cfg.View = reviewmcp.ViewSnapshot
	if code, _, errOut := runCLI(t, nil, "", cfg.CommandArgs()...); code != exitUsage || !strings.Contains(errOut, "metadata:") {
		t.Fatalf("exit %d: %s, want a refusal naming metadata", code, errOut)
	}
}
