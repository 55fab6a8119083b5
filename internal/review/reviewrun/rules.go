package reviewrun

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/forgectx/forgectx/internal/review/reviewctx"
)

// Repository Rules (docs/review-context.md, "Repository Rules"): the rule files are read at
// the captured target SHA (reviewctx.GitLab.RuleFiles) and the engine gets exactly those —
// in the session's rules directory ($FORGECTX_REVIEW_RULES) and, for the engine's lifetime,
// in the checkout's own .opencodereview/rules, whose source-branch copy is moved aside and
// put back afterwards. A source branch that edits a rule changes nothing the engine is given.

// writeRules writes the target's rule files into dir (0600 files of the session's owner or,
// in a root run, of the engine identity through own).
func writeRules(dir string, rules []reviewctx.RuleFile, own func(string) error) error {
	for _, f := range rules {
		p := filepath.Join(dir, f.Name)
		if err := os.WriteFile(p, f.Content, 0o600); err != nil {
			return fmt.Errorf("reviewrun: rules: %w", err)
		}
		if err := own(p); err != nil {
			return fmt.Errorf("reviewrun: rules: %w", err)
		}
	}
	return nil
}

// rulesOverlay is the checkout's rules directory replaced by the target's files.
type rulesOverlay struct {
	dst, aside    string // the checkout's rules directory; where its source copy waits
	createdParent string // .opencodereview, when the overlay created it
}

// overlayRules moves the checkout's .opencodereview/rules (if any) aside — into .git when it
// is a directory, else next to it under a dot-name — and writes the target's rule files in
// its place (directory 0755, files 0644: rules are repository content the engine identity
// must read). With no target rules the checkout simply has no rules directory.
func overlayRules(workDir string, rules []reviewctx.RuleFile) (*rulesOverlay, error) {
	parent := filepath.Join(workDir, ".opencodereview")
	o := &rulesOverlay{dst: filepath.Join(parent, "rules")}
	// The source branch controls the checkout: a .opencodereview that is a symlink (or any
	// non-directory) could point the overlay's renames and writes outside it.
	if fi, err := os.Lstat(parent); err == nil && !fi.IsDir() {
		return nil, errors.New("reviewrun: rules: the checkout's .opencodereview is not a directory (a symlink is refused)")
	}
	if _, err := os.Lstat(o.dst); err == nil {
		base := filepath.Join(workDir, ".git")
		if fi, err := os.Lstat(base); err != nil || !fi.IsDir() {
			base = parent
		}
		aside, err := os.MkdirTemp(base, ".forgectx-source-rules-")
		if err != nil {
			return nil, fmt.Errorf("reviewrun: rules: %w", err)
		}
		if err := os.Rename(o.dst, filepath.Join(aside, "rules")); err != nil {
			os.Remove(aside)
			return nil, fmt.Errorf("reviewrun: rules: moving the source-branch copy aside: %w", err)
		}
		o.aside = aside
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("reviewrun: rules: %w", err)
	}
	if len(rules) == 0 {
		return o, nil
	}
	if _, err := os.Lstat(parent); errors.Is(err, os.ErrNotExist) {
		if err := os.Mkdir(parent, 0o755); err != nil {
			return o, o.fail(err)
		}
		o.createdParent = parent
	}
	if err := os.Mkdir(o.dst, 0o755); err != nil {
		return o, o.fail(err)
	}
	for _, f := range rules {
		if err := os.WriteFile(filepath.Join(o.dst, f.Name), f.Content, 0o644); err != nil {
			return o, o.fail(err)
		}
	}
	return o, nil
}

func (o *rulesOverlay) fail(err error) error {
	if rerr := o.restore(); rerr != nil {
		return fmt.Errorf("reviewrun: rules: %w (and the checkout's rules could not be restored: %v)", err, rerr)
	}
	return fmt.Errorf("reviewrun: rules: %w", err)
}

// restore removes the target's files and puts the source-branch copy back.
func (o *rulesOverlay) restore() error {
	if o == nil {
		return nil
	}
	if err := os.RemoveAll(o.dst); err != nil {
		return err
	}
	if o.aside != "" {
		if err := os.Rename(filepath.Join(o.aside, "rules"), o.dst); err != nil {
			return err
		}
		if err := os.Remove(o.aside); err != nil {
			return err
		}
		o.aside = ""
	}
	if o.createdParent != "" {
		_ = os.Remove(o.createdParent) // only when empty
		o.createdParent = ""
	}
	return nil
}
