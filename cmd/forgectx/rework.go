package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/rework"
)

// reworkTokenEnv is the Forgejo provider's default token variable: the gate reads Forgejo/Gitea.
func reworkTokenEnv() string {
	if p, ok := forge.Lookup("forgejo"); ok {
		return p.Policy().DefaultTokenEnv
	}
	return "FORGEJO_TOKEN"
}

func init() {
	register(&command{
		Name:    "rework",
		Summary: "rework input-gate: decide rework / no_op / blocked for a Forgejo/Gitea pull request and publish an immutable receipt",
		Run:     runReworkCmd,
	})
}

// reworkGateOptions is what `forgectx rework input-gate` parses its flags into.
type reworkGateOptions struct {
	Target, TargetSHA256     string
	Contract, ContractSHA256 string
	ActorID                  string
	Output                   string
	APIURL, TokenEnv         string
	PrescriptOutput          bool
	Timeout                  time.Duration
	InsecureHTTP             bool
	Concurrency              int
}

const reworkSynopsis = "rework input-gate --target FILE --target-sha256 HEX --provider-contract FILE --provider-contract-sha256 HEX --actor-id ID --output PATH --api-url URL [--token-env NAME] [--prescript-output] [--timeout D] [--insecure-http] [--concurrency N]"

func runReworkCmd(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "input-gate" {
		if len(args) > 0 && (args[0] == "--help" || args[0] == "-h") {
			fmt.Fprintf(e.Stderr, "Usage: forgectx %s\n", reworkSynopsis)
			return nil
		}
		return usagef("missing or unknown subcommand (forgectx rework input-gate ...)")
	}
	fs := newFlagSet(e, "rework input-gate", reworkSynopsis)
	var o reworkGateOptions
	fs.StringVar(&o.Target, "target", "", "the gitea-agent.rework-input/v1 target `FILE`")
	fs.StringVar(&o.TargetSHA256, "target-sha256", "", "SHA-256 (64 lowercase hex) of the target file's exact bytes")
	fs.StringVar(&o.Contract, "provider-contract", "", "the gitea-agent.rework-provider-contract/v1 `FILE`")
	fs.StringVar(&o.ContractSHA256, "provider-contract-sha256", "", "SHA-256 (64 lowercase hex) of the provider contract file's exact bytes")
	fs.StringVar(&o.ActorID, "actor-id", "", "the implementation agent's native stable user `ID`")
	fs.StringVar(&o.Output, "output", "", "receipt `PATH` (must not exist; its parent chain must hold no symlink)")
	fs.StringVar(&o.APIURL, "api-url", "", "the forge API base `URL` (the server URL plus /api/v1)")
	fs.StringVar(&o.TokenEnv, "token-env", reworkTokenEnv(), "environment variable `NAME` holding the API token")
	fs.BoolVar(&o.PrescriptOutput, "prescript-output", false, "also append the decision to $FULLSEND_PRESCRIPT_OUTPUT (pre-script output protocol v1): rework proceeds, no_op and blocked skip")
	fs.BoolVar(&o.InsecureHTTP, "insecure-http", false, "allow a plain-http --api-url on a non-loopback host (the token then travels in clear; logged)")
	fs.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "bound for both captures")
	concurrencyFlag(fs, &o.Concurrency)
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if o.Timeout <= 0 {
		return usagef("--timeout must be positive")
	}
	if err := checkConcurrency(o.Concurrency); err != nil {
		return err
	}
	return reworkGateRun(ctx, e, o)
}

// reworkSummary is the one JSON line printed on stdout after a receipt is published.
type reworkSummary struct {
	Decision        string   `json:"decision"`
	Route           string   `json:"route"`
	BlockingReasons []string `json:"blocking_reasons"`
	ReworkReviewIDs []int64  `json:"rework_review_ids"`
	Output          string   `json:"output"`
	ReceiptSHA256   string   `json:"receipt_sha256"`
}

func reworkGateRun(ctx context.Context, e *env, o reworkGateOptions) error {
	actor, err := strconv.ParseInt(o.ActorID, 10, 64)
	if err != nil || actor <= 0 || strconv.FormatInt(actor, 10) != o.ActorID {
		return &exitError{Code: exitUsage, Err: errors.New("--actor-id: must be a positive integer without sign or leading zero")}
	}
	if o.APIURL != "" {
		// The one transport rule of every forge command: https, except loopback or --insecure-http.
		if err := forge.CheckAPIURL(o.APIURL, o.InsecureHTTP, e.Log); err != nil {
			return &exitError{Code: exitUsage, Err: fmt.Errorf("rework input-gate: %w", err)}
		}
	}
	prescriptPath := ""
	if o.PrescriptOutput {
		// Checked before anything else: a gate that cannot signal its skip must not run.
		if prescriptPath = e.Getenv("FULLSEND_PRESCRIPT_OUTPUT"); prescriptPath == "" {
			return &exitError{Code: exitUsage, Err: fmt.Errorf("--prescript-output: %w", rework.ErrNoPrescriptOutput)}
		}
	}
	res, err := rework.Run(ctx, rework.Options{
		TargetPath: o.Target, TargetSHA256: o.TargetSHA256,
		ContractPath: o.Contract, ContractSHA256: o.ContractSHA256,
		ActorID: actor, OutputPath: o.Output, APIURL: o.APIURL, TokenEnv: o.TokenEnv, Getenv: e.Getenv,
		Timeout: o.Timeout, InsecureHTTP: o.InsecureHTTP, Concurrency: o.Concurrency, Log: e.Log,
	})
	if err != nil {
		var ie *rework.InputError
		if errors.As(err, &ie) {
			return &exitError{Code: exitUsage, Err: fmt.Errorf("rework input-gate: %w", err)}
		}
		return fmt.Errorf("rework input-gate: %w", err)
	}
	s := reworkSummary{Decision: res.Decision.Decision, Route: res.Decision.Route, BlockingReasons: []string{}, ReworkReviewIDs: res.Decision.ReworkReviewIDs, Output: res.OutputPath, ReceiptSHA256: res.ReceiptSHA256}
	for _, b := range res.Decision.BlockingReasons {
		s.BlockingReasons = append(s.BlockingReasons, string(b.Reason))
	}
	line, _ := json.Marshal(s)
	fmt.Fprintln(e.Stdout, string(line))
	if o.PrescriptOutput {
		if err := rework.AppendPrescriptOutput(prescriptPath, res); err != nil {
			return fmt.Errorf("rework input-gate: %w", err)
		}
	}
	return nil
}
