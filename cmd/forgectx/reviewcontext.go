package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/review/reviewctx"
)

// reviewContextPolicyOptions are the arguments of `forgectx review-context policy validate`.
type reviewContextPolicyOptions struct {
	File string
}

func init() {
	register(&command{
		Name:    "review-context",
		Summary: "review-context enrichment: 'policy validate FILE' checks a policy; 'acquire' commits the private context store for one GitLab MR; 'run' runs one protected review and posts it",
		Run: func(ctx context.Context, e *env, args []string) error {
			switch {
			case len(args) >= 1 && args[0] == "policy":
				return reviewContextPolicyCmd(ctx, e, args[1:])
			case len(args) >= 1 && args[0] == "acquire":
				return reviewContextAcquireCmd(ctx, e, args[1:])
			case len(args) >= 1 && args[0] == "run":
				return reviewContextRunCmd(ctx, e, args[1:])
			case len(args) >= 1 && (args[0] == "--help" || args[0] == "-h"):
				fmt.Fprintln(e.Stderr, "Usage: forgectx review-context policy validate FILE\n       forgectx review-context acquire [flags]\n       forgectx review-context run --harness FILE [flags]")
				return nil
			}
			return usagef("expected 'policy validate FILE', 'acquire' or 'run'")
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

// gitObjectID is a full SHA-1 or SHA-256 Git object ID.
var gitObjectID = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// reviewContextNow is the acquisition clock (age bounds, store expiry); tests pin it.
var reviewContextNow = time.Now

// gitlabMROptions are the flags that name and reach one GitLab merge request, shared by
// `review-context acquire` and `review-context run`.
type gitlabMROptions struct {
	APIURL       string
	Project      string
	MR           int64
	TokenEnv     string
	ExpectedHead string
	InsecureHTTP bool
	Concurrency  int
	mr           string
}

// bind registers the flags with their GitLab CI defaults.
func (o *gitlabMROptions) bind(fs *flag.FlagSet, e *env) {
	tokenEnv := "CI_JOB_TOKEN"
	if e.Getenv("GITLAB_TOKEN") != "" {
		tokenEnv = "GITLAB_TOKEN"
	}
	project := e.Getenv("CI_MERGE_REQUEST_PROJECT_ID")
	if project == "" {
		project = e.Getenv("CI_PROJECT_ID")
	}
	fs.StringVar(&o.APIURL, "api-url", e.Getenv("CI_API_V4_URL"), "GitLab REST base (default $CI_API_V4_URL)")
	fs.StringVar(&o.Project, "project", project, "project ID or path (default $CI_MERGE_REQUEST_PROJECT_ID, else $CI_PROJECT_ID)")
	fs.StringVar(&o.mr, "mr", e.Getenv("CI_MERGE_REQUEST_IID"), "merge request IID (default $CI_MERGE_REQUEST_IID)")
	fs.StringVar(&o.TokenEnv, "token-env", tokenEnv, "environment variable holding the token (default GITLAB_TOKEN when set, else CI_JOB_TOKEN)")
	fs.StringVar(&o.ExpectedHead, "expected-head", e.Getenv("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA"), "fail closed unless the MR head is this SHA (default $CI_MERGE_REQUEST_SOURCE_BRANCH_SHA)")
	fs.BoolVar(&o.InsecureHTTP, "insecure-http", false, "allow a plain-http --api-url on a non-loopback host (the token then travels in clear; logged)")
	concurrencyFlag(fs, &o.Concurrency)
}

// check validates the flags after parsing; every problem is a usage error (exit 2).
func (o *gitlabMROptions) check(e *env) error {
	if err := checkConcurrency(o.Concurrency); err != nil {
		return err
	}
	if o.Project == "" {
		return usagef("--project: not set and $CI_MERGE_REQUEST_PROJECT_ID/$CI_PROJECT_ID are empty")
	}
	n, err := strconv.ParseInt(o.mr, 10, 64)
	if err != nil || n <= 0 {
		return usagef("--mr: %q is not a positive merge request IID", o.mr)
	}
	o.MR = n
	if o.APIURL == "" {
		return usagef("--api-url: not set and $CI_API_V4_URL is empty")
	}
	// The one transport rule of every forge command: https, except loopback or --insecure-http,
	// checked before the token is read or any request is made.
	if err := forge.CheckAPIURL(o.APIURL, o.InsecureHTTP, e.Log); err != nil {
		return usagef("%v", err)
	}
	return nil
}

// reviewContextAcquireOptions are the flags of `forgectx review-context acquire`.
type reviewContextAcquireOptions struct {
	gitlabMROptions
	StoreDir string
}

func reviewContextAcquireCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "review-context acquire", "review-context acquire --store-dir DIR [--api-url URL] [--project ID|PATH] [--mr IID] [--token-env NAME] [--expected-head SHA] [--insecure-http] [--concurrency N]")
	var o reviewContextAcquireOptions
	o.bind(fs, e)
	fs.StringVar(&o.StoreDir, "store-dir", "", "directory for the private context store (created 0700; required unless the mode is off)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("acquire takes no arguments")
	}
	if err := o.check(e); err != nil {
		return err
	}
	// Every flag is checked before the first request: a malformed head or an unusable store
	// directory is exit 2 now, not after the acquisition's retries.
	if o.ExpectedHead != "" && !gitObjectID.MatchString(o.ExpectedHead) {
		return usagef("--expected-head: must be a 40- or 64-digit lowercase hexadecimal commit SHA")
	}
	if o.StoreDir != "" {
		if err := reviewctx.CheckStoreDir(o.StoreDir); err != nil {
			return usagef("--store-dir %s: %v", o.StoreDir, err)
		}
	}
	return runReviewContextAcquire(ctx, e, o)
}

// lookupEnv reads presence as well as value: an unset selector and an empty one differ.
func lookupEnv(e *env, name string) (string, bool) {
	for _, kv := range e.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// runReviewContextAcquire parses the closed selectors before any request, runs one
// acquisition and prints a count-only summary. Selector, policy and adapter-configuration
// rejections exit 2; everything else that fails exits 1.
func runReviewContextAcquire(ctx context.Context, e *env, o reviewContextAcquireOptions) error {
	mode, err := reviewctx.ParseMode(e.Getenv(reviewctx.EnvMode))
	if err != nil {
		return &exitError{Code: exitUsage, Err: err}
	}
	pv, present := lookupEnv(e, reviewctx.EnvProtectionMode)
	prot, err := reviewctx.ParseProtectionMode(pv, present)
	if err != nil {
		return &exitError{Code: exitUsage, Err: err}
	}
	if mode != reviewctx.ModeOff && o.StoreDir == "" {
		return usagef("--store-dir: required when %s is %s", reviewctx.EnvMode, mode)
	}
	adapters, adaptersSet := lookupEnv(e, reviewctx.EnvAdaptersJSON)
	if adaptersSet {
		if _, err := reviewctx.ParseAdapters(adapters); err != nil {
			return &exitError{Code: exitUsage, Err: err}
		}
	}
	// The credential is read last, once every flag and selector has passed; an acquisition
	// never goes out without it.
	if e.Getenv(o.TokenEnv) == "" {
		return usagef("--token-env %s: the environment variable is unset or empty", o.TokenEnv)
	}
	g, err := reviewctx.NewGitLab(reviewctx.GitLabOptions{APIURL: o.APIURL, Token: e.Getenv(o.TokenEnv), TokenEnv: o.TokenEnv, Concurrency: o.Concurrency}, o.Project, o.MR, reviewContextNow)
	if err != nil {
		return &exitError{Code: exitUsage, Err: err}
	}
	res, err := reviewctx.Acquire(ctx, g, reviewctx.AcquireOptions{
		Mode: mode, Protection: prot, AdaptersJSON: adapters, AdaptersSet: adaptersSet,
		ExpectedHead: o.ExpectedHead, StoreDir: o.StoreDir,
		Filter: filter.New(filter.SecretEnvValues(e.Environ(), []string{o.TokenEnv})),
		Env:    func(n string) (string, bool) { return lookupEnv(e, n) },
		Now:    reviewContextNow,
	})
	if err != nil {
		for _, usage := range []error{reviewctx.ErrSelector, reviewctx.ErrPolicy, reviewctx.ErrAdapterConfig, reviewctx.ErrConstrained, reviewctx.ErrUnprotectedTarget, reviewctx.ErrMREnvironment} {
			if errors.Is(err, usage) {
				return &exitError{Code: exitUsage, Err: err}
			}
		}
		return err
	}
	e.Log.Info().Str("mode", string(res.Mode)).Bool("protected", res.Protected).Int("records", res.Records).Msg("review-context acquired")
	printAcquireSummary(e, res)
	return nil
}

func printAcquireSummary(e *env, r *reviewctx.Result) {
	target := "protected"
	if !r.Protected {
		target = "unprotected (constrained lifecycle)"
	}
	fmt.Fprintf(e.Stdout, "mode: %s\ntarget: %s\n", r.Mode, target)
	if r.PolicyDigest != "" {
		fmt.Fprintf(e.Stdout, "policy: %s sha256:%s\n", r.PolicyVersion, r.PolicyDigest)
	}
	store := "not written"
	if r.StoreWritten {
		store = "written"
	}
	fmt.Fprintf(e.Stdout, "store: %s\nrecords: %d\n", store, r.Records)
	for _, s := range r.Sources {
		req := "optional"
		if s.Required {
			req = "required"
		}
		reasons := strings.Join(s.Reasons, ",")
		if reasons == "" {
			reasons = "-"
		}
		fmt.Fprintf(e.Stdout, "source %s: %s %s records=%d omitted=%d reasons=%s\n", s.Source, req, s.Completeness, s.Records, s.Omitted, reasons)
	}
}
