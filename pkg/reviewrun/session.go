package reviewrun

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/forgectx/forgectx/pkg/harness"
	"github.com/forgectx/forgectx/pkg/reviewmcp"
)

// Environment variables the review engine receives (wire names, docs/review-context.md).
const (
	// EnvMCPConfig is the generated MCP configuration file inside the isolated HOME.
	EnvMCPConfig = "FORGECTX_REVIEW_MCP_CONFIG"
	// EnvResultFile is where the engine writes its review result (ocr.review-result/v1).
	EnvResultFile = "FORGECTX_REVIEW_RESULT"
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
type session struct {
	root, home, tmp, store, snapshot, mcp, out string
}

func newSession(base string) (*session, error) {
	if base == "" {
		base = os.TempDir()
	}
	root, err := os.MkdirTemp(base, "forgectx-review-")
	if err != nil {
		return nil, fmt.Errorf("reviewrun: session directory: %w", err)
	}
	s := &session{root: root}
	for _, d := range []struct {
		p    *string
		name string
	}{{&s.home, "home"}, {&s.tmp, "tmp"}, {&s.snapshot, "snapshot"}, {&s.mcp, "mcp"}, {&s.out, "out"}} {
		*d.p = filepath.Join(root, d.name)
		if err := os.Mkdir(*d.p, 0o700); err != nil {
			os.RemoveAll(root)
			return nil, fmt.Errorf("reviewrun: session directory: %w", err)
		}
	}
	// The store directory is created by reviewctx.CommitStore (it insists on creating or
	// checking it 0700 itself).
	s.store = filepath.Join(root, "store")
	return s, os.Chmod(root, 0o700)
}

func (s *session) usagePath() string  { return filepath.Join(s.mcp, "usage.json") }
func (s *session) resultPath() string { return filepath.Join(s.out, "result.json") }

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
func (s *session) mcpArgs(indexSHA256 string, enriched bool, runID, policyDigest, storeSHA256 string) []string {
	c := reviewmcp.Config{Mode: reviewmcp.ModeConstrained, SnapshotDir: s.snapshot, IndexSHA256: indexSHA256, UsagePath: s.usagePath()}
	if enriched {
		c.Mode, c.StoreDir, c.RunID, c.PolicyDigest, c.StoreSHA256 = reviewmcp.ModeEnriched, s.store, runID, policyDigest, storeSHA256
	}
	return c.CommandArgs()
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
	vals := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vals[k] = v
		}
	}
	var withheld []string
	for k, v := range vals {
		if v == "" {
			continue
		}
		if k == tokenEnv || harness.IsForgeCredentialName(k) || slices.Contains(h.Secrets, k) {
			withheld = append(withheld, v)
		}
	}
	env := map[string]string{"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
	for _, n := range h.Agent.Env {
		v, ok := vals[n]
		if !ok || n == tokenEnv || harness.IsForgeCredentialName(n) || slices.Contains(h.Secrets, n) || carries(v, withheld) {
			continue
		}
		env[n] = v
	}
	env["HOME"], env["TMPDIR"] = s.home, s.tmp
	env[EnvMCPConfig], env[EnvResultFile] = mcpConfig, s.resultPath()
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
