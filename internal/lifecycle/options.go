package lifecycle

import (
	"io"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/run/harness"
	"github.com/forgectx/forgectx/pkg/prescript"
)

// Common are the option fields every lifecycle has, embedded in each command's Options so
// that one field has one meaning and one default (Defaults).
type Common struct {
	// Harness supplies the agent (or review engine) command, its environment and timeout, the
	// snapshot profiles, the bot registry and the secrets.
	Harness *harness.Harness
	// APIURL is the forge API base.
	APIURL string
	// TokenEnv names the variable holding the forge token. The value is registered with the
	// filter and never reaches the agent or engine.
	TokenEnv string
	// InsecureHTTP allows a plain-http APIURL to a non-loopback host (--insecure-http). Without
	// it such a URL is a configuration error: the token would cross the network in clear.
	InsecureHTTP bool
	// Concurrency is --concurrency: requests in flight per forge host (0: the default,
	// forge.DefaultConcurrency; docs/request-pool.md).
	Concurrency int
	// Environ is the process environment the run reads (default os.Environ).
	Environ func() []string
	// Stdout and Stderr receive the streams of the processes the run starts, line-redacted
	// (the job log; default io.Discard).
	Stdout, Stderr io.Writer
	// Log is the run's structured log.
	Log zerolog.Logger
	// Now is the clock of receipts and durations (tests pin it); default time.Now.
	Now func() time.Time
	// KillGrace is how long a stopped process gets between SIGTERM and SIGKILL (default
	// prescript.DefaultKillGrace, the one grace for every child forgectx stops).
	KillGrace time.Duration
}

// Defaults fills every unset field of c with its documented default.
func (c *Common) Defaults() {
	if c.Environ == nil {
		c.Environ = os.Environ
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.KillGrace <= 0 {
		c.KillGrace = prescript.DefaultKillGrace
	}
	if c.Stdout == nil {
		c.Stdout = io.Discard
	}
	if c.Stderr == nil {
		c.Stderr = io.Discard
	}
}
