package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/forgectx/forgectx/internal/platform/safeout"
	"github.com/forgectx/forgectx/pkg/cirelay"
	"github.com/forgectx/forgectx/pkg/prescript"
	"github.com/forgectx/forgectx/pkg/prescript/gate"
)

func init() {
	register(&command{
		Name:    "prescript",
		Summary: "run a pre-script under the pre-script output protocol v1 and print the skip/proceed decision",
		Run:     runPrescriptCmd,
	})
}

// prescriptOptions is what `forgectx prescript` parses its flags into.
type prescriptOptions struct {
	RunDir    string
	Dotenv    string
	SecretEnv []string
	Timeout   time.Duration
	None      bool // the harness defines no pre-script
	Command   []string
}

func runPrescriptCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "prescript", "prescript [--run-dir DIR] [--dotenv FILE] [--secret-env NAME]... [--timeout D] -- SCRIPT [ARGS...]\n       forgectx prescript --none [--dotenv FILE]")
	var o prescriptOptions
	var secrets stringList
	fs.StringVar(&o.RunDir, "run-dir", "", "run directory for the output file (default: a fresh temporary directory, removed afterwards)")
	fs.StringVar(&o.Dotenv, "dotenv", "", "also write the decision as a GitLab dotenv report (artifacts:reports:dotenv) to `FILE`")
	fs.Var(&secrets, "secret-env", "environment variable `NAME` whose value is a secret to redact from diagnostics (repeatable; *_TOKEN variables always are)")
	fs.DurationVar(&o.Timeout, "timeout", prescript.DefaultTimeout, "how long the pre-script may run")
	fs.BoolVar(&o.None, "none", false, "the harness defines no pre-script: relay and print the proceed decision")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	o.SecretEnv, o.Command = secrets, fs.Args()
	// A --dotenv path the relay would refuse is a bad flag, reported before the script runs
	// rather than after it made its decision.
	if err := checkOutputFile("--dotenv", o.Dotenv, safeout.Options{}); err != nil {
		return err
	}
	if o.None {
		if len(o.Command) > 0 {
			return usagef("--none takes no SCRIPT")
		}
		return prescriptRun(ctx, e, o)
	}
	if len(o.Command) == 0 || o.Command[0] == "" {
		return usagef("missing SCRIPT (forgectx prescript -- SCRIPT [ARGS...])")
	}
	if o.Timeout <= 0 {
		return usagef("--timeout must be positive")
	}
	return prescriptRun(ctx, e, o)
}

func prescriptRun(ctx context.Context, e *env, o prescriptOptions) error {
	_, err := gate.Run(ctx, gate.Options{
		Prescript: prescript.Options{
			RunDir:         o.RunDir,
			Command:        o.Command,
			Env:            e.Environ(),
			Stdout:         e.Stderr, // the script's output is job log; stdout is the decision's
			Stderr:         e.Stderr,
			SecretEnvNames: o.SecretEnv,
			Timeout:        o.Timeout,
			Log:            &e.Log,
		},
		None:     o.None,
		Relay:    cirelay.Options{Getenv: e.Getenv, DotenvPath: o.Dotenv, Log: &e.Log},
		Decision: e.Stdout,
	})
	var re *gate.RelayError
	var pe *gate.PrintError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &re):
		// The decision exists but the workflow cannot see it: a failed run, annotated like a
		// failed pre-script so that it shows on the run's summary. The message names the
		// target, the key and the rule, never a value.
		annotate(e, re.Error())
		return err
	case errors.As(err, &pe):
		return err
	}
	return prescriptFailure(e, err)
}

// annotate prints a GitHub Actions error annotation under GitHub Actions (the message is
// escaped by go-githubactions, so it stays one workflow command).
func annotate(e *env, msg string) {
	if e.Getenv("GITHUB_ACTIONS") == "true" {
		fmt.Fprintln(e.Stderr, (&githubactions.Command{Name: "error", Message: msg}).String())
	}
}

// prescriptFailure turns a failed gate into exit 1 with one line on stderr, plus an error
// annotation under GitHub Actions. Only the sanitised, redacted diagnostic or the protocol
// rule is printed, never raw script output or a file value.
func prescriptFailure(e *env, err error) error {
	var hf *prescript.HardFailure
	var pe *prescript.ProtocolError
	var msg string
	switch {
	case errors.As(err, &hf):
		msg = hf.Diagnostic
	case errors.As(err, &pe):
		msg = pe.Error()
	default:
		msg = err.Error()
	}
	annotate(e, "pre-script failed: "+msg)
	return &exitError{Code: exitFailed, Err: &gateError{msg: "pre-script failed: " + msg, err: err}}
}

// gateError prints its chosen message while keeping the typed error reachable (errors.As).
type gateError struct {
	msg string
	err error
}

func (g *gateError) Error() string { return g.msg }
func (g *gateError) Unwrap() error { return g.err }
