package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/forgectx/forgectx/pkg/acquisition"
	"github.com/forgectx/forgectx/pkg/forge"
	"github.com/forgectx/forgectx/pkg/forge/cassette"
	"github.com/forgectx/forgectx/pkg/forge/gitlab"
)

// gitlabAcquireTimeout bounds one whole GitLab acquisition when the caller set no deadline.
const gitlabAcquireTimeout = 15 * time.Minute

// acquireGitlab is `forgectx snapshot --forge gitlab`: it wires the flags into
// pkg/forge/gitlab (token from the variable --token-env names, --record/--replay cassettes,
// --stats) and makes the one Acquire call. --repo is the project's full path or numeric id;
// --number is the merge-request iid for a change_proposal profile and the issue iid for a
// work_item profile.
func acquireGitlab(ctx context.Context, e *env, o forgeOptions, p acquisition.Profile) (*acquisition.Acquisition, error) {
	if o.Record != "" && o.Replay != "" {
		return nil, usagef("--record and --replay are mutually exclusive")
	}
	if err := gitlab.ValidateRepo(o.Repo); err != nil {
		return nil, usagef("--repo: %v", err)
	}
	opts := gitlab.Options{APIURL: o.APIURL, Log: e.Log}
	var replayer *cassette.Replayer
	switch {
	case o.Replay != "":
		c, err := cassette.Load(o.Replay)
		if err != nil {
			return nil, usagef("--replay %s: %v", o.Replay, err)
		}
		if c.Meta.Forge != "" && c.Meta.Forge != "gitlab" {
			return nil, usagef("--replay %s: cassette was recorded against %s, not gitlab", o.Replay, c.Meta.Forge)
		}
		if opts.APIURL == "" {
			opts.APIURL = c.Meta.APIURL
		}
		if replayer, err = cassette.NewReplayer(c); err != nil {
			return nil, usagef("--replay %s: %v", o.Replay, err)
		}
		opts.HTTPClient = &http.Client{Transport: replayer}
		opts.RetryWaitMin, opts.RetryWaitMax = time.Millisecond, time.Millisecond
	default:
		if o.TokenEnv != "" {
			opts.Token = e.Getenv(o.TokenEnv)
			if opts.Token == "" {
				return nil, usagef("--token-env %s: the variable is unset or empty", o.TokenEnv)
			}
			opts.TokenKind = gitlab.KindForToken(o.TokenEnv, opts.Token)
		} else {
			e.Log.Warn().Msg("no --token-env: reading GitLab unauthenticated (public projects only)")
		}
	}
	if opts.APIURL == "" {
		opts.APIURL = gitlab.DefaultAPIURL
	}
	if o.Record != "" {
		var secrets []string
		if opts.Token != "" {
			secrets = []string{opts.Token}
		}
		rec, err := cassette.NewRecorder(o.Record, nil, cassette.RecorderOptions{
			Meta: cassette.Meta{Forge: "gitlab", APIURL: opts.APIURL}, Secrets: secrets,
		})
		if err != nil {
			return nil, usagef("--record %s: %v", o.Record, err)
		}
		opts.HTTPClient = &http.Client{Transport: rec}
	}
	client, err := gitlab.New(opts)
	if err != nil {
		return nil, usagef("--api-url: %v", err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, gitlabAcquireTimeout)
		defer cancel()
	}
	acq, err := client.Acquire(ctx, forge.Ref{Forge: "gitlab", APIURL: opts.APIURL, Repo: o.Repo, Number: o.Number}, p)
	if err != nil {
		var ee *gitlab.EntityError
		if errors.As(err, &ee) {
			e.Log.Error().Str("scope", "entity").Str("code", ee.Code).Str("field", ee.Field).Msg("gitlab entity not acquired")
		}
		if errors.Is(err, cassette.ErrNotRecorded) {
			return nil, fmt.Errorf("gitlab: replay: %w", err)
		}
		return nil, fmt.Errorf("gitlab: %w", err)
	}
	if replayer != nil {
		if unused := replayer.Unused(); len(unused) > 0 {
			e.Log.Warn().Int("unused_interactions", len(unused)).Msg("replay left recorded responses unused")
		}
	}
	if o.Stats != "" {
		if err := writeGitlabStats(o.Stats, client.Stats()); err != nil {
			return nil, err
		}
	}
	return acq, nil
}

func writeGitlabStats(path string, s *gitlab.Stats) error {
	if s == nil {
		return errors.New("gitlab: --stats: no statistics were collected")
	}
	if err := writeStats(path, s); err != nil {
		return fmt.Errorf("gitlab: %w", err)
	}
	return nil
}
