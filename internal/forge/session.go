package forge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/internal/platform/safeout"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// AcquireDeadline bounds one whole acquisition (every forge, every command).
const AcquireDeadline = 15 * time.Minute

// Source is the flags of a command that reads one entity from a forge (`forgectx snapshot`):
// values, never the token itself (TokenEnv names its variable).
type Source struct {
	Forge        string
	Repo         string
	Number       int
	APIURL       string
	TokenEnv     string
	Record       string // cassette directory to record into
	Replay       string // cassette directory to replay from (offline)
	InsecureHTTP bool
	// Concurrency is --concurrency: requests in flight per host (0: DefaultConcurrency).
	Concurrency int
}

// Session is an opened Source: the provider, the entity and the clients, plus the cassette
// replayer when replaying (to report unused responses).
type Session struct {
	Provider Provider
	Ref      Ref
	Conn     *Conn
	Token    string // the credential read (registered with the filter by the caller)
	replayer *cassette.Replayer
	pool     *Pool
	log      zerolog.Logger
}

// Open applies the replay, record, token and transport policy to src and opens the provider:
// --replay serves every request from a cassette (offline, no token; the recorded API URL is
// the default, so source.host is the recorded one; recorded waits are not waited again);
// otherwise the token comes from the variable --token-env names (or the provider's default)
// and --record records the run with the token stripped. Every refusal is a *ConfigError and
// happens before any request.
func Open(src Source, getenv func(string) string, log zerolog.Logger) (*Session, error) {
	p, err := Resolve("--forge", src.Forge)
	if err != nil {
		return nil, err
	}
	pol := p.Policy()
	if src.Record != "" && src.Replay != "" {
		return nil, &ConfigError{Field: "--record/--replay", Rule: "mutually exclusive"}
	}
	if pol.ValidateRepo != nil {
		if err := pol.ValidateRepo(src.Repo); err != nil {
			return nil, &ConfigError{Field: "--repo", Rule: pol.RepoRule, Err: err}
		}
	}
	o := Options{APIURL: src.APIURL, TokenEnv: src.TokenEnv, InsecureHTTP: src.InsecureHTTP, Log: log, Concurrency: src.Concurrency}
	s := &Session{Provider: p, log: log}
	if src.Replay != "" {
		if err := s.replay(src, &o); err != nil {
			return nil, err
		}
	} else if err := s.live(src, pol, getenv, &o); err != nil {
		return nil, err
	}
	if o.APIURL == "" {
		o.APIURL = pol.DefaultAPIURL
	}
	o.Record = src.Record
	o.Pool = NewPool(o.Concurrency, log)
	s.pool = o.Pool
	conn, err := Connect(p, o, src.Replay == "")
	if err != nil {
		return nil, err
	}
	s.Conn, s.Token = conn, o.Token
	s.Ref = Ref{Forge: p.Name(), APIURL: o.APIURL, Repo: src.Repo, Number: src.Number}
	return s, nil
}

func (s *Session) replay(src Source, o *Options) error {
	c, err := cassette.Load(src.Replay)
	if err != nil {
		return &ConfigError{Field: "--replay " + src.Replay, Rule: "unreadable cassette", Err: err}
	}
	name := s.Provider.Name()
	if c.Meta.Forge != "" && c.Meta.Forge != name {
		return &ConfigError{Field: "--replay " + src.Replay, Rule: fmt.Sprintf("cassette was recorded for forge %q, not %s", c.Meta.Forge, name)}
	}
	if s.replayer, err = cassette.NewReplayer(c); err != nil {
		return &ConfigError{Field: "--replay " + src.Replay, Rule: "unusable cassette", Err: err}
	}
	o.Transport = s.replayer
	if o.APIURL == "" {
		o.APIURL = c.Meta.APIURL
	}
	o.Retry = Offline
	return nil
}

func (s *Session) live(src Source, pol Policy, getenv func(string) string, o *Options) error {
	if o.APIURL == "" && pol.DefaultAPIURL == "" {
		return &ConfigError{Field: "--api-url", Rule: pol.APIURLRule}
	}
	name := src.TokenEnv
	if name == "" {
		name = pol.DefaultTokenEnv
	}
	if name == "" {
		s.log.Warn().Str("forge", s.Provider.Name()).Msg("no --token-env: reading the forge unauthenticated (public data only)")
		return nil
	}
	o.TokenEnv = name
	o.Token = getenv(name)
	if o.Token == "" {
		rule := "the environment variable is unset or empty"
		if pol.TokenRule != "" {
			rule += " (" + pol.TokenRule + ")"
		}
		return &ConfigError{Field: "--token-env " + name, Rule: rule}
	}
	return nil
}

// Acquire reads the session's entity under AcquireDeadline. The statistics, when the adapter
// kept any, are logged (counts only) whether or not the acquisition succeeded.
func (s *Session) Acquire(ctx context.Context, profile acquisition.Profile) (*acquisition.Acquisition, error) {
	ctx, cancel := context.WithTimeout(ctx, AcquireDeadline)
	defer cancel()
	acq, err := s.Conn.Acquirer.Acquire(ctx, s.Ref, profile)
	if st := s.Stats(); st != nil {
		sum := st.Summary()
		s.log.Info().Str("forge", s.Ref.Forge).Int("requests", sum.Requests).Int("retries", sum.Retries).
			Int("lower_bound", sum.LowerBound).Float64("ratio", sum.Ratio).Msg("acquisition finished")
	}
	if s.replayer != nil {
		if unused := s.replayer.Unused(); len(unused) > 0 && err == nil {
			s.log.Warn().Int("unused_responses", len(unused)).Msg("replay: the cassette holds responses this run never requested")
		}
	}
	if err != nil {
		var ef EntityFailure
		if errors.As(err, &ef) {
			code, field := ef.EntityFailure()
			s.log.Error().Str("scope", "entity").Str("code", code).Str("field", field).Msg("entity not acquired")
		}
		return nil, fmt.Errorf("acquire: %s: %w", s.Ref.Forge, err)
	}
	return acq, nil
}

