package verify

import (
	"context"
	"fmt"
	"maps"
	"sort"

	"github.com/forgectx/forgectx/internal/snapshot/treefs"
)

// Sums returns the SHA-256 of every verified file but index.json, by path: what CheckCopy
// compares a copy of this tree with.
//
// They are the digests verification computed when it compared each file with its manifest
// entry (the same bytes), not a second hash of the tree.
func (s *Snapshot) Sums() treefs.Sums { return maps.Clone(s.sums) }

// CheckCopy confirms that the tree at dir holds exactly the bytes of a tree that was already
// verified (or assembled and self-checked): a root index.json whose SHA-256 is indexSHA256
// and exactly the paths of sums, each with its SHA-256. The walk is Load's (no symlink, hard
// link, special file or foreign directory anywhere, the same bounds), but the files are
// hashed and dropped rather than held, and no document is parsed or schema-validated again:
// every verdict of Load is a function of the tree's bytes, and these are byte for byte the
// bytes that already passed, so they pass again. Staging uses it for the host tree it has just
// written itself (stage.Create, stage.Build); a tree anyone else may have touched is verified
// by Load or Check (stage.Seal verifies the sealed agent-facing copy with Check).
//
// The report lists every difference (index_digest_mismatch, missing_file, extra_file,
// sha256_mismatch, and the walk's violations); the error is non-nil only when the tree could
// not be examined at all.
func CheckCopy(ctx context.Context, dir, indexSHA256 string, sums treefs.Sums, opts Options) (Report, error) {
	var rep Report
	if !isHex64(indexSHA256) {
		return rep, fmt.Errorf("verify: index-sha256 must be 64 lowercase hexadecimal digits")
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	w, err := walkTree(dir, opts, true)
	if err != nil {
		return rep, fmt.Errorf("verify: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	files := w.byPath()
	viol := append([]Violation(nil), w.viol...)
	add := func(p, rule, detail string) { viol = append(viol, newViolation(p, rule, detail)) }
	for p, f := range files {
		rep.Files++
		rep.Bytes += f.size
		if p == "index.json" {
			rep.IndexSHA256 = fmt.Sprintf("%x", f.sum)
			if rep.IndexSHA256 != indexSHA256 {
				add(p, RuleIndexDigest, fmt.Sprintf("on-disk index sha256 %s differs from the retained %s", rep.IndexSHA256, indexSHA256))
			}
			continue
		}
		want, ok := sums[p]
		switch {
		case !ok:
			add(p, RuleExtraFile, "file is not part of the verified tree")
		case want != f.sum:
			add(p, RuleSHA256, "file bytes differ from the verified tree's")
		}
	}
	// A path the walk already reported (a symlink, a special file, too large) is not also
	// missing: the paths with a violation, as a set, so a copy that lost every file is still
	// checked in linear time.
	reported := make(map[string]bool, len(viol))
	for _, v := range viol {
		reported[v.Path] = true
	}
	if _, ok := files["index.json"]; !ok && !reported["index.json"] {
		add("index.json", RuleMissingFile, "the root index is missing")
	}
	missing := make([]string, 0)
	for p := range sums {
		if _, ok := files[p]; !ok && !reported[cleanText(p)] {
			missing = append(missing, p)
		}
	}
	sort.Strings(missing)
	for _, p := range missing {
		add(p, RuleMissingFile, "a file of the verified tree is missing")
	}
	rep.Violations = sortViolations(viol)
	return rep, nil
}
