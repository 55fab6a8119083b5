package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/forgectx/forgectx/pkg/acquisition"
	"github.com/forgectx/forgectx/pkg/forge"
	"github.com/forgectx/forgectx/pkg/forge/cassette"
	"github.com/forgectx/forgectx/pkg/forge/github"
	"github.com/forgectx/forgectx/pkg/safeout"
)

// forgeOptions are the `forgectx snapshot` flags that select and reach a live (or recorded)
// forge. cmd/forgectx/snapshot.go parses them; acquireFromForge turns them into an acquisition.
type forgeOptions struct {
	Forge    string // github, gitlab, forgejo
	Repo     string
	Number   int
	APIURL   string
	TokenEnv string // name of the environment variable holding the token (never the value)
	Record   string // cassette directory to record into
	Replay   string // cassette directory to replay from (offline)
	Stats    string // file to write request statistics JSON into
}

// defaultGitHubTokenEnv is read when --token-env is not given.
const defaultGitHubTokenEnv = "GITHUB_TOKEN"

// forgeDeadline bounds one whole acquisition.
const forgeDeadline = 15 * time.Minute

// acquireFromForge reads the entity named by o from its forge into the neutral model.
// The forge adapters (pkg/forge/<name>) plug in here.
func acquireFromForge(ctx context.Context, e *env, o forgeOptions, profile acquisition.Profile) (*acquisition.Acquisition, error) {
	switch o.Forge {
	case "github":
		return acquireGitHub(ctx, e, o, profile)
	case "gitlab":
		return acquireGitlab(ctx, e, o, profile)
	case "forgejo":
		return acquireForgejo(ctx, e, o, profile)
	}
	return nil, usagef("--forge %s: no adapter for this forge in this build", o.Forge)
}

// acquireGitHub wires the flags into github.Options: --replay serves every request from a
// cassette (offline, no token, the recorded API URL as default so source.host is the
// recorded one); otherwise the token is read from the environment variable --token-env names
// and --record, when set, records the run into a new cassette with credentials stripped.
func acquireGitHub(ctx context.Context, e *env, o forgeOptions, profile acquisition.Profile) (*acquisition.Acquisition, error) {
	if o.Record != "" && o.Replay != "" {
		return nil, usagef("--record and --replay are mutually exclusive")
	}
	if _, _, err := github.ParseRepo(o.Repo); err != nil {
		return nil, usagef("--%v", err)
	}
	// Receipts are read from the conversation comments (the same listing as the comments
	// source when both are selected): without a reader agent_runs would silently report no
	// history, which the spec forbids. Every author's receipts are read; the bot registry
	// (--bots) decides admission.
	opts := github.Options{APIURL: o.APIURL, Log: e.Log, Receipts: github.ReceiptsFromComments}
	if o.Replay != "" {
		c, err := cassette.Load(o.Replay)
		if err != nil {
			return nil, usagef("--replay %s: %v", o.Replay, err)
		}
		if c.Meta.Forge != "" && c.Meta.Forge != "github" {
			return nil, usagef("--replay %s: cassette was recorded for forge %q, not github", o.Replay, c.Meta.Forge)
		}
		rp, err := cassette.NewReplayer(c)
		if err != nil {
			return nil, usagef("--replay %s: %v", o.Replay, err)
		}
		opts.Transport = rp
		if opts.APIURL == "" {
			opts.APIURL = c.Meta.APIURL
		}
		// Recorded waits (Retry-After) need not be waited again offline.
		opts.RetryWaitMin, opts.RetryWaitMax, opts.MaxRateLimitWait = time.Millisecond, time.Millisecond, time.Millisecond
	} else {
		name := o.TokenEnv
		if name == "" {
			name = defaultGitHubTokenEnv
		}
		opts.Token = e.Getenv(name)
		if opts.Token == "" {
			return nil, usagef("--token-env %s: the environment variable is unset or empty (GitHub's GraphQL API requires a token)", name)
		}
		opts.Record = o.Record
	}
	client, err := github.New(opts)
	if err != nil {
		return nil, usagef("%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, forgeDeadline)
	defer cancel()
	acq, err := client.Acquire(ctx, forge.Ref{Forge: "github", APIURL: opts.APIURL, Repo: o.Repo, Number: o.Number}, profile)
	if st := client.Stats(); st != nil {
		e.Log.Info().Int("requests", st.Requests).Int("lower_bound", st.LowerBound).Float64("ratio", st.Ratio).Msg("github: acquisition finished")
		if o.Stats != "" {
			if werr := writeStats(o.Stats, st); werr != nil {
				return nil, werr
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("acquire: %w", err)
	}
	return acq, nil
}

// statsWriter is what each adapter's Stats offers for --stats.
type statsWriter interface{ WriteJSON(io.Writer) error }

// writeStats writes an adapter's --stats document to path through pkg/safeout: created 0600
// (like every file forgectx writes), a regular file replaced whole, anything else refused.
// Every adapter's --stats goes through here.
func writeStats(path string, st statsWriter) error {
	var b bytes.Buffer
	if err := st.WriteJSON(&b); err != nil {
		return fmt.Errorf("--stats: %w", err)
	}
	if err := safeout.WriteFile(path, b.Bytes(), safeout.Options{}); err != nil {
		return fmt.Errorf("--stats %w", err)
	}
	return nil
}