// Stats are the statistics of the session's last acquisition (nil when none were kept).
func (s *Session) Stats() *Stats {
	if s.Conn.Stats == nil {
		return nil
	}
	return s.Conn.Stats()
}

// WriteStats writes the --stats document to path through internal/platform/safeout: created 0600 if new
// (like every file forgectx writes), a regular file replaced whole, anything else (a device, a
// directory, a dangling link) refused, so --stats can never destroy what it names.
func (s *Session) WriteStats(path string) error {
	st := s.Stats()
	if st == nil {
		return errors.New("--stats: no statistics were collected")
	}
	if s.pool != nil {
		cp := *st
		t := s.pool.Timing()
		cp.Timing = &t
		st = &cp
	}
	var b bytes.Buffer
	if err := st.WriteJSON(&b); err != nil {
		return fmt.Errorf("--stats: %w", err)
	}
	if err := safeout.WriteFile(path, b.Bytes(), safeout.Options{}); err != nil {
		return fmt.Errorf("--stats %w", err)
	}
	return nil
}

// Connect opens the provider and checks o against the transport policy (when live: a replay
// sends nothing). `forgectx run`, `status reconcile` and Open all connect through here. With
// o.Record the provider's Transport is a cassette recorder (the token stripped): recording is
// configured here once, for every forge.
func Connect(p Provider, o Options, live bool) (*Conn, error) {
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.Pool == nil {
		o.Pool = NewPool(o.Concurrency, o.Log)
	}
	if o.Record != "" {
		if o.Transport == nil {
			o.Transport = o.Pool.Base()
		}
		var secrets []string
		if o.Token != "" {
			secrets = []string{o.Token}
		}
		rec, err := cassette.NewRecorder(o.Record, o.Transport, cassette.RecorderOptions{
			Meta: cassette.Meta{Forge: p.Name(), APIURL: strings.TrimSuffix(o.APIURL, "/")}, Secrets: secrets,
		})
		if err != nil {
			return nil, &ConfigError{Field: "--record " + o.Record, Rule: "cannot record here", Err: err}
		}
		o.Transport = rec
	}
	// The provider validates the URL first (its rules name its own shape, e.g. /api/v1);
	// Open makes no request, so the policy still runs before the first one.
	conn, err := p.Open(o)
	if err != nil {
		return nil, err
	}
	if live {
		if err := CheckAPIURL(o.APIURL, o.InsecureHTTP, o.Log); err != nil {
			return nil, err
		}
	}
	return conn, nil
}

// InsecureHTTPRule is the transport policy as the error states it.
const InsecureHTTPRule = "must be https: plain http is allowed only to a loopback host (127.0.0.0/8, ::1, localhost) or with --insecure-http, because the token would cross the network in clear"

// CheckAPIURL is the one transport policy: an API URL must be https, except to a loopback
// host or when insecure (--insecure-http, logged as a warning). It runs before any request,
// so no credential is ever sent in clear to another machine.
func CheckAPIURL(apiURL string, insecure bool, log zerolog.Logger) error {
	u, err := url.Parse(apiURL)
	if err != nil || u.Host == "" {
		return &ConfigError{Field: "--api-url", Rule: "must be an absolute https URL", Err: err}
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return nil
	case "http":
	default:
		return &ConfigError{Field: "--api-url", Rule: "must be an absolute https URL (scheme " + u.Scheme + ")"}
	}
	if IsLoopback(u.Hostname()) {
		return nil
	}
	if insecure {
		log.Warn().Str("host", u.Hostname()).Msg("--insecure-http: the token is sent over plain http to a non-loopback host")
		return nil
	}
	return &ConfigError{Field: "--api-url", Rule: InsecureHTTPRule}
}

// IsLoopback reports whether host is localhost or a loopback IP literal (127.0.0.0/8, ::1).
func IsLoopback(host string) bool {
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// EntityError is the one typed entity-scope acquisition failure of every adapter: the spec's
// code (not_found, authorization_failed, fetch_failed, …) and the field or source it is about.
//
// Forge prefixes the message ("github: entity …"); it is empty where the adapter's message has
// always been unprefixed (Forgejo's, which the session wraps as "acquire: forgejo: entity …").
// Field is empty where the error's text already names the field.
type EntityError struct {
	Forge string
	Code  string
	Field string
	Err   error
}

func (e *EntityError) Error() string {
	msg := "entity " + e.Code
	if e.Forge != "" {
		msg = e.Forge + ": " + msg
	}
	if e.Field != "" {
		msg += " (" + e.Field + ")"
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *EntityError) Unwrap() error { return e.Err }

// EntityFailure implements the EntityFailure interface.
func (e *EntityError) EntityFailure() (code, field string) { return e.Code, e.Field }

// EntityFailure is what every adapter's entity-scope error offers, whatever its type: the
// spec's code and the field it is about, for the one log line (never the error's text).
type EntityFailure interface {
	error
	EntityFailure() (code, field string)
}
