package main

import (
	"context"
	"encoding/json"
	"fmt"

	fxrun "github.com/forgectx/forgectx/internal/run"
)

func init() {
	register(&command{
		Name:    "status",
		Summary: "status comment maintenance: 'status reconcile' finalises a comment left started by a dead job",
		Run:     runStatus,
	})
}

const statusSynopsis = "status reconcile (--agent NAME | --harness FILE) [--repo OWNER/NAME] [--number N] [--api-url URL] [--token-env NAME] [--forge NAME] [--kind KIND] [--comment-author LOGIN] [--comment-author-id ID] [--current-run] [--insecure-http] [--concurrency N]"

func runStatus(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || (args[0] != "reconcile" && args[0] != "--help" && args[0] != "-h") {
		return usagef("expected the subcommand reconcile")
	}
	o := fxrun.ReconcileOptions{Getenv: e.Getenv, Log: e.Log}
	fs := newFlagSet(e, "status", statusSynopsis)
	fs.StringVar(&o.Agent, "agent", "", "agent name whose sticky status comment is reconciled")
	fs.StringVar(&o.HarnessPath, "harness", "", "harness file to read the agent name from")
	fs.StringVar(&o.Forge, "forge", "", "forge: github, gitlab or forgejo (default: detected from the CI environment, else github)")
	fs.StringVar(&o.Kind, "kind", "", "GitLab: work_item or change_proposal (default: from the CI job)")
	fs.Int64Var(&o.CommentAuthorID, "comment-author-id", 0, "Forgejo: user id the token posts as (default: GET /user)")
	fs.BoolVar(&o.InsecureHTTP, "insecure-http", false, "allow a plain-http --api-url to a non-loopback host (the token crosses the network in clear; logged)")
	concurrencyFlag(fs, &o.Concurrency)
	fs.StringVar(&o.Repo, "repo", "", "repository OWNER/NAME (default $GITHUB_REPOSITORY)")
	fs.IntVar(&o.Number, "number", 0, "issue or pull request number (default: from the event payload)")
	fs.StringVar(&o.APIURL, "api-url", "", "forge API base URL (default $GITHUB_API_URL, else https://api.github.com)")
	fs.StringVar(&o.TokenEnv, "token-env", "", "name of the environment variable holding the forge token (default GITHUB_TOKEN)")
	fs.StringVar(&o.CommentAuthor, "comment-author", "", "login the token posts as (default under GitHub Actions: github-actions[bot])")
	fs.BoolVar(&o.CurrentRun, "current-run", false, "treat a comment started by this CI job (GitHub $GITHUB_RUN_ID, GitLab CI_JOB_URL, Forgejo's run) as dead (use in an always-run step after forgectx run)")
	rest := args
	if args[0] == "reconcile" {
		rest = args[1:]
	}
	if err := parseFlags(fs, rest); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if err := checkConcurrency(o.Concurrency); err != nil {
		return err
	}
	res, err := fxrun.Reconcile(ctx, o)
	if err != nil {
		if fxrun.IsConfigError(err) {
			return &exitError{Code: exitUsage, Err: fmt.Errorf("status reconcile: configuration: %w", err)}
		}
		return fmt.Errorf("status reconcile: %w", err)
	}
	line, err := json.Marshal(res)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.Stdout, "%s\n", line)
	return err
}
