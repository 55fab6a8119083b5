package distill

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/forgectx/forgectx/internal/platform/inputfile"
)

// Warning codes for the CI input (see Report.Warning).
const (
	warnPayloadMissing    = "payload_missing"    // no --payload and no CI variable names one
	warnPayloadUnreadable = "payload_unreadable" // the named file or stdin could not be read
)

// CIInput says where the triggering event comes from. Empty fields take the CI environment's
// defaults:
//
//   - Forge: gitlab when GITLAB_CI=true, forgejo when FORGEJO_ACTIONS or GITEA_ACTIONS is true,
//     else github.
//   - GitHub and Forgejo Actions: Event from GITHUB_EVENT_NAME, the payload from the file named by
//     GITHUB_EVENT_PATH.
//   - GitLab: the payload from TRIGGER_PAYLOAD (a file variable: its value is a path; a value that
//     starts with "{" is taken as the payload itself); the event from the payload's object_kind.
type CIInput struct {
	Forge       Forge
	Event       string
	PayloadPath string // "-" reads Stdin
	Stdin       io.Reader
	Getenv      func(string) string
}

// detectForge picks the forge from the CI environment.
func detectForge(getenv func(string) string) Forge {
	switch {
	case getenv("GITLAB_CI") == "true":
		return gitLab
	case getenv("FORGEJO_ACTIONS") == "true", getenv("GITEA_ACTIONS") == "true":
		return Forgejo
	}
	return gitHub
}

// FromCI resolves the input against the environment, reads the payload and distils it. Like
// Excerpt it always returns valid JSON; a missing or unreadable payload is {} with a warning.
func FromCI(in CIInput, opts Options) ([]byte, Report) {
	opts = opts.withDefaults()
	getenv := in.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	forge := in.Forge
	if forge == "" {
		forge = detectForge(getenv)
	}
	event, src, from := in.Event, in.PayloadPath, "--payload"
	var inline []byte
	switch forge {
	case gitLab:
		if src == "" {
			v := getenv("TRIGGER_PAYLOAD")
			if strings.HasPrefix(strings.TrimSpace(v), "{") {
				inline = []byte(v)
			} else {
				src, from = v, "TRIGGER_PAYLOAD"
			}
		}
	default:
		if event == "" {
			event = getenv("GITHUB_EVENT_NAME")
		}
		if src == "" {
			src, from = getenv("GITHUB_EVENT_PATH"), "GITHUB_EVENT_PATH"
		}
	}
	payload := inline
	if payload == nil {
		if src == "" {
			return empty, Report{Forge: forge, Warning: warnPayloadMissing}
		}
		b, err := readPayload(src, in.Stdin, opts.MaxPayloadBytes)
		if err != nil {
			return empty, Report{Forge: forge, Warning: warnPayloadUnreadable, PayloadPath: src, PayloadFrom: from, PayloadErr: err}
		}
		payload = b
	}
	out, rep := Excerpt(forge, event, payload, opts)
	if inline == nil {
		rep.PayloadPath, rep.PayloadFrom = src, from
	}
	return out, rep
}

// readPayload reads at most limit+1 bytes so that an oversized payload is reported as too large
// by Excerpt without being read whole.
func readPayload(src string, stdin io.Reader, limit int) ([]byte, error) {
	var r io.Reader
	if src == "-" {
		if stdin == nil {
			return nil, fmt.Errorf("no stdin")
		}
		r = stdin
	} else {
		f, err := inputfile.Open(src)
		if err != nil {
			return nil, bare(err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	return b, bare(err)
}

// bare drops an *os.PathError's path: the report names the path itself.
func bare(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
