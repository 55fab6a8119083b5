package main

import (
	"context"
	"fmt"
	"os"

	"github.com/forgectx/forgectx/internal/lifecycle"
	"github.com/forgectx/forgectx/internal/review/reviewrun"
	fxrun "github.com/forgectx/forgectx/internal/run"
	"github.com/forgectx/forgectx/internal/run/harness"
)

// reviewContextRunOptions are the flags of `forgectx review-context run`.
type reviewContextRunOptions struct {
	gitlabMROptions
	Harness  string
	TempDir  string
	WorkDir  string
	Preserve bool
	// EngineUID and EngineGID: the engine's identity when forgectx runs as root.
	EngineUID, EngineGID int
}

func reviewContextRunCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "review-context run", "review-context run --harness FILE [--api-url URL] [--project ID|PATH] [--mr IID] [--token-env NAME] [--expected-head SHA] [--temp-dir DIR] [--work-dir DIR] [--preserve-private-artifacts] [--insecure-http] [--concurrency N] [--engine-uid UID --engine-gid GID]")
	var o reviewContextRunOptions
	o.bind(fs, e)
	fs.StringVar(&o.Harness, "harness", "", "harness file: agent.command is the review engine, profiles.change_proposal the snapshot profile (required)")
	fs.StringVar(&o.TempDir, "temp-dir", "", "where the owner-only session (isolated HOME, store, snapshot) is created (default the OS temporary directory)")
	fs.StringVar(&o.WorkDir, "work-dir", "", "the engine's working directory, the checkout under review (default the current directory)")
	fs.BoolVar(&o.Preserve, "preserve-private-artifacts", false, "local diagnostic: keep the owner-only session and write the value-free DLP decisions sidecar; no receipt, nothing posted (refused under GitLab CI merge request execution)")
	fs.IntVar(&o.EngineUID, "engine-uid", 0, "as root: the unprivileged UID the engine runs as (default 65532; refused when forgectx is not root)")
	fs.IntVar(&o.EngineGID, "engine-gid", 0, "as root: the engine's GID (with --engine-uid; default 65532)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("run takes no arguments")
	}
	if o.Harness == "" {
		return usagef("--harness: required")
	}
	if err := o.check(e); err != nil {
		return err
	}
	return runReviewContextRun(ctx, e, o)
}

// runReviewContextRun loads the harness and runs one review. Configuration, selector, policy,
// adapter-configuration and lifecycle rejections exit 2; everything else that fails exits 1.
func runReviewContextRun(ctx context.Context, e *env, o reviewContextRunOptions) error {
	h, err := harness.Load(o.Harness)
	if err != nil {
		return usagef("--harness: %v", err)
	}
	// The token stays in this process's /proc/<pid>/environ: make that unreadable to an engine
	// running as the same user before anything is started (as forgectx run does).
	if herr := fxrun.HardenProcess(); herr != nil {
		e.Log.Warn().Str("code", "process_not_hardened").Msg("could not mark forgectx non-dumpable")
	}
	// The run reads the token from this snapshot; the variable then leaves the process
	// environment so nothing this process starts later can inherit it through os.Environ. That
	// does not rewrite /proc/<pid>/environ (the kernel keeps the start-up block): the engine is
	// kept from that by its own UID as root and by the non-dumpable mark above.
	environ := e.Environ()
	_ = os.Unsetenv(o.TokenEnv)
	res, err := reviewrun.Run(ctx, reviewrun.Options{
		Common: lifecycle.Common{APIURL: o.APIURL, TokenEnv: o.TokenEnv, InsecureHTTP: o.InsecureHTTP, Concurrency: o.Concurrency, Harness: h,
			Environ: func() []string { return environ }, Stdout: e.Stderr, Stderr: e.Stderr, Log: e.Log, Now: reviewContextNow},
		Project: o.Project, MR: o.MR, ExpectedHead: o.ExpectedHead,
		TempDir: o.TempDir, WorkDir: o.WorkDir, PreservePrivateArtifacts: o.Preserve,
		EngineUID: o.EngineUID, EngineGID: o.EngineGID,
	})
	if res != nil {
		printRunSummary(e, res)
	}
	if err != nil {
		if reviewrun.IsConfigError(err) {
			return &exitError{Code: exitUsage, Err: err}
		}
		return err
	}
	return nil
}

// printRunSummary prints closed states and counts only (stdout; the engine's streams go to
// stderr with the log).
func printRunSummary(e *env, r *reviewrun.Result) {
	fmt.Fprintf(e.Stdout, "status: %s\ncleanup: %s\n", r.Status, r.Cleanup)
	if r.Preserved != "" {
		fmt.Fprintf(e.Stdout, "preserved: %s\n", r.Preserved)
	}
	if r.Receipt != nil {
		fmt.Fprintf(e.Stdout, "target: %s\nmode: %s\npublication_dlp: %s\n", r.Receipt.TargetState, r.Receipt.ContextMode, r.Receipt.PublicationDLP.Result)
	}
	if r.Status == reviewrun.StatusSuccess {
		fmt.Fprintf(e.Stdout, "discussions: %d\napproved: %t\n", r.Discussions, r.Approved)
		for _, why := range r.Decision.Reasons {
			fmt.Fprintf(e.Stdout, "not_approved: %s\n", why)
		}
	}
}
