package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"

	"github.com/forgectx/forgectx/internal/snapshot/verify"
)

func init() {
	register(&command{
		Name:    "verify",
		Summary: "verify an entity-context-snapshot v1 tree (manifest, digests, schemas, links and special files)",
		Run:     runVerifyCmd,
	})
}

// verifyOptions is what `forgectx verify` parses its flags into.
type verifyOptions struct {
	Dir         string
	IndexSHA256 string
	Format      string
	// ProducerCheck accepts a tree of any filter_version (verify.Options.ProducerCheck).
	ProducerCheck bool
}

func runVerifyCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "verify", "verify DIR [--index-sha256 HEX] [--producer-check] [--format text|json]")
	var o verifyOptions
	fs.StringVar(&o.IndexSHA256, "index-sha256", "", "retained SHA-256 (`HEX`) of the assembled root index.json; the on-disk index must match it")
	fs.StringVar(&o.Format, "format", "text", "output format: text or json")
	fs.BoolVar(&o.ProducerCheck, "producer-check", false, "conformance check of another v1 producer's tree: every rule, any filter_version")
	var err error
	if o.Dir, err = parseDirArg(fs, args); err != nil {
		return err
	}
	if o.Format != "text" && o.Format != "json" {
		return usagef("--format must be text or json")
	}
	if o.IndexSHA256, err = digestFlag(o.IndexSHA256); err != nil {
		return err
	}
	rep, err := verify.Dir(ctx, o.Dir, verify.Options{IndexSHA256: o.IndexSHA256, ProducerCheck: o.ProducerCheck})
	if err != nil {
		return fmt.Errorf("verify %s: %w", o.Dir, err)
	}
	if o.Format == "json" {
		if rep.Violations == nil {
			rep.Violations = []verify.Violation{}
		}
		b, err := json.Marshal(rep)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.Stdout, "%s\n", b)
	} else if err := rep.WriteText(e.Stdout); err != nil {
		return err
	}
	e.Log.Info().Int("files", rep.Files).Int64("bytes", rep.Bytes).Int("violations", len(rep.Violations)).Str("index_sha256", rep.IndexSHA256).Msg("verify")
	if !rep.OK() {
		return &exitError{Code: exitFailed, Err: fmt.Errorf("verify %s: %d violation(s)", o.Dir, len(rep.Violations))}
	}
	return nil
}

// digestFlag checks an --index-sha256 value: empty, or 64 hexadecimal digits (either case;
// returned in lowercase, the form digests are compared in). Anything else is a usage error.
func digestFlag(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	l := strings.ToLower(v)
	if len(l) != 64 || strings.Trim(l, "0123456789abcdef") != "" {
		return "", usagef("--index-sha256 must be 64 hexadecimal digits (a SHA-256)")
	}
	return l, nil
}

// parseDirArg parses the flags of a command that takes exactly one positional, the snapshot
// DIR (verify, prompt), and returns it; anything else is a usage error.
func parseDirArg(fs *flag.FlagSet, args []string) (string, error) {
	pos, err := parseWithPositionals(fs, args)
	if err != nil {
		return "", err
	}
	if len(pos) != 1 || pos[0] == "" {
		return "", usagef("want exactly one DIR")
	}
	return pos[0], nil
}

// parseWithPositionals parses flags that may appear before, between or after positional
// arguments (`verify DIR --index-sha256 X`), which the standard flag package stops at.
func parseWithPositionals(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(pos) > 16 { // bounded: a command takes a handful of positionals
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
