package main

import (
	"context"
	"fmt"

	"github.com/forgectx/forgectx/internal/platform/inputfile"

	"github.com/forgectx/forgectx/internal/event/distill"
	"github.com/forgectx/forgectx/internal/filter"
)

// distillOptions is `forgectx distill`'s flags.
type distillOptions struct {
	Forge   string
	Event   string
	Payload string
	MaxText int
}

// secretEnvNames are CI credentials registered with the filter as literal secrets, beyond the
// *_TOKEN variables filter.SecretEnvValues already picks up.
var secretEnvNames = []string{"CI_JOB_JWT", "CI_JOB_JWT_V1", "CI_JOB_JWT_V2", "CI_REGISTRY_PASSWORD", "CI_DEPENDENCY_PROXY_PASSWORD"}

func init() {
	register(&command{
		Name:    "distill",
		Summary: "print the triggering webhook event as a lean JSON excerpt for a prompt",
		Run: func(ctx context.Context, e *env, args []string) error {
			var o distillOptions
			fs := newFlagSet(e, "distill", "distill [--event NAME] [--payload FILE|-] [--forge github|gitlab|forgejo] [--max-text N]")
			fs.StringVar(&o.Forge, "forge", "", "payload dialect: github, gitlab or forgejo (default: from the CI environment)")
			fs.StringVar(&o.Event, "event", "", "event name (default: GITHUB_EVENT_NAME; GitLab: the payload's object_kind; X-Gitlab-Event values such as \"Note Hook\" are accepted)")
			fs.StringVar(&o.Payload, "payload", "", "webhook payload file, - for stdin (default: GITHUB_EVENT_PATH; GitLab: TRIGGER_PAYLOAD)")
			fs.IntVar(&o.MaxText, "max-text", distill.DefaultMaxTextChars, fmt.Sprintf("cap per free-text field in characters, marker included (at least %d)", distill.MinCapChars))
			if err := parseFlags(fs, args); err != nil {
				return err
			}
			if fs.NArg() > 0 {
				return usagef("takes no arguments")
			}
			return runDistill(e, o)
		},
	})
}

// runDistill validates the options and makes the one call into internal/event/distill. Malformed or missing
// input is not an error: the excerpt is {} and a warning goes to the log (stderr), so a CI step
// never fails on an event it cannot read.
func runDistill(e *env, o distillOptions) error {
	in := distill.CIInput{Event: o.Event, PayloadPath: o.Payload, Stdin: e.Stdin, Getenv: e.Getenv}
	if o.Forge != "" {
		f, ok := distill.ParseForge(o.Forge)
		if !ok {
			return usagef("--forge: %q is not github, gitlab or forgejo", o.Forge)
		}
		in.Forge = f
	}
	if o.MaxText < distill.MinCapChars {
		return usagef("--max-text: %d is below the minimum of %d characters", o.MaxText, distill.MinCapChars)
	}
	// A payload file the operator named that cannot be read is a mistyped flag, not an event
	// without content: exit 2 naming the path. (A path from the CI environment stays fail
	// safe: {} and a warning naming it.)
	if err := checkPayloadFlag(o.Payload); err != nil {
		return err
	}
	opts := distill.Options{
		MaxTextChars: o.MaxText,
		Filter:       filter.New(filter.SecretEnvValues(e.Environ(), secretEnvNames)),
	}
	out, rep := distill.FromCI(in, opts)
	if rep.Warning != "" {
		ev := e.Log.Warn().Str("code", rep.Warning).Str("forge", string(rep.Forge))
		if rep.PayloadPath != "" {
			ev = ev.Str("payload", rep.PayloadPath).Str("payload_from", rep.PayloadFrom)
		}
		if rep.PayloadErr != nil {
			ev = ev.Str("cause", rep.PayloadErr.Error())
		}
		ev.Msg("distill: no excerpt could be made from the event payload; printing {}")
	} else {
		e.Log.Debug().Str("forge", string(rep.Forge)).Str("event", rep.Event).Str("rule", rep.Rule).
			Int("fields", rep.Fields).Int("truncated", len(rep.Truncated)).Int("omitted", len(rep.Omitted)).
			Int("findings", len(rep.Findings)).Int("excerpt_bytes", len(out)).Msg("distill: excerpt")
	}
	for _, om := range rep.Omitted {
		if om.Code == distill.OmitFilterError {
			e.Log.Warn().Str("field", om.Field).Str("code", om.Code).Msg("distill: field left out")
		}
	}
	if _, err := e.Stdout.Write(append(out, '\n')); err != nil {
		return fmt.Errorf("distill: writing the excerpt: %w", err)
	}
	return nil
}

// checkPayloadFlag rejects a --payload file that does not exist, cannot be opened or is not
// a regular file (a directory, a FIFO, a device: internal/platform/inputfile). "-" (stdin) and an unset flag
// pass.
func checkPayloadFlag(path string) error {
	if path == "" || path == "-" {
		return nil
	}
	return inputErr("--payload", inputfile.Check(path))
}
