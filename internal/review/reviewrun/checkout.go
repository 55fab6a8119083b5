package reviewrun

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
)

// The checkout's credentials (docs/review-context.md, "The checkout's credentials"). The engine
// works in the checkout under review, and GitLab's checkout keeps the job token in the remote
// URL of .git/config for the job's lifetime. For the engine's lifetime forgectx replaces that
// file with a copy whose URLs carry no user information and which has no http.extraHeader
// line, and puts the original bytes back afterwards (on every path that returns; a SIGKILL
// leaves the stripped copy, which fails closed). A configuration that still carries a withheld
// value after stripping stops the run before the engine starts.

// urlUserinfo matches the user information of a URL ("scheme://user[:password]@").
var urlUserinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^/@\s"]+@`)

// stripGitConfig returns b without URL user information and without extraHeader lines (any
// section: http.extraHeader, http.<url>.extraHeader), and whether anything changed.
func stripGitConfig(b []byte) ([]byte, bool) {
	lines := strings.SplitAfter(string(b), "\n")
	var out strings.Builder
	for _, l := range lines {
		key, _, _ := strings.Cut(strings.TrimSpace(l), "=")
		if strings.EqualFold(strings.TrimSpace(key), "extraheader") {
			continue
		}
		out.WriteString(urlUserinfo.ReplaceAllString(l, "$1"))
	}
	s := []byte(out.String())
	return s, !bytes.Equal(s, b)
}

// gitConfigPath is the configuration file of the repository at dir: .git/config, or for a
// .git file (worktree, submodule) the config of its gitdir's common directory; "" without one.
func gitConfigPath(dir string) string {
	dotgit := filepath.Join(dir, ".git")
	fi, err := os.Lstat(dotgit)
	switch {
	case err != nil:
		return ""
	case fi.IsDir():
		return filepath.Join(dotgit, "config")
	case !fi.Mode().IsRegular():
		return ""
	}
	b, err := os.ReadFile(dotgit)
	if err != nil {
		return ""
	}
	gd, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return ""
	}
	gd = strings.TrimSpace(gd)
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(dir, gd)
	}
	if c, err := os.ReadFile(filepath.Join(gd, "commondir")); err == nil {
		cd := strings.TrimSpace(string(c))
		if !filepath.IsAbs(cd) {
			cd = filepath.Join(gd, cd)
		}
		gd = cd
	}
	return filepath.Join(gd, "config")
}

// checkoutGuard holds a stripped configuration's original bytes until restore.
type checkoutGuard struct {
	path string
	orig []byte
	mode os.FileMode
	uid  int
	gid  int
}

// ErrCheckoutCredential is the run failure of a checkout configuration that still carries a
// withheld value after stripping.
var ErrCheckoutCredential = errors.New("reviewrun: the checkout's git configuration carries a withheld credential that cannot be stripped; the engine was not started")

// stripCheckout strips the git configuration of dir for the engine's lifetime (nil guard: no
// configuration or nothing to strip). withheld are the values the engine must never see.
func stripCheckout(dir string, withheld []string) (*checkoutGuard, error) {
	p := gitConfigPath(dir)
	if p == "" {
		return nil, nil
	}
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, nil
	}
	orig, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("reviewrun: checkout git configuration: %w", errors.Unwrap(err))
	}
	stripped, changed := stripGitConfig(orig)
	if carries(string(stripped), withheld) {
		return nil, ErrCheckoutCredential
	}
	if !changed {
		return nil, nil
	}
	g := &checkoutGuard{path: p, orig: orig, mode: fi.Mode().Perm(), uid: -1, gid: -1}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		g.uid, g.gid = int(st.Uid), int(st.Gid)
	}
	if err := g.write(stripped); err != nil {
		return nil, err
	}
	return g, nil
}

// write replaces the configuration atomically (temporary file in the same directory, the
// original's mode and owner, rename).
func (g *checkoutGuard) write(b []byte) error {
	tmp := g.path + ".forgectx-review"
	_ = os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, g.mode)
	if err != nil {
		return fmt.Errorf("reviewrun: checkout git configuration: %w", errors.Unwrap(err))
	}
	_, werr := f.Write(b)
	if err := f.Chmod(g.mode); werr == nil {
		werr = err
	}
	if g.uid >= 0 && os.Geteuid() == 0 {
		if err := f.Chown(g.uid, g.gid); werr == nil {
			werr = err
		}
	}
	if err := f.Close(); werr == nil {
		werr = err
	}
	if werr == nil {
		werr = os.Rename(tmp, g.path)
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("reviewrun: checkout git configuration: %w", werr)
	}
	return nil
}

// restore puts the original configuration back (nil guard: nothing to do).
func (g *checkoutGuard) restore() error {
	if g == nil {
		return nil
	}
	return g.write(g.orig)
}
