package docs

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mdLink matches an inline Markdown link target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^()\s]+)\)`)

// TestRelativeLinksResolve: every relative link of README.md and docs/ (outside code) names a
// file or directory of the repository, so content that moved between pages is still reachable.
func TestRelativeLinksResolve(t *testing.T) {
	for _, rel := range files(t) {
		if !strings.HasSuffix(rel, ".md") || (rel != "README.md" && !strings.HasPrefix(rel, "docs/")) {
			continue
		}
		for _, para := range markdownProse(read(t, rel)) {
			for _, m := range mdLink.FindAllStringSubmatch(para, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				target, _, _ = strings.Cut(target, "#")
				p := path.Join(path.Dir(rel), target)
				if strings.HasPrefix(p, "../") {
					t.Errorf("%s links %q, outside the repository", rel, m[1])
					continue
				}
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err != nil {
					t.Errorf("%s links %q: %v", rel, m[1], err)
				}
			}
		}
	}
}

// TestDocsIndexListsEveryPage: docs/README.md, the index, links every page under docs/.
func TestDocsIndexListsEveryPage(t *testing.T) {
	index := read(t, "docs/README.md")
	for _, rel := range files(t) {
		if !strings.HasPrefix(rel, "docs/") || !strings.HasSuffix(rel, ".md") || rel == "docs/README.md" {
			continue
		}
		if !strings.Contains(index, "("+strings.TrimPrefix(rel, "docs/")+")") {
			t.Errorf("docs/README.md does not link %s", rel)
		}
	}
}

// docRef matches a comment's pointer at a repository page, with the section it names when a
// quoted heading follows: docs/contracts.md, "Canonical bytes".
var docRef = regexp.MustCompile(`\b(docs/[A-Za-z0-9_./-]+\.md)(?:,\s*(?:sections?\s+)?"([^"]+)")?`)

// TestCodeCommentsPointAtExistingDocs: every docs/….md a Go comment names exists, and a quoted
// section after it is (part of) a heading of that page, so
// the pointers that replaced the out-of-repository citations stay true when pages move.
func TestCodeCommentsPointAtExistingDocs(t *testing.T) {
	headings := map[string][]string{}
	for _, rel := range files(t) {
		if !strings.HasSuffix(rel, ".go") {
			continue
		}
		for _, c := range goComments(t, rel) {
			for _, m := range docRef.FindAllStringSubmatch(joinLines(c), -1) {
				page := strings.TrimSuffix(m[1], ".")
				hs, ok := headings[page]
				if !ok {
					b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
					if err != nil {
						t.Errorf("%s names %s: %v", rel, page, err)
						headings[page] = nil
						continue
					}
					for _, l := range strings.Split(string(b), "\n") {
						if strings.HasPrefix(l, "#") {
							hs = append(hs, strings.ReplaceAll(strings.TrimSpace(strings.TrimLeft(l, "#")), "`", ""))
						}
					}
					headings[page] = hs
				}
				if m[2] == "" || hs == nil {
					continue
				}
				found := false
				for _, h := range hs {
					found = found || strings.Contains(strings.ToLower(h), strings.ToLower(m[2]))
				}
				if !found {
					t.Errorf("%s names section %q of %s, which has no such heading", rel, m[2], page)
				}
			}
		}
	}
}
