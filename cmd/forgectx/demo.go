package main

import (
	"context"
	"fmt"
	"os"

	"github.com/forgectx/forgectx/pkg/snapshot/demo"
)

func init() {
	register(&command{
		Name:    "demo",
		Summary: "assemble the embedded pull-request conversation into a snapshot tree (no network, no token)",
		Run:     runDemo,
	})
}

// demoOptions are the `forgectx demo` flags.
type demoOptions struct {
	Out string
}

func runDemo(ctx context.Context, e *env, args []string) error {
	var o demoOptions
	fs := newFlagSet(e, "demo", "demo [--out DIR]")
	fs.StringVar(&o.Out, "out", "", "directory to write the tree into (created; must be empty); default: a fresh temporary directory")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	// Same rules and exit code as forgectx snapshot: an --out that is not a real directory
	// (a file, a symlink, a device) or cannot be created, or is not empty, is a usage error.
	if err := checkOutputDir("--out", o.Out); err != nil {
		return err
	}
	if o.Out != "" {
		if ents, err := os.ReadDir(o.Out); err == nil && len(ents) > 0 {
			return usagef("--out %s: directory is not empty", o.Out)
		}
	}
	res, err := demo.Run(ctx, demo.Options{Out: o.Out})
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	e.Log.Info().Str("index_sha256", res.Tree.IndexSHA256).Int("files", res.Tree.Summary.Files).Msg("demo snapshot written")
	if err := res.Tree.Summary.WriteText(e.Stdout); err != nil {
		return err
	}
	fmt.Fprintf(e.Stdout, "tree: %s\n", res.Dir)
	return nil
}
