package main

import (
	"context"
	"fmt"
	"time"

	"github.com/forgectx/forgectx/pkg/acquisition"
	"github.com/forgectx/forgectx/pkg/forge"
	"github.com/forgectx/forgectx/pkg/forge/cassette"
	"github.com/forgectx/forgectx/pkg/forge/forgejo"
)

// defaultForgejoTokenEnv is read when --token-env is not given.
const defaultForgejoTokenEnv = "FORGEJO_TOKEN"

// forgejoDeadline bounds one whole Forgejo acquisition.
const forgejoDeadline = 15 * time.Minute

// acquireForgejo wires the `forgectx snapshot --forge forgejo` flags into forgejo.Options:
// --replay serves every request from a cassette (offline, no token; the recorded API URL is
// the default, so source.host is the recorded one); otherwise --api-url is required, the
// token comes from the variable --token-env names (default FORGEJO_TOKEN) and --record
// records the run into a new cassette with the token stripped.
func acquireForgejo(ctx context.Context, e *env, o forgeOptions, profile acquisition.Profile) (*acquisition.Acquisition, error) {
	if o.Record != "" && o.Replay != "" {
		return nil, usagef("--record and --replay are mutually exclusive")
	}
	if err := forgejo.ValidateRepo(o.Repo); err != nil {
		return nil, usagef("--repo: %v", err)
	}
	opts := forgejo.Options{APIURL: o.APIURL, Log: e.Log}
	var replayer *cassette.Replayer
	if o.Replay != "" {
		c, err := cassette.Load(o.Replay)
		if err != nil {
			return nil, usagef("--replay %s: %v", o.Replay, err)
		}
		if c.Meta.Forge != "" && c.Meta.Forge != forgejo.Forge {
			return nil, usagef("--replay %s: cassette was recorded for forge %q, not forgejo", o.Replay, c.Meta.Forge)
		}
		if replayer, err = cassette.NewReplayer(c); err != nil {
			return nil, usagef("--replay %s: %v", o.Replay, err)
		}
		opts.Transport = replayer
		if opts.APIURL == "" {
			opts.APIURL = c.Meta.APIURL
		}
		// Recorded failures need not be waited out again offline.
		opts.RetryWaitMin, opts.RetryWaitMax = time.Millisecond, time.Millisecond
	} else {
		if opts.APIURL == "" {
			return nil, usagef("--api-url is required for --forge forgejo (the server URL plus /api/v1)")
		}
		name := o.TokenEnv
		if name == "" {
			name = defaultForgejoTokenEnv
		}
		opts.Token = e.Getenv(name)
		if opts.Token == "" {
			return nil, usagef("--token-env %s: the environment variable is unset or empty (role lookups need a token with repository admin access)", name)
		}
		if o.Record != "" {
			rec, err := cassette.NewRecorder(o.Record, nil, cassette.RecorderOptions{
				Meta:    cassette.Meta{Forge: forgejo.Forge, APIURL: opts.APIURL},
				Secrets: []string{opts.Token},
			})
			if err != nil {
				return nil, usagef("--record %s: %v", o.Record, err)
			}
			opts.Transport = rec
		}
	}
	client, err := forgejo.New(opts)
	if err != nil {
		return nil, usagef("%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, forgejoDeadline)
	defer cancel()
	acq, err := client.Acquire(ctx, forge.Ref{Forge: forgejo.Forge, APIURL: opts.APIURL, Repo: o.Repo, Number: o.Number}, profile)
	st := client.Stats()
	e.Log.Info().Int("requests", st.Requests).Int("retries", st.Retries).Int("lower_bound", st.LowerBound).Float64("ratio", st.Ratio).Msg("forgejo: acquisition finished")
	if replayer != nil {
		if unused := replayer.Unused(); len(unused) > 0 {
			e.Log.Warn().Int("unused_responses", len(unused)).Msg("forgejo: the cassette holds responses this run never requested")
		}
	}
	if o.Stats != "" {
		if werr := writeStats(o.Stats, st); werr != nil {
			return nil, werr
		}
	}
	if err != nil {
		return nil, fmt.Errorf("acquire: %w", err)
	}
	return acq, nil
}
