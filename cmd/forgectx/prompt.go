package main

import (
	"context"
	"fmt"

	"github.com/forgectx/forgectx/internal/snapshot/prompt"
	"github.com/forgectx/forgectx/internal/snapshot/verify"
)

func init() {
	register(&command{
		Name:    "prompt",
		Summary: "verify a snapshot tree and render a view as ordered, fenced, untrusted-data content blocks",
		Run:     runPromptCmd,
	})
}

// promptOptions is what `forgectx prompt` parses its flags into.
type promptOptions struct {
	Dir         string
	View        string
	Format      string
	IndexSHA256 string
	Logs        string
}

func runPromptCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "prompt", "prompt DIR [--view timeline|unresolved-review|reviews/<key>|threads/<key>] [--format json|text] [--logs both|digest|full] [--index-sha256 HEX]")
	var o promptOptions
	fs.StringVar(&o.View, "view", prompt.ViewTimeline, "projection: timeline, unresolved-review, reviews/<record-key> or threads/<thread-key>")
	fs.StringVar(&o.Format, "format", "json", "output: json (an array of {\"type\":\"text\",\"text\":…} blocks) or text")
	// both by default: the digest puts the failing lines first, and the log stays for what the
	// digest's rules do not recognise (docs/check-digest.md, "In the prompt").
	fs.StringVar(&o.Logs, "logs", prompt.LogsBoth, "check logs: both (a check-digest block of the failing lines, then the log), digest (the digest instead of the log) or full (the log only, as before digests)")
	fs.StringVar(&o.IndexSHA256, "index-sha256", "", "retained SHA-256 (`HEX`) of the assembled root index.json; the on-disk index must match it")
	var err error
	if o.Dir, err = parseDirArg(fs, args); err != nil {
		return err
	}
	if o.Format != "json" && o.Format != "text" {
		return usagef("--format must be json or text")
	}
	if o.Logs == "" || prompt.CheckLogs(o.Logs) != nil {
		return usagef("--logs must be %s, %s or %s", prompt.LogsDigest, prompt.LogsFull, prompt.LogsBoth)
	}
	if _, err := prompt.ViewPath(o.View); err != nil {
		return usagef("--view: %v", err)
	}
	if o.IndexSHA256, err = digestFlag(o.IndexSHA256); err != nil {
		return err
	}
	// The tree is verified first and rendered from exactly the verified bytes: verify.Open
	// holds the documents and reads each record file again, verified, when its block is
	// rendered, so the tree's bytes are never all held.
	snap, rep, err := verify.Open(ctx, o.Dir, verify.Options{IndexSHA256: o.IndexSHA256})
	if err != nil {
		return fmt.Errorf("prompt %s: %w", o.Dir, err)
	}
	if !rep.OK() {
		_ = rep.WriteText(e.Stderr)
		return &exitError{Code: exitFailed, Err: fmt.Errorf("prompt %s: refusing to render an unverified tree: %d violation(s)", o.Dir, len(rep.Violations))}
	}
	// Streamed: one block's text at a time (a 100k-record timeline would otherwise be held
	// three times: the snapshot, every block, the encoded output). A view that cannot be
	// rendered fails before anything is written.
	stream := prompt.StreamJSON
	if o.Format == "text" {
		stream = prompt.StreamText
	}
	n, err := stream(e.Stdout, snap, prompt.Options{View: o.View, Logs: o.Logs})
	if err != nil {
		return fmt.Errorf("prompt %s: %w", o.Dir, err)
	}
	e.Log.Debug().Int("blocks", n).Str("index_sha256", snap.IndexSHA256).Str("view", o.View).Str("logs", o.Logs).Msg("prompt")
	return nil
}
