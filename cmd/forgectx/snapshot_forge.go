package main

import (
	"context"

	"github.com/forgectx/forgectx/pkg/acquisition"
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

// acquireFromForge reads the entity named by o from its forge into the neutral model.
// The forge adapters (pkg/forge/<name>) plug in here.
func acquireFromForge(ctx context.Context, e *env, o forgeOptions, profile acquisition.Profile) (*acquisition.Acquisition, error) {
	return nil, usagef("--forge %s: no adapter for this forge in this build", o.Forge)
}
