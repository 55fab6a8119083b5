package reviewrun

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/forgectx/forgectx/internal/review/reviewmcp"
	"github.com/forgectx/forgectx/internal/run/harness"
)

// Environment variables the review engine receives (wire names, docs/review-context.md).
const (
	// EnvMCPConfig is the generated MCP configuration file inside the isolated HOME.
	EnvMCPConfig = "FORGECTX_REVIEW_MCP_CONFIG"
	// EnvResultFile is where the engine writes its review result (ocr.review-result/v1).
	EnvResultFile = "FORGECTX_REVIEW_RESULT"
	// EnvRules is the directory holding the repository Rules read at the target SHA
	// (untrusted guidance; the checkout's own rules directory holds the same files for the
	// engine's lifetime).
	EnvRules = "FORGECTX_REVIEW_RULES"
)

// MCPServerName is the one server entry of the generated configuration.
const MCPServerName = "ocr_toolkit"

// mcpConfigRel is the generated configuration's place inside the isolated HOME.
const mcpConfigRel = ".config/forgectx/mcp.json"

// session is one run's private directories, all owner-only under one fresh root:
//
//	root/          0700, removed on every exit
//	  home/        the engine's HOME: only the generated MCP configuration
//	  tmp/         the engine's TMPDIR
//	  store/       the private context store (reviewctx)
//	  snapshot/    the verified entity-context-snapshot the evidence tools serve
//	  mcp/         the server's usage file
//	  out/         the engine's result file, later its projection
//
// When forgectx runs as root the engine runs as the unprivileged engine identity: root/ is
// 0711 (traversable, not listable), home/, tmp/ and out/ belong to the engine identity
// (0700), and store/, snapshot/ and mcp/ stay root's 0700 — the engine reaches the store and
// the snapshot only through the relay to the MCP server forgectx itself runs
// (docs/review-context.md, "Engine identity").
type session struct {
	root, home, tmp, store, snapshot, mcp, out, rules string
	// relay is the abstract Unix socket name of a root run's MCP relay ("@forgectx-review-"
	// and 128 random bits; a filesystem path could exceed the 108-byte sun_path bound under a
	// long --temp-dir). Access is the SO_PEERCRED check of relay.go.
	relay string
	// engine is the identity the engine runs as; nil: this process's own (not root).
	engine *syscall.Credential
}

func newSession(base string, engine *syscall.Credential) (*session, error) {
	if base == "" {
		base = os.TempDir()
	}
	root, err := os.MkdirTemp(base, "forgectx-review-")
	if err != nil {
		return nil, fmt.Errorf("reviewrun: session directory: %w", err)
	}
	s := &session{root: root, engine: engine}
	dirs := []struct {
		p       *string
		name    string
		engines bool // owned by the engine identity when there is one
	}{{&s.home, "home", true}, {&s.tmp, "tmp", true}, {&s.snapshot, "snapshot", false}, {&s.mcp, "mcp", false}, {&s.out, "out", true}, {&s.rules, "rules", true}}
	if engine != nil {
		var rnd [16]byte
		if _, err := rand.Read(rnd[:]); err != nil {
			os.RemoveAll(root)
			return nil, fmt.Errorf("reviewrun: session: %w", err)
		}
		s.relay = "@forgectx-review-" + hex.EncodeToString(rnd[:])
	}
	for _, d := range dirs {
		*d.p = filepath.Join(root, d.name)
		err := os.Mkdir(*d.p, 0o700)
		if err == nil && d.engines {
			err = s.own(*d.p)
		}
		if err != nil {
			os.RemoveAll(root)
			return nil, fmt.Errorf("reviewrun: session directory: %w", err)
		}
	}
	// The store directory is created by reviewctx.CommitStore (it insists on creating or
	// checking it 0700 itself).
	s.store = filepath.Join(root, "store")
	mode := os.FileMode(0o700)
	if engine != nil {
		mode = 0o711 // the engine may traverse to its own directories, never list the root
	}
	return s, os.Chmod(root, mode)
}

// own gives p to the engine identity (a no-op without one).
func (s *session) own(p string) error {
	if s.engine == nil {
		return nil
	}
	return os.Lchown(p, int(s.engine.Uid), int(s.engine.Gid))
}

// resultOwner is the UID the engine's result file must belong to.
func (s *session) resultOwner() int {
	if s.engine != nil {
		return int(s.engine.Uid)
	}
	return os.Getuid()
}

// relaySocket is the Unix socket the relay entry connects to (root runs only).
func (s *session) relaySocket() string { return s.relay }

func (s *session) usagePath() string    { return filepath.Join(s.mcp, "usage.json") }
func (s *session) metadataPath() string { return filepath.Join(s.mcp, "metadata.json") }
func (s *session) resultPath() string   { return filepath.Join(s.out, "result.json") }

