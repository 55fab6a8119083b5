package main

import (
	"context"
	"fmt"

	"github.com/forgectx/forgectx/internal/lifecycle"
	"github.com/forgectx/forgectx/internal/platform/safeout"
	fxrun "github.com/forgectx/forgectx/internal/run"
	"github.com/forgectx/forgectx/internal/snapshot/stage"
)

func init() {
	register(&command{
		Name:    "run",
		Summary: "the whole CI job: gate, snapshot, agent, status comment, receipt, job summary",
		Run:     runRun,
	})
}

const runSynopsis = "run --harness FILE [--forge github|gitlab|forgejo] [--repo OWNER/NAME] [--number N] [--kind work_item|change_proposal] [--api-url URL] [--token-env NAME] [--comment-author LOGIN] [--comment-author-id ID] [--insecure-http] [--concurrency N] [--replay DIR] [--dotenv FILE] [--head-sha SHA] [--tree-dir DIR] [--state-dir DIR] [--artifacts-dir DIR]... [--immutability auto|ownership|bind-mount] [--agent-uid UID --agent-gid GID]"

func runRun(ctx context.Context, e *env, args []string) error {
	// The scripts' and the agent's streams go to stderr (the job log); stdout carries only a
	// replayed run's would-be posts (--replay).
	o := fxrun.Options{Getenv: e.Getenv, Posts: e.Stdout, Common: lifecycle.Common{Environ: e.Environ, Stdout: e.Stderr, Stderr: e.Stderr, Log: e.Log}}
	fs := newFlagSet(e, "run", runSynopsis)
	fs.StringVar(&o.HarnessPath, "harness", "", "harness file (docs/harness.md)")
	fs.StringVar(&o.Forge, "forge", "", "forge: github, gitlab or forgejo (default: forgejo under Forgejo Actions, gitlab under GitLab CI, else github)")
	fs.StringVar(&o.Repo, "repo", "", "repository OWNER/NAME, or GitLab project path or id (default: GitHub $GITHUB_REPOSITORY; GitLab CI $CI_MERGE_REQUEST_PROJECT_ID, else $CI_PROJECT_ID; Forgejo Actions the event's repository)")
	fs.IntVar(&o.Number, "number", 0, "issue or pull/merge request number (default: GitHub and Forgejo Actions from the event payload; GitLab CI $CI_MERGE_REQUEST_IID)")
	fs.StringVar(&o.Kind, "kind", "", "work_item or change_proposal (default: from the event, else the harness's only profile)")
	fs.StringVar(&o.APIURL, "api-url", "", "forge API base URL (default: GitHub $GITHUB_API_URL, else https://api.github.com; GitLab CI $CI_API_V4_URL, else https://gitlab.com/api/v4; Forgejo Actions the server URL + /api/v1, required elsewhere)")
	fs.StringVar(&o.TokenEnv, "token-env", "", "name of the environment variable holding the forge token (default: GitHub GITHUB_TOKEN; GitLab GITLAB_TOKEN, else CI_JOB_TOKEN under GitLab CI; Forgejo FORGEJO_TOKEN, else GITHUB_TOKEN under Forgejo Actions)")
	fs.StringVar(&o.CommentAuthor, "comment-author", "", "GitHub: login the token posts as (default under GitHub Actions: github-actions[bot]; required elsewhere). GitLab and Forgejo ask GET /user")
	fs.Int64Var(&o.CommentAuthorID, "comment-author-id", 0, "Forgejo: user id the token posts as (the automatic Actions token: -2; default: GET /user)")
	fs.BoolVar(&o.InsecureHTTP, "insecure-http", false, "allow a plain-http --api-url to a non-loopback host (the token crosses the network in clear; logged)")
	concurrencyFlag(fs, &o.Concurrency)
	fs.StringVar(&o.Replay, "replay", "", "try the whole job offline: read the forge from this cassette directory (docs/cassettes.md) and print the comments it would post to stdout, one JSON object a line")
	fs.StringVar(&o.DotenvPath, "dotenv", "", "also write the decision as a GitLab dotenv report to this file")
	fs.StringVar(&o.HeadSHA, "head-sha", "", "Git revision checked out for the run, recorded in the receipt (default: GitHub $GITHUB_SHA; GitLab CI $CI_COMMIT_SHA; Forgejo Actions the pull request's head)")
	fs.StringVar(&o.TreeDir, "tree-dir", "", "where the host tree and the agent's read-only copy are created (default $RUNNER_TEMP, else the OS temporary directory); outside the workspace. A copy the agent could replace there (a directory it owns or may write) goes to the OS temporary directory instead")
	fs.StringVar(&o.StateDir, "state-dir", "", "host-private stage state holding the retained index digest (default $RUNNER_TEMP/forgectx-stage)")
	fs.Func("artifacts-dir", "a retained run-output or artifact directory (uploaded after the job) that no snapshot tree or state may be placed in; repeatable", func(v string) error {
		if v == "" {
			return fmt.Errorf("--artifacts-dir: must name a directory")
		}
		o.ArtifactDirs = append(o.ArtifactDirs, v)
		return nil
	})
	var mode string
	fs.StringVar(&mode, "immutability", "auto", "how the agent's copy is made read-only: auto, ownership (root forgectx, unprivileged agent) or bind-mount")
	fs.IntVar(&o.AgentUID, "agent-uid", 0, "unprivileged UID the agent runs as (forgectx must run as root; required for ownership mode, and for bind-mount mode as root)")
	fs.IntVar(&o.AgentGID, "agent-gid", 0, "unprivileged GID the agent runs as (with --agent-uid)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if o.HarnessPath == "" {
		return usagef("--harness is required")
	}
	if err := checkConcurrency(o.Concurrency); err != nil {
		return err
	}
	m, err := stage.ParseMode(mode)
	if err != nil {
		return usagef("--immutability: must be auto, ownership or bind-mount")
	}
	o.Immutability = m
	// An unusable --dotenv is a configuration error found before anything is posted.
	if err := checkOutputFile("--dotenv", o.DotenvPath, safeout.Options{}); err != nil {
		return err
	}
	// The token stays in this process's /proc/<pid>/environ: make that unreadable to an agent
	// running as the same user before anything is started.
	if herr := fxrun.HardenProcess(); herr != nil {
		e.Log.Warn().Str("code", "process_not_hardened").Msg("could not mark forgectx non-dumpable")
	}
	_, err = fxrun.Run(ctx, o)
	switch {
	case err == nil:
		return nil
	case fxrun.IsConfigError(err):
		return &exitError{Code: exitUsage, Err: fmt.Errorf("run: configuration: %w", err)}
	}
	return &exitError{Code: exitFailed, Err: fmt.Errorf("run: %w", err)}
}
