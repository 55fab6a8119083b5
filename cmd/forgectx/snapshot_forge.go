package main

import (
	"context"
	"errors"

	"github.com/forgectx/forgectx/internal/forge"
	_ "github.com/forgectx/forgectx/internal/forge/providers" // registers every forge of this build
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// forgeOptions are the `forgectx snapshot` flags that select and reach a live (or recorded)
// forge; internal/forge applies the replay, record, token and transport policy to them.
type forgeOptions struct {
	Forge        string
	Repo         string
	Number       int
	APIURL       string
	TokenEnv     string // name of the environment variable holding the token (never the value)
	Record       string // cassette directory to record into
	Replay       string // cassette directory to replay from (offline)
	Stats        string // file to write request statistics JSON into
	InsecureHTTP bool
	Concurrency  int // --concurrency (0: forge.DefaultConcurrency)
}

// acquireFromForge reads the entity named by o from its forge into the neutral model, through
// the forge registry: one path for every forge.
func acquireFromForge(ctx context.Context, e *env, o forgeOptions, profile acquisition.Profile) (*acquisition.Acquisition, error) {
	s, err := forge.Open(forge.Source{Forge: o.Forge, Repo: o.Repo, Number: o.Number, APIURL: o.APIURL, TokenEnv: o.TokenEnv,
		Record: o.Record, Replay: o.Replay, InsecureHTTP: o.InsecureHTTP, Concurrency: o.Concurrency}, e.Getenv, e.Log)
	if err != nil {
		var ce *forge.ConfigError
		if errors.As(err, &ce) {
			return nil, usagef("%v", err)
		}
		return nil, err
	}
	acq, err := s.Acquire(ctx, profile)
	if o.Stats != "" && s.Stats() != nil {
		if werr := s.WriteStats(o.Stats); werr != nil {
			return nil, werr
		}
	}
	return acq, err
}
