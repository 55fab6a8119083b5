package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/forgectx/forgectx/pkg/reviewctx"
)

// reviewContextPolicyOptions are the arguments of `forgectx review-context policy validate`.
type reviewContextPolicyOptions struct {
	File string
}

func init() {
	register(&command{
		Name:    "review-context",
		Summary: "review-context enrichment: 'policy validate FILE' checks a policy; 'acquire' commits the private context store for one GitLab MR",
		Run: func(ctx context.Context, e *env, args []string) error {
			switch {
			case len(args) >= 1 && args[0] == "policy":
				return reviewContextPolicyCmd(ctx, e, args[1:])
			case len(args) >= 1 && args[0] == "acquire":
				return reviewContextAcquireCmd(ctx, e, args[1:])
			case len(args) >= 1 && (args[0] == "--help" || args[0] == "-h"):
				fmt.Fprintln(e.Stderr, "Usage: forgectx review-context policy validate FILE\n       forgectx review-context acquire [flags]")
				return nil
			}
			return usagef("expected 'policy validate FILE' or 'acquire'")
		},
	})
}

func reviewContextPolicyCmd(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "validate" {
		return usagef("expected 'policy validate FILE'")
	}
	fs := newFlagSet(e, "review-context policy validate", "review-context policy validate FILE")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("policy validate takes exactly one FILE")
	}
	return runReviewContextPolicyValidate(ctx, e, reviewContextPolicyOptions{File: fs.Arg(0)})
}

// runReviewContextPolicyValidate prints the version, digest and sources of a valid policy, or
// the first violation (exit 2: the policy is configuration).
func runReviewContextPolicyValidate(_ context.Context, e *env, o reviewContextPolicyOptions) error {
	p, err := reviewctx.ReadPolicyFile(o.File)
	if err != nil {
		if errors.Is(err, reviewctx.ErrPolicy) {
			return &exitError{Code: exitUsage, Err: err}
		}
		return err
	}
	fmt.Fprintf(e.Stdout, "version: %s\ndigest: sha256:%s\nsources: %s\n", p.SchemaVersion, p.Digest, strings.Join(p.Sources(), " "))
	return nil
}

func reviewContextAcquireCmd(context.Context, *env, []string) error {
	return usagef("acquire: not built yet")
}
