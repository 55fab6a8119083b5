package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/forgectx/forgectx/pkg/cirelay"
	"github.com/forgectx/forgectx/pkg/prescript"
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
	Command   []string
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func runPrescriptCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "prescript", "prescript [--run-dir DIR] [--dotenv FILE] [--secret-env NAME]... [--timeout D] -- SCRIPT [ARGS...]")
	var o prescriptOptions
	var secrets stringList
	fs.StringVar(&o.RunDir, "run-dir", "", "run directory for the output file (default: a fresh temporary directory, removed afterwards)")
	fs.StringVar(&o.Dotenv, "dotenv", "", "also write the decision as a GitLab dotenv report (artifacts:reports:dotenv) to `FILE`")
	fs.Var(&secrets, "secret-env", "environment variable `NAME` whose value is a secret to redact from diagnostics (repeatable; *_TOKEN variables always are)")
	fs.DurationVar(&o.Timeout, "timeout", prescript.DefaultTimeout, "how long the pre-script may run")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	o.SecretEnv, o.Command = secrets, fs.Args()
	if len(o.Command) == 0 || o.Command[0] == "" {
		return usagef("missing SCRIPT (forgectx prescript -- SCRIPT [ARGS...])")
	}
	if o.Timeout <= 0 {
		return usagef("--timeout must be positive")
	}
	return prescriptRun(ctx, e, o)
}

// decisionJSON is the one object `forgectx prescript` prints on stdout.
type decisionJSON struct {
	Skipped bool              `json:"skipped"`
	Reason  string            `json:"reason"`
	Outputs map[string]string `json:"outputs"` // encoding/json writes map keys sorted
}

func prescriptRun(ctx context.Context, e *env, o prescriptOptions) error {
	runDir := o.RunDir
	if runDir == "" {
		dir, err := os.MkdirTemp("", "forgectx-prescript-")
		if err != nil {
			return fmt.Errorf("create run directory: %w", err)
		}
		defer os.RemoveAll(dir)
		runDir = dir
	}
	d, err := prescript.Run(ctx, prescript.Options{
		RunDir:         runDir,
		Command:        o.Command,
		Env:            e.Environ(),
		Stdout:         e.Stderr, // the script's output is job log, stdout is the decision's
		Stderr:         e.Stderr,
		SecretEnvNames: o.SecretEnv,
		Timeout:        o.Timeout,
		Log:            &e.Log,
	})
	if err != nil {
		return prescriptFailure(e, err)
	}
	if _, err := cirelay.Relay(cirelay.Options{Getenv: e.Getenv, DotenvPath: o.Dotenv, Log: &e.Log}, d); err != nil {
		return fmt.Errorf("relay decision: %w", err)
	}
	out := decisionJSON{Skipped: d.Skipped, Reason: d.Reason, Outputs: map[string]string{}}
	for _, kv := range d.Outputs {
		out.Outputs[kv.Key] = kv.Value
	}
	enc := json.NewEncoder(e.Stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
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
	if e.Getenv("GITHUB_ACTIONS") == "true" {
		fmt.Fprintln(e.Stderr, (&githubactions.Command{Name: "error", Message: "pre-script failed: " + msg}).String())
	}
	return &exitError{Code: exitFailed, Err: &gateError{msg: "pre-script failed: " + msg, err: err}}
}

// gateError prints its chosen message while keeping the typed error reachable (errors.As).
type gateError struct {
	msg string
	err error
}

func (g *gateError) Error() string { return g.msg }
func (g *gateError) Unwrap() error { return g.err }
