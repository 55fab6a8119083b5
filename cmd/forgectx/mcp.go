package main

import (
	"context"
	"errors"

	"github.com/forgectx/forgectx/internal/review/reviewmcp"
	"github.com/forgectx/forgectx/internal/review/reviewrun"
)

// mcpOptions are the flags of `forgectx mcp`.
type mcpOptions struct {
	Mode                        string
	Snapshot, IndexSHA256       string
	Store, RunID, PolicyDigest  string
	StoreSHA256, Usage          string
	View, Metadata, MetadataSHA string
	Relay                       string
}

func init() {
	register(&command{
		Name:    "mcp",
		Summary: "the built-in review MCP server over stdio: evidence tools over a verified snapshot, context tools over the committed store (enriched)",
		Run:     mcpCmd,
	})
}

func mcpCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "mcp", "mcp --mode constrained|enriched --snapshot DIR [--index-sha256 HEX] [--store DIR --run-id ID --policy-digest HEX [--store-sha256 HEX]] [--view snapshot|immutable [--metadata FILE [--metadata-sha256 HEX]]] --usage FILE | mcp --relay SOCKET")
	var o mcpOptions
	fs.StringVar(&o.Mode, "mode", "", "constrained (evidence tools only) or enriched (plus context_list and context_get)")
	fs.StringVar(&o.Snapshot, "snapshot", "", "entity-context-snapshot tree of the reviewed MR (verified before serving)")
	fs.StringVar(&o.IndexSHA256, "index-sha256", "", "retained root index digest the on-disk index must match (optional)")
	fs.StringVar(&o.Store, "store", "", "enriched: the committed private context store directory")
	fs.StringVar(&o.RunID, "run-id", "", "enriched: the run every handle must be bound to")
	fs.StringVar(&o.PolicyDigest, "policy-digest", "", "enriched: the policy digest every handle must be bound to")
	fs.StringVar(&o.StoreSHA256, "store-sha256", "", "enriched: SHA-256 of the committed store file (optional)")
	fs.StringVar(&o.View, "view", "", "evidence view: snapshot (default, the whole verified tree) or immutable (immutable evidence only)")
	fs.StringVar(&o.Metadata, "metadata", "", "immutable view, constrained: the bounded merge-request metadata projection file (optional)")
	fs.StringVar(&o.MetadataSHA, "metadata-sha256", "", "SHA-256 of the metadata projection file (optional)")
	fs.StringVar(&o.Usage, "usage", "", "usage file, replaced atomically (0600) after every tool call")
	fs.StringVar(&o.Relay, "relay", "", "pipe stdio to the MCP server that a root review-context run serves on the Unix `SOCKET` (@name: abstract; alone: no other flag)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("mcp takes no arguments")
	}
	if o.Relay != "" {
		if fs.NFlag() != 1 {
			return usagef("--relay: takes no other flag (the server's configuration is the run's)")
		}
		return reviewrun.Relay(ctx, o.Relay, e.Stdin, e.Stdout)
	}
	return runMCP(ctx, e, o)
}

// runMCP serves until the client closes stdin. A start-up refusal (configuration, an
// unverifiable snapshot, a rejected store) exits 2 before anything is served.
func runMCP(ctx context.Context, e *env, o mcpOptions) error {
	cfg := reviewmcp.Config{
		Mode: reviewmcp.Mode(o.Mode), SnapshotDir: o.Snapshot, IndexSHA256: o.IndexSHA256,
		StoreDir: o.Store, RunID: o.RunID, PolicyDigest: o.PolicyDigest, StoreSHA256: o.StoreSHA256,
		View: o.View, MetadataPath: o.Metadata, MetadataSHA256: o.MetadataSHA, UsagePath: o.Usage,
	}
	err := reviewmcp.Serve(ctx, cfg, e.Stdin, e.Stdout)
	if errors.Is(err, reviewmcp.ErrConfig) {
		return &exitError{Code: exitUsage, Err: err}
	}
	if err == nil {
		e.Log.Debug().Msg("mcp session ended")
	}
	return err
}
