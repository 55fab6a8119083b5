package run

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/cassette"
)

// A replayed run (Options.Replay, `forgectx run --replay DIR`, docs/run.md "Trying a run
// offline") reads the forge from a recorded cassette (docs/cassettes.md) — the status comment
// lookup, the token identity where the forge asks for it, the acquisition and its receipts —
// and sends nothing anywhere. Its comment writes (the ⏳ start comment, the completion edit,
// the receipt) cannot be answered from a recording (their bodies carry this run's times and
// receipt id), so they go to the offline sink instead: one JSON line per write on
// Options.Posts, exactly the body the forge would have received.

// resolveReplay loads the cassette of --replay and applies its header to the options before
// the CI defaults are resolved: the recorded forge unless --forge names one (another is a
// configuration error), the recorded API URL unless --api-url names one (so the snapshot's
// source.host is the recorded one).
func resolveReplay(o *Options, c *config) error {
	if o.Replay == "" {
		return nil
	}
	cas, err := cassette.Load(o.Replay)
	if err != nil {
		return &ConfigError{Field: "--replay " + o.Replay, Rule: "unreadable cassette", Err: err}
	}
	if o.Forge == "" {
		o.Forge = cas.Meta.Forge
	}
	if cas.Meta.Forge != "" && cas.Meta.Forge != o.Forge {
		return &ConfigError{Field: "--replay " + o.Replay, Rule: fmt.Sprintf("cassette was recorded for forge %q, not %s", cas.Meta.Forge, o.Forge)}
	}
	if o.APIURL == "" {
		o.APIURL = cas.Meta.APIURL
	}
	if c.replayer, err = cassette.NewReplayer(cas); err != nil {
		return &ConfigError{Field: "--replay " + o.Replay, Rule: "unusable cassette", Err: err}
	}
	return nil
}

// offlineToken stands in for the forge token of a replayed run when none is set: the
// replayer ignores credentials, and nothing is sent.
const offlineToken = "forgectx-replay-offline-token"

// Post is one comment write of a replayed run, as the offline sink prints it (one JSON object
// per line, in the order the run made them).
type Post struct {
	// Op is "create" or "update".
	Op string `json:"op"`
	// ID is the comment edited (update), or the id the sink gave the created comment:
	// offline-1, offline-2, … in creation order.
	ID string `json:"id"`
	// Body is the exact comment body the forge would have received.
	Body string `json:"body"`
}

// offlineCommenter reads comments through the replayed forge's commenter and writes none: each
// create or update is a Post on w.
type offlineCommenter struct {
	read forge.Commenter
	mu   sync.Mutex
	w    io.Writer
	n    int
}

func (c *offlineCommenter) FindComments(ctx context.Context, ref forge.Ref, marker string) ([]forge.Comment, error) {
	return c.read.FindComments(ctx, ref, marker)
}

func (c *offlineCommenter) CreateComment(ctx context.Context, _ forge.Ref, body string) (forge.Comment, error) {
	if err := ctx.Err(); err != nil {
		return forge.Comment{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	id := "offline-" + strconv.Itoa(c.n)
	if err := c.post(Post{Op: "create", ID: id, Body: body}); err != nil {
		return forge.Comment{}, err
	}
	return forge.Comment{ID: id, Body: body}, nil
}

func (c *offlineCommenter) UpdateComment(ctx context.Context, _ forge.Ref, id, body string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.post(Post{Op: "update", ID: id, Body: body})
}

func (c *offlineCommenter) post(p Post) error {
	// Encode writes one line; HTML is not escaped, so the bodies read as posted.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return err
	}
	if _, err := c.w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("offline sink: %w", err)
	}
	return nil
}

// logUnused reports recorded responses a replayed run never asked for (a cassette from
// another entity or adapter version shows up here), as a count.
func (r *runner) logUnused() {
	if r.c.replayer == nil {
		return
	}
	if unused := r.c.replayer.Unused(); len(unused) > 0 {
		r.log.Warn().Int("unused_responses", len(unused)).Msg("replay: the cassette holds responses this run never requested")
	}
}
