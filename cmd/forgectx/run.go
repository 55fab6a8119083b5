package main

import (
	"context"
	"fmt"

	fxrun "github.com/forgectx/forgectx/pkg/run"
)

func init() {
	register(&command{
		Name:    "run",
		Summary: "the whole CI job: gate, snapshot, agent, status comment, receipt, job summary",
		Run:     runRun,
	})
}

const runSynopsis = "run --harness FILE [--forge github] [--repo OWNER/NAME] [--number N] [--kind work_item|change_proposal] [--api-url URL] [--token-env NAME] [--comment-author LOGIN] [--head-sha SHA] [--state-dir DIR]"

func runRun(ctx context.Context, e *env, args []string) error {
	o := fxrun.Options{Getenv: e.Getenv, Environ: e.Environ, Stdout: e.Stderr, Stderr: e.Stderr, Log: e.Log}
	fs := newFlagSet(e, "run", runSynopsis)
	fs.StringVar(&o.HarnessPath, "harness", "", "harness file (docs/harness.md)")
	fs.StringVar(&o.Forge, "forge", "github", "forge: github")
	fs.StringVar(&o.Repo, "repo", "", "repository OWNER/NAME (default $GITHUB_REPOSITORY)")
	fs.IntVar(&o.Number, "number", 0, "issue or pull request number (default: from the event payload)")
	fs.StringVar(&o.Kind, "kind", "", "work_item or change_proposal (default: from the event, else the harness's only profile)")
	fs.StringVar(&o.APIURL, "api-url", "", "forge API base URL (default $GITHUB_API_URL, else https://api.github.com)")
	fs.StringVar(&o.TokenEnv, "token-env", "", "name of the environment variable holding the forge token (default GITHUB_TOKEN)")
	fs.StringVar(&o.CommentAuthor, "comment-author", "", "login the token posts as (default under GitHub Actions: github-actions[bot])")
	fs.StringVar(&o.HeadSHA, "head-sha", "", "Git revision checked out for the run, recorded in the receipt (default $GITHUB_SHA)")
	fs.StringVar(&o.StateDir, "state-dir", "", "host-private directory for snapshot trees (default $RUNNER_TEMP/forgectx); must be outside the workspace")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if o.HarnessPath == "" {
		return usagef("--harness is required")
	}
	_, err := fxrun.Run(ctx, o)
	switch {
	case err == nil:
		return nil
	case fxrun.IsConfigError(err):
		return &exitError{Code: exitUsage, Err: fmt.Errorf("run: configuration: %w", err)}
	}
	return &exitError{Code: exitFailed, Err: fmt.Errorf("run: %w", err)}
}
