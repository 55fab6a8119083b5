package ship

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// secretRef is a token taken from a repository secret.
var secretRef = regexp.MustCompile(`^\$\{\{ secrets\.[A-Za-z_][A-Za-z0-9_]* \}\}$`)

// TestForgejoExamplesUseARepositoryAdminToken: Forgejo's automatic Actions token cannot read
// collaborator permissions (docs/forgejo.md, "Actors"), so the Forgejo example workflow and the
// install page's Forgejo usage pass a token from a secret (a repository admin's) instead of the
// default, leave comment-author-id to GET /user, and leave the forge to forgectx's detection.
// The install page and docs/ship.md say why.
func TestForgejoExamplesUseARepositoryAdminToken(t *testing.T) {
	for _, c := range []struct{ name, workflow string }{
		{"examples/forgejo/forgectx.yml", readFile(t, filepath.Join(root, "examples", "forgejo", "forgectx.yml"))},
		{installDoc + " ## Forgejo", installBlock(t, "## Forgejo")},
	} {
		var wf struct {
			Jobs map[string]struct {
				Steps []struct {
					Uses string            `yaml:"uses"`
					With map[string]string `yaml:"with"`
				} `yaml:"steps"`
			} `yaml:"jobs"`
		}
		if err := yaml.Unmarshal([]byte(c.workflow), &wf); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		found := 0
		for _, job := range sortedKeys(wf.Jobs) {
			for _, s := range wf.Jobs[job].Steps {
				if !strings.HasPrefix(s.Uses, "https://github.com/forgectx/forgectx@") {
					continue
				}
				found++
				if !secretRef.MatchString(s.With["token"]) {
					t.Errorf("%s: token = %q, want a repository admin's token from a secret (the automatic token cannot read permissions)", c.name, s.With["token"])
				}
				if v, ok := s.With["comment-author-id"]; ok {
					t.Errorf("%s: comment-author-id %q is set; the admin token's account is found with GET /user", c.name, v)
				}
				if v, ok := s.With["forge"]; ok {
					t.Errorf("%s: forge %q is set; forgectx detects Forgejo Actions", c.name, v)
				}
			}
		}
		if found != 1 {
			t.Errorf("%s: %d forgectx steps, want 1", c.name, found)
		}
	}
	doc := readFile(t, filepath.Join(root, installDoc))
	usage := doc[strings.Index(doc, "\n## Forgejo\n"):strings.Index(doc, "\n## Container image\n")]
	ship := readFile(t, filepath.Join(root, "docs", "ship.md"))
	for _, d := range []struct{ name, text string }{{installDoc + " ## Forgejo", usage}, {"docs/ship.md", ship}} {
		for _, want := range []string{"cannot read collaborator permissions", "repository-admin token"} {
			if !strings.Contains(strings.Join(strings.Fields(d.text), " "), want) {
				t.Errorf("%s does not say %q", d.name, want)
			}
		}
	}
}
