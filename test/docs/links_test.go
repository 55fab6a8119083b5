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
