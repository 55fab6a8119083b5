package reviewctx

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"sort"
	"unicode/utf8"

	gl "gitlab.com/gitlab-org/api/client-go"

	glforge "github.com/forgectx/forgectx/internal/forge/gitlab"
)

// Repository Rules are the review guidance a repository gives the engine: the Markdown files
// directly under rulesDir. They are read only at the captured target SHA, as bounded regular
// Git blobs, and handed to the engine as untrusted guidance outside the checkout; a
// source-branch or working-tree copy has no authority. They cannot enable a tool, an
// acquisition, a suppression, a posting permission or an approval: nothing in forgectx reads
// them for a decision.
const (
	// rulesDir is the fixed rules directory at the target SHA.
	rulesDir = ".opencodereview/rules"
	// maxRuleFiles, MaxRuleBytes and maxRulesBytes bound the rule files, one file and all of
	// them together.
	maxRuleFiles  = 16
	MaxRuleBytes  = 16 << 10
	maxRulesBytes = 64 << 10
)

// ErrRules wraps every refused rules entry (exit 2, like a policy violation).
var ErrRules = errors.New("reviewctx: repository rules")

// RuleFile is one repository rule file read at the target SHA.
type RuleFile struct {
	Name    string // base name, [A-Za-z0-9][A-Za-z0-9._-]*\.md
	Content []byte
}

var ruleNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}\.md$`)

// RuleFiles lists rulesDir at sha and reads every *.md entry by blob ID, sorted by name. A
// missing directory is no rules. An entry that is a symlink, a submodule or not a regular
// blob, more than maxRuleFiles files, a file over MaxRuleBytes, all over maxRulesBytes, a
// listing over its page bound, or invalid UTF-8 fails closed (ErrRules). Other file types
// (not *.md) and subdirectories are ignored: they are not rules.
func (g *GitLab) RuleFiles(ctx context.Context, sha string) ([]RuleFile, error) {
	if !shaRE.MatchString(sha) {
		return nil, fmt.Errorf("%w: target sha malformed", ErrRules)
	}
	dir := rulesDir
	tree, err := g.tree(ctx, dir, sha)
	if err != nil {
		var er *gl.ErrorResponse
		if errors.Is(err, gl.ErrNotFound) || (errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == 404) {
			return nil, nil
		}
		return nil, fmt.Errorf("reviewctx: gitlab: rules tree: %w", err)
	}
	if tree.NextDeclared {
		return nil, fmt.Errorf("%w: %s has more entries than the listing bound", ErrRules, rulesDir)
	}
	var entries []*gl.TreeNode
	for _, n := range tree.Rows {
		if n == nil || path.Ext(n.Name) != ".md" {
			continue
		}
		if err := checkRuleEntry(n); err != nil {
			return nil, err
		}
		entries = append(entries, n)
	}
	if len(entries) > maxRuleFiles {
		return nil, fmt.Errorf("%w: %s: more than %d rule files", ErrRules, rulesDir, maxRuleFiles)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	var out []RuleFile
	total := 0
	for i, n := range entries {
		if i > 0 && entries[i-1].Name == n.Name {
			return nil, fmt.Errorf("%w: %s/%s: listed twice", ErrRules, rulesDir, n.Name)
		}
		b, err := g.ruleBlob(ctx, n)
		if err != nil {
			return nil, err
		}
		if total += len(b); total > maxRulesBytes {
			return nil, fmt.Errorf("%w: %s: over the %d-byte bound in total", ErrRules, rulesDir, maxRulesBytes)
		}
		out = append(out, RuleFile{Name: n.Name, Content: b})
	}
	return out, nil
}

// checkRuleEntry accepts only a regular blob with a well-formed name, path and ID.
func checkRuleEntry(n *gl.TreeNode) error {
	p := rulesDir + "/" + n.Name
	switch {
	case n.Path != p || !ruleNameRE.MatchString(n.Name):
		return fmt.Errorf("%w: %s: entry name or path malformed", ErrRules, rulesDir)
	case n.Type == "commit" || n.Mode == "160000":
		return fmt.Errorf("%w: %s: is a submodule, not a regular blob", ErrRules, p)
	case n.Mode == "120000":
		return fmt.Errorf("%w: %s: is a symlink, not a regular blob", ErrRules, p)
	case n.Type != "blob" || (n.Mode != "100644" && n.Mode != "100755"):
		return fmt.Errorf("%w: %s: is not a regular blob", ErrRules, p)
	case !shaRE.MatchString(n.ID):
		return fmt.Errorf("%w: %s: blob id malformed", ErrRules, p)
	}
	return nil
}

// ruleBlob reads one rule blob by ID within MaxRuleBytes; it must be valid UTF-8.
func (g *GitLab) ruleBlob(ctx context.Context, n *gl.TreeNode) ([]byte, error) {
	b, err := g.svc.Repository.Blob(ctx, g.project, n.ID, MaxRuleBytes)
	if errors.Is(err, glforge.ErrOverBound) {
		return nil, fmt.Errorf("%w: %s/%s: over the %d-byte bound", ErrRules, rulesDir, n.Name, MaxRuleBytes)
	}
	if err != nil {
		return nil, fmt.Errorf("reviewctx: gitlab: rule blob: %w", err)
	}
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("%w: %s/%s: invalid UTF-8", ErrRules, rulesDir, n.Name)
	}
	return b, nil
}
