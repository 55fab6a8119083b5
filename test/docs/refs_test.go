// Package docs checks that the repository is self-contained: no file points at a path outside
// it (a sibling checkout's spec or design notes) and no comment or document cites an entry of
// the project's issue tracker. A clone has neither, so such a reference is a dead end for a
// reader; the contracts are described in docs/contracts.md and the structure in
// docs/architecture.md instead.
package docs

import (
	"bytes"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// root is the repository root (tests run in test/docs).
var root = func() string {
	r, err := filepath.Abs("../..")
	if err != nil {
		panic(err)
	}
	return r
}()

const shared = "sha" + "red"

// outsidePaths are the names of files that live outside the repository: the shared spec and
// design directories, the spec documents by file name, and the design note's title. The
// directory is spelled in two pieces so that this file does not itself name it (a plain search
// of the tree for the path finds nothing).
var outsidePaths = []string{
	".." + "/" + shared + "/", shared + "/spec/", shared + "/design/",
	"entity-context-snapshot-v1.md", "prescript-output-v1.md", "event-excerpt-distillation.md",
	"review-context-enrichment.md", "rework-input-gate.md",
	"architecture map",
}

// issueRef matches a citation of the issue tracker: "issue 8", "Issue #20", "issues #15/#22",
// or a bare "#21" / "(#23)" / "#20.2". A forge entity in an example or fixture is written
// with its repository ("octo-org/Hello-World#7") or as "number 7", which this does not match.
var issueRef = regexp.MustCompile(`(?i)\bissues?\s+#?\d+|(^|[\s(\[;,/])#\d+\b`)

// skipDir reports directories holding data rather than authored text: recorded forge answers,
// golden trees and testdata. Their bytes are inputs and outputs, not prose.
func skipDir(rel string) bool {
	switch rel {
	case ".git", "test/fixtures", "test/golden":
		return true
	}
	return filepath.Base(rel) == "testdata" || filepath.Base(rel) == ".git"
}

// files returns every regular file of the repository (relative, slash-separated, sorted),
// except under skipDir.
func files(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && skipDir(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// TestNoPathOutsideTheRepository: no text file names a path outside the repository (the
// data directories skipped by files included: a fixture note must not point outside either).
func TestNoPathOutsideTheRepository(t *testing.T) {
	var all []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git") {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			all = append(all, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	self := "test/docs/refs_test.go"
	for _, rel := range all {
		if rel == self {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.IndexByte(b, 0) >= 0 {
			continue // binary
		}
		text := joinLines(string(b))
		for _, p := range outsidePaths {
			if strings.Contains(text, p) {
				t.Errorf("%s names %q, which is not in the repository: describe it under docs/ and point there", rel, p)
			}
		}
	}
}

// joinLines folds a text's line breaks and comment leaders into single spaces, so a phrase
// broken across two comment lines is still one phrase.
func joinLines(s string) string {
	s = regexp.MustCompile(`\n[ \t]*(//|#)?[ \t]*`).ReplaceAllString(s, " ")
	return s
}

// TestNoIssueNumbers: Go comments, Markdown prose (outside code) and shell, YAML and
// Dockerfile comments cite no issue of the tracker.
func TestNoIssueNumbers(t *testing.T) {
	for _, rel := range files(t) {
		if rel == "test/docs/refs_test.go" {
			continue // its doc comments quote the patterns
		}
		var texts []string
		switch {
		case strings.HasSuffix(rel, ".go"):
			texts = goComments(t, rel)
		case strings.HasSuffix(rel, ".md"):
			texts = markdownProse(read(t, rel))
		case strings.HasSuffix(rel, ".sh"), strings.HasSuffix(rel, ".yml"), strings.HasSuffix(rel, ".yaml"),
			filepath.Base(rel) == "Dockerfile", strings.HasPrefix(rel, ".ci/"):
			texts = hashComments(read(t, rel))
		default:
			continue
		}
		for _, c := range texts {
			if m := issueRef.FindString(joinLines(c)); m != "" {
				t.Errorf("%s cites an issue (%q) in %q: say what the rule is instead", rel, strings.TrimSpace(m), firstLine(c))
			}
		}
	}
}

func read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// goComments returns the text of every comment of a Go file (string literals are test data).
func goComments(t *testing.T, rel string) []string {
	t.Helper()
	src := []byte(read(t, rel))
	fset := token.NewFileSet()
	f := fset.AddFile(rel, -1, len(src))
	var s scanner.Scanner
	s.Init(f, src, nil, scanner.ScanComments)
	var out []string
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			return out
		}
		if tok == token.COMMENT {
			out = append(out, lit)
		}
	}
}

var inlineCode = regexp.MustCompile("`[^`\n]*`")

// markdownProse returns a Markdown file's paragraphs outside fenced blocks, with inline code
// spans removed (a code span quotes data, such as a `#123` reference a recogniser matches).
func markdownProse(s string) []string {
	var out []string
	var cur strings.Builder
	fence := false
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, inlineCode.ReplaceAllString(cur.String(), ""))
			cur.Reset()
		}
	}
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
			flush()
			continue
		}
		if fence {
			continue
		}
		if strings.TrimSpace(l) == "" {
			flush()
			continue
		}
		cur.WriteString(l + "\n")
	}
	flush()
	return out
}

var hashComment = regexp.MustCompile(`(^|\s)#(\s.*|$)`)

// hashComments returns the comments of a shell, YAML or Dockerfile text: from a # that starts
// a line or follows a blank to the end of the line.
func hashComments(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if m := hashComment.FindString(l); m != "" {
			out = append(out, strings.TrimSpace(m))
		}
	}
	return out
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}
