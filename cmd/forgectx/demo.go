package main

import (
	"context"
	"fmt"
	"os"

	"github.com/forgectx/forgectx/internal/snapshot/demo"
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
	fs.StringVar(&o.Out, "out", "", "directory to write the tree into and keep (created; must be empty); default: a temporary directory, removed before exit")
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
		_ = res.Close()
		return err
	}
	if !res.Temporary {
		fmt.Fprintf(e.Stdout, "tree: %s\n", res.Dir)
		return nil
	}
	// Without --out the tree only backs the summary: a first try must leave nothing in the
	// temporary directory.
	if err := res.Close(); err != nil {
		return err
	}
	fmt.Fprintf(e.Stdout, "tree: removed (it was written to a temporary directory; --out DIR keeps it)\n")
	return nil
}
