// Package gate composes the pre-script gate end to end — run the pre-script under the
// pre-script output protocol v1 (pkg/prescript), relay the decision to CI (pkg/cirelay,
// the spec's "CI relay" section), and print the decision JSON — so that `forgectx prescript`
// and later `forgectx run` make one call for it.
//
// The decision JSON is one object and a newline:
//
//	{"skipped":true,"reason":"…","outputs":{"k":"v"}}
//
// with the fields in that order, outputs sorted bytewise by key ({} when none), reason "" when
// none, and no HTML escaping. It is written only after the relay succeeded: a decision that
// could not be relayed is a failed run and prints nothing.
package gate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/forgectx/forgectx/pkg/cirelay"
	"github.com/forgectx/forgectx/pkg/prescript"
)

// Options configure one gate.
type Options struct {
	// Prescript runs the script; an empty RunDir means a fresh temporary directory, removed
	// afterwards.
	Prescript prescript.Options
	// None means the harness defines no pre-script: relay and print the proceed decision.
	None bool
	// Relay selects the CI relay targets.
	Relay cirelay.Options
	// Decision receives the decision JSON; nil skips printing.
	Decision io.Writer
}

// RelayError is a decision that was reached but could not be relayed; the run must fail.
type RelayError struct{ Err error }

func (e *RelayError) Error() string { return "relay decision: " + e.Err.Error() }
func (e *RelayError) Unwrap() error { return e.Err }

// PrintError is a decision that was reached and relayed but could not be printed.
type PrintError struct{ Err error }

func (e *PrintError) Error() string { return "print decision: " + e.Err.Error() }
func (e *PrintError) Unwrap() error { return e.Err }

// Run runs the gate. Errors are those of prescript.Run (*prescript.HardFailure,
// *prescript.ProtocolError, start errors), a *RelayError, or a *PrintError.
func Run(ctx context.Context, opts Options) (prescript.Decision, error) {
	d := prescript.NoPrescript()
	if !opts.None {
		po := opts.Prescript
		if po.RunDir == "" {
			dir, err := os.MkdirTemp("", "forgectx-prescript-")
			if err != nil {
				return prescript.Decision{}, fmt.Errorf("create run directory: %w", err)
			}
			defer os.RemoveAll(dir)
			po.RunDir = dir
		}
		var err error
		if d, err = prescript.Run(ctx, po); err != nil {
			return prescript.Decision{}, err
		}
	}
	if _, err := cirelay.Relay(opts.Relay, d); err != nil {
		return d, &RelayError{Err: err}
	}
	if opts.Decision != nil {
		if err := WriteJSON(opts.Decision, d); err != nil {
			return d, &PrintError{Err: err}
		}
	}
	return d, nil
}

// decisionJSON fixes the field order of the printed decision.
type decisionJSON struct {
	Skipped bool              `json:"skipped"`
	Reason  string            `json:"reason"`
	Outputs map[string]string `json:"outputs"` // encoding/json writes map keys sorted
}

// WriteJSON writes d as the one-line decision object.
func WriteJSON(w io.Writer, d prescript.Decision) error {
	out := decisionJSON{Skipped: d.Skipped, Reason: d.Reason, Outputs: make(map[string]string, len(d.Outputs))}
	for _, kv := range d.Outputs {
		out.Outputs[kv.Key] = kv.Value
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}
