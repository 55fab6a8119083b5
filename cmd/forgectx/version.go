package main

import (
	"context"
	"fmt"

	"github.com/forgectx/forgectx/internal/platform/version"
)

func init() {
	register(&command{
		Name:    "version",
		Summary: "print the forgectx version",
		Run: func(ctx context.Context, e *env, args []string) error {
			fs := newFlagSet(e, "version", "version")
			if err := parseFlags(fs, args); err != nil {
				return err
			}
			if fs.NArg() > 0 {
				return usagef("takes no arguments")
			}
			_, err := fmt.Fprintf(e.Stdout, "forgectx %s\n", version.String())
			return err
		},
	})
}