// mcpServer is one entry of the generated configuration (the mcpServers shape MCP clients
// read: command, args, env).
type mcpServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

// mcpArgs is the `forgectx mcp` command line for this run (reviewmcp.Config.CommandArgs, so
// the flags cannot drift from the server's): enriched exposes the context tools over this
// run's store, bound to its run, policy digest and committed file digest; constrained (off,
// metadata, the unprotected lifecycle) only the evidence tools. Both pin the verified
// snapshot's root index digest.
func (s *session) mcpArgs(c reviewmcp.Config) []string {
	if s.engine != nil {
		// Root run: the entry is the relay; the server itself runs in forgectx (relay.go).
		return []string{"mcp", RelayFlag, s.relaySocket()}
	}
	return c.CommandArgs()
}

// mcpConfig is the server configuration of this run.
func (s *session) mcpConfig(indexSHA256 string, enriched bool, runID, policyDigest, storeSHA256 string) reviewmcp.Config {
	c := reviewmcp.Config{Mode: reviewmcp.ModeConstrained, SnapshotDir: s.snapshot, IndexSHA256: indexSHA256, UsagePath: s.usagePath(),
		View: reviewmcp.ViewImmutable}
	if enriched {
		c.Mode, c.StoreDir, c.RunID, c.PolicyDigest, c.StoreSHA256 = reviewmcp.ModeEnriched, s.store, runID, policyDigest, storeSHA256
	}
	return c
}

// writeMCPConfig writes the only file of the isolated HOME: one stdio server entry pointing
// at forgectx's own MCP server (no ambient credential, no other server, an empty env).
func (s *session) writeMCPConfig(forgectx string, args []string) (string, error) {
	doc := map[string]any{"mcpServers": map[string]mcpServer{MCPServerName: {Type: "stdio", Command: forgectx, Args: args, Env: map[string]string{}}}}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return "", err
	}
	p := filepath.Join(s.home, mcpConfigRel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", fmt.Errorf("reviewrun: MCP configuration: %w", err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("reviewrun: MCP configuration: %w", err)
	}
	_, werr := f.Write(append(b, '\n'))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return "", fmt.Errorf("reviewrun: MCP configuration: %w", werr)
	}
	// The engine identity reads its configuration (and owns nothing else of the session).
	for _, q := range []string{filepath.Dir(filepath.Dir(p)), filepath.Dir(p), p} {
		if err := s.own(q); err != nil {
			return "", fmt.Errorf("reviewrun: MCP configuration: %w", err)
		}
	}
	return p, nil
}

// remove deletes the whole session (store, snapshot, usage, configuration, result).
func (s *session) remove() error {
	if s == nil || s.root == "" {
		return nil
	}
	return os.RemoveAll(s.root)
}

// engineEnv is the engine's complete environment: the generated HOME, TMPDIR and
// configuration paths, a fixed PATH and locale unless the harness passes its own, and the
// harness's agent.env names — minus any forge credential name, registered secret or the token
// variable, and minus any variable whose value carries one of those values (a copy under
// another name). Nothing else of the host environment is inherited.
func engineEnv(environ []string, h *harness.Harness, tokenEnv string, s *session, mcpConfig string) []string {
	vals := envMap(environ)
	withheld := withheldValues(environ, h, tokenEnv)
	env := map[string]string{"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
	for _, n := range h.Agent.Env {
		v, ok := vals[n]
		if !ok || n == tokenEnv || harness.IsForgeCredentialName(n) || slices.Contains(h.Secrets, n) || carries(v, withheld) {
			continue
		}
		env[n] = v
	}
	env["HOME"], env["TMPDIR"] = s.home, s.tmp
	env[EnvMCPConfig], env[EnvResultFile], env[EnvRules] = mcpConfig, s.resultPath(), s.rules
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k+"="+env[k])
	}
	return out
}

func envMap(environ []string) map[string]string {
	vals := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vals[k] = v
		}
	}
	return vals
}

// withheldValues are the values the engine must never see: the token variable's, every forge
// credential name's (harness.IsForgeCredentialName: CI_JOB_TOKEN, GITLAB_TOKEN, …) and the
// registered secrets'.
func withheldValues(environ []string, h *harness.Harness, tokenEnv string) []string {
	var withheld []string
	for k, v := range envMap(environ) {
		if v == "" {
			continue
		}
		if k == tokenEnv || harness.IsForgeCredentialName(k) || slices.Contains(h.Secrets, k) {
			withheld = append(withheld, v)
		}
	}
	sort.Strings(withheld)
	return withheld
}

// carries reports whether v contains any withheld value of at least 4 bytes (shorter values
// would withhold arbitrary variables by coincidence).
func carries(v string, withheld []string) bool {
	for _, w := range withheld {
		if len(w) >= 4 && strings.Contains(v, w) {
			return true
		}
	}
	return false
}
