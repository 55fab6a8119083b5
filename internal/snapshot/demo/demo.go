// Package demo is the embedded example behind `forgectx demo`: a realistic GitHub pull-request
// conversation (an acquisition in the docs/acquisition.md interchange) assembled into an
// entity-context-snapshot v1 tree with no network and no token.
//
// The conversation exercises the spec's main rules: review threads (one resolved, one
// outdated, one open), a dismissed review, a failed check with a log (selected by
// check_log_selection failed) beside a passing, a skipped (never started) and a running check,
// a comment with a planted GitHub token (redacted by the filter), one with invisible and bidi
// characters (stripped and reported), one by a read-only user (omitted: comments
// authorization_failed under the observation threshold triage), and one by a registered bot
// (admitted through the bot registry), plus a run receipt posted by that bot.
package demo

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"os"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

//go:embed acquisition.json profile.json bots.json
var files embed.FS

// Category is the agent category the demo assembles for.
const Category = snapshot.CategoryObservation

// Inputs returns the embedded acquisition, profile and bot registry.
func Inputs() (*acquisition.Acquisition, acquisition.Profile, []snapshot.BotIdentity, error) {
	read := func(name string) []byte {
		b, err := files.ReadFile(name)
		if err != nil { // embedded at build time: cannot fail
			panic(err)
		}
		return b
	}
	acq, err := acquisition.Read(bytes.NewReader(read("acquisition.json")))
	if err != nil {
		return nil, acquisition.Profile{}, nil, fmt.Errorf("demo acquisition: %w", err)
	}
	prof, err := snapshot.ReadProfile(bytes.NewReader(read("profile.json")))
	if err != nil {
		return nil, acquisition.Profile{}, nil, fmt.Errorf("demo profile: %w", err)
	}
	bots, err := snapshot.ReadBots(bytes.NewReader(read("bots.json")))
	if err != nil {
		return nil, acquisition.Profile{}, nil, fmt.Errorf("demo bots: %w", err)
	}
	return acq, prof, bots, nil
}

// Options configure Run.
type Options struct {
	// Out is the directory to write the tree into (created if missing, must be empty). Empty
	// means a fresh private temporary directory, which Result.Close removes.
	Out string
}

// Result is an assembled and written demo tree.
type Result struct {
	Tree *snapshot.Tree
	Dir  string
	// Temporary is true when Dir is the fresh temporary directory Run made (Options.Out was
	// empty): the caller removes it with Close once it no longer needs the tree.
	Temporary bool
}

// Close removes Dir when Run made it (Temporary), so a demo run without an output directory
// leaves nothing behind; a caller-chosen Out is kept.
func (r *Result) Close() error {
	if r == nil || !r.Temporary {
		return nil
	}
	if err := os.RemoveAll(r.Dir); err != nil {
		return fmt.Errorf("demo: remove temporary tree: %w", err)
	}
	return nil
}

// Run assembles the embedded conversation and writes the tree.
func Run(ctx context.Context, o Options) (*Result, error) {
	acq, prof, bots, err := Inputs()
	if err != nil {
		return nil, err
	}
	tree, err := snapshot.Assemble(ctx, acq, snapshot.Config{Profile: prof, Category: Category, Bots: bots, Filter: filter.New(nil)})
	if err != nil {
		return nil, err
	}
	res := &Result{Tree: tree, Dir: o.Out}
	if res.Dir == "" {
		if res.Dir, err = os.MkdirTemp("", "forgectx-demo-"); err != nil {
			return nil, fmt.Errorf("demo: temporary directory: %w", err)
		}
		res.Temporary = true
	}
	if err := tree.WriteDir(res.Dir); err != nil {
		// A half-written temporary tree is nobody's: remove it (a caller's Out is left as is).
		_ = res.Close()
		return nil, err
	}
	return res, nil
}
