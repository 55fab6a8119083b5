// Command engine is the stand-in review engine of the reviewrun end-to-end tests. It does what
// a real engine does at the boundary forgectx controls: it reads the generated MCP
// configuration from $FORGECTX_REVIEW_MCP_CONFIG, starts the one server entry and speaks MCP to
// it as a client (go-sdk), reads evidence and context, and writes its review result to
// $FORGECTX_REVIEW_RESULT. $ENGINE_SCRIPT picks the behaviour; $ENGINE_OUT receives what the
// test asserts about the engine's world (environment, HOME contents, tool names).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type server struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "engine:", err)
		os.Exit(3)
	}
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	script, out := os.Getenv("ENGINE_SCRIPT"), os.Getenv("ENGINE_OUT")
	if err := recordWorld(out); err != nil {
		return err
	}
	if script == "crash" {
		os.Exit(5)
	}
	if script == "sleep" {
		// Hold the review open until the run is interrupted.
		time.Sleep(30 * time.Second)
		return nil
	}
	var cfg struct {
		MCPServers map[string]server `json:"mcpServers"`
	}
	b, err := os.ReadFile(os.Getenv("FORGECTX_REVIEW_MCP_CONFIG"))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return err
	}
	srv, ok := cfg.MCPServers["ocr_toolkit"]
	if !ok || len(cfg.MCPServers) != 1 {
		return fmt.Errorf("want exactly the ocr_toolkit server, got %d", len(cfg.MCPServers))
	}
	cmd := exec.Command(srv.Command, srv.Args...)
	cmd.Env = os.Environ()
	client := mcp.NewClient(&mcp.Implementation{Name: "stand-in-engine", Version: "1"}, nil)
	sess, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return err
	}
	defer sess.Close()
	tools, err := sess.ListTools(ctx, nil)
	if err != nil {
		return err
	}
	var names []string
	for _, t := range tools.Tools {
		names = append(names, t.Name)
	}
	sort.Strings(names)
	if err := os.WriteFile(filepath.Join(out, "tools"), []byte(strings.Join(names, "\n")), 0o600); err != nil {
		return err
	}
	if script != "nosummary" {
		if _, err := call(ctx, sess, "ocr_toolkit_evidence", map[string]any{"action": "summary"}); err != nil {
			return err
		}
	}
	if script == "dump" {
		if err := dumpAnswers(ctx, sess, names, out); err != nil {
			return err
		}
	}
	texts, err := readContext(ctx, sess, names)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "context"), []byte(strings.Join(texts, "\n\x00\n")), 0o600); err != nil {
		return err
	}
	return writeResult(script, texts)
}

// recordWorld writes the engine's environment and the files of its HOME for the test.
func recordWorld(out string) error {
	env := os.Environ()
	sort.Strings(env)
	if err := os.WriteFile(filepath.Join(out, "env"), []byte(strings.Join(env, "\n")), 0o600); err != nil {
		return err
	}
	var files []string
	home := os.Getenv("HOME")
	err := filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, _ := d.Info()
		rel, _ := filepath.Rel(home, p)
		files = append(files, fmt.Sprintf("%s %o", rel, fi.Mode().Perm()))
		return nil
	})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "home"), []byte(strings.Join(files, "\n")), 0o600); err != nil {
		return err
	}
	// The checkout's git configuration as the engine sees it (its working directory).
	if b, err := os.ReadFile(filepath.Join(".git", "config")); err == nil {
		if err := os.WriteFile(filepath.Join(out, "gitconfig"), b, 0o600); err != nil {
			return err
		}
	}
	// The repository Rules as the engine is given them: the rules directory forgectx names and
	// the checkout's own .opencodereview/rules ("name: content" lines, sorted).
	for _, d := range [][2]string{{"rules_env", os.Getenv("FORGECTX_REVIEW_RULES")}, {"rules_checkout", filepath.Join(".opencodereview", "rules")}} {
		if err := os.WriteFile(filepath.Join(out, d[0]), []byte(readRules(d[1])), 0o600); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(out, "probe"), []byte(probe(home)), 0o600)
}

// readRules lists dir's files as "name: content" lines ("absent" when dir cannot be read).
func readRules(dir string) string {
	if dir == "" {
		return "absent"
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "absent"
	}
	var lines []string
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return "unreadable"
		}
		lines = append(lines, e.Name()+": "+strings.TrimSpace(string(b)))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// probe records what the engine can reach of forgectx's private state: its own UID, its
// parent's (forgectx's) start-up environment, and the session's store, snapshot and usage
// directories (siblings of HOME): "readable", "denied" or "absent"; a readable parent
// environment is copied to $ENGINE_OUT/parent_environ for the test to search.
func probe(home string) string {
	state := func(err error) string {
		switch {
		case err == nil:
			return "readable"
		case os.IsPermission(err):
			return "denied"
		case os.IsNotExist(err):
			return "absent"
		}
		return "error"
	}
	lines := []string{fmt.Sprintf("uid %d", os.Getuid())}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", os.Getppid()))
	lines = append(lines, "parent_environ "+state(err))
	if err == nil && os.Getenv("ENGINE_OUT") != "" {
		_ = os.WriteFile(filepath.Join(os.Getenv("ENGINE_OUT"), "parent_environ"), b, 0o600)
	}
	for _, d := range []string{"store", "snapshot", "mcp"} {
		_, err := os.ReadDir(filepath.Join(filepath.Dir(home), d))
		lines = append(lines, d+" "+state(err))
	}
	_, err = os.ReadDir(filepath.Dir(home))
	lines = append(lines, "session_root "+state(err))
	return strings.Join(lines, "\n")
}

func call(ctx context.Context, s *mcp.ClientSession, name string, args map[string]any) (string, error) {
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) != 1 {
		return "", fmt.Errorf("%s refused", name)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", fmt.Errorf("%s: not text", name)
	}
	return tc.Text, nil
}

// readContext lists the context records (enriched only) and returns the model text of each.
func readContext(ctx context.Context, s *mcp.ClientSession, tools []string) ([]string, error) {
	if !contains(tools, "context_list") {
		return nil, nil
	}
	raw, err := call(ctx, s, "context_list", map[string]any{})
	if err != nil {
		return nil, err
	}
	var list struct {
		Items []struct {
			Handle string `json:"handle"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		return nil, err
	}
	var texts []string
	for _, it := range list.Items {
		raw, err := call(ctx, s, "context_get", map[string]any{"handle": it.Handle})
		if err != nil {
			return nil, err
		}
		var v struct {
			Text   string `json:"text"`
			Thread *struct {
				Root string `json:"root"`
			} `json:"thread"`
		}
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			return nil, err
		}
		if v.Thread != nil {
			texts = append(texts, v.Thread.Root)
		} else if v.Text != "" {
			texts = append(texts, v.Text)
		}
	}
	return texts, nil
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

type finding struct {
	Severity       string `json:"severity"`
	Path           string `json:"path"`
	Line           int    `json:"line"`
	Message        string `json:"message"`
	ExistingCode   string `json:"existing_code,omitempty"`
	SuggestionCode string `json:"suggestion_code,omitempty"`
}

// writeResult writes the ocr.review-result/v1 document the script asks for.
func writeResult(script string, texts []string) error {
	if script == "invalid" {
		return os.WriteFile(os.Getenv("FORGECTX_REVIEW_RESULT"), []byte(`{"schema_version":"ocr.review-result/v1","status":"done"}`), 0o600)
	}
	if script == "symlink" {
		return os.Symlink("/etc/hostname", os.Getenv("FORGECTX_REVIEW_RESULT"))
	}
	findings := []finding{}
	switch script {
	case "findings":
		findings = append(findings,
			finding{Severity: "high", Path: "cache/cache.go", Line: 12, Message: "The cache is never invalidated after a write.",
				ExistingCode: "\treturn c.m[k]", SuggestionCode: "\tc.mu.RLock()\n\tdefer c.mu.RUnlock()\n\treturn c.m[k]"},
			finding{Severity: "low", Path: "cache/cache_test.go", Line: 3, Message: "Add a test for eviction."})
	case "hostile":
		findings = hostile(texts)
	}
	doc := map[string]any{
		"schema_version": "ocr.review-result/v1", "status": "completed", "outcome_message": "Reviewed 2 files.",
		"coverage": map[string]any{"kind": "complete", "files_total": 2, "files_reviewed": 2, "files_failed": 0},
		"findings": findings, "warnings": []string{}, "tool_names": []string{"ocr_toolkit_evidence"},
		"metadata": map[string]string{"engine": "stand-in", "session": "0f9e8d7c6b5a49382716"},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return os.WriteFile(os.Getenv("FORGECTX_REVIEW_RESULT"), b, 0o600)
}

// hostile leaks what the engine read into findings: a verbatim context excerpt, a secret, PII,
// a Markdown image link and a bidi-laundered copy of context, plus one safe finding that must
// survive.
func hostile(texts []string) []finding {
	ctxText := "no context was listed"
	for _, t := range texts {
		if len([]rune(t)) >= 40 {
			ctxText = t
			break
		}
	}
	r := []rune(ctxText)
	excerpt := string(r[:min(len(r), 60)])
	// U+202E / U+200B inside the copy: a laundered excerpt.
	laundered := string(r[:10]) + "\u202e" + string(r[10:20]) + "\u200b" + string(r[20:min(len(r), 50)])
	return []finding{
		{Severity: "medium", Path: "a.go", Line: 1, Message: "Context says: " + excerpt},
		{Severity: "medium", Path: "b.go", Line: 2, Message: "Use the token glpat-Zx9Yw8Vu7Ts6Rq5Po4Nm here."},
		{Severity: "medium", Path: "c.go", Line: 3, Message: "Contact alice.liddell@example.com or +1 415-555-0134 for access."},
		{Severity: "medium", Path: "d.go", Line: 4, Message: "See ![status](https://attacker.example.invalid/p.png?d=1) for details."},
		{Severity: "medium", Path: "e.go", Line: 5, Message: "Quoted: " + laundered},
		{Severity: "low", Path: "f.go", Line: 6, Message: "Prefer a named constant for the retry count."},
	}
}

// dumpAnswers reads everything the tools serve — every evidence item through list and every
// page of get, the context list and every listed record through context_get — and writes each
// tool answer, in call order, to $ENGINE_OUT/answers as a JSON array of {"tool","args","answer"}
// rows, so a test can assert exactly what the engine saw.
func dumpAnswers(ctx context.Context, s *mcp.ClientSession, tools []string, out string) error {
	type row struct {
		Tool   string          `json:"tool"`
		Args   map[string]any  `json:"args"`
		Answer json.RawMessage `json:"answer"`
	}
	var rows []row
	do := func(tool string, args map[string]any) (string, error) {
		a, err := call(ctx, s, tool, args)
		if err != nil {
			return "", err
		}
		rows = append(rows, row{tool, args, json.RawMessage(a)})
		return a, nil
	}
	cursor := ""
	for {
		args := map[string]any{"action": "list", "page_size": 50}
		if cursor != "" {
			args["cursor"] = cursor
		}
		a, err := do("ocr_toolkit_evidence", args)
		if err != nil {
			return err
		}
		var l struct {
			Items []struct {
				ID string `json:"id"`
			} `json:"items"`
			Next string `json:"next_cursor"`
		}
		if err := json.Unmarshal([]byte(a), &l); err != nil {
			return err
		}
		for _, it := range l.Items {
			off := -1
			for {
				args := map[string]any{"action": "get", "id": it.ID}
				if off >= 0 {
					args["offset"] = off
				}
				a, err := do("ocr_toolkit_evidence", args)
				if err != nil {
					return err
				}
				var g struct {
					Next *int `json:"next_offset"`
				}
				if err := json.Unmarshal([]byte(a), &g); err != nil {
					return err
				}
				if g.Next == nil {
					break
				}
				off = *g.Next
			}
		}
		if l.Next == "" {
			break
		}
		cursor = l.Next
	}
	if contains(tools, "context_list") {
		a, err := do("context_list", map[string]any{})
		if err != nil {
			return err
		}
		var l struct {
			Items []struct {
				Handle string `json:"handle"`
			} `json:"items"`
		}
		if err := json.Unmarshal([]byte(a), &l); err != nil {
			return err
		}
		for _, it := range l.Items {
			if _, err := do("context_get", map[string]any{"handle": it.Handle}); err != nil {
				return err
			}
		}
	}
	b, err := json.Marshal(rows)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "answers"), b, 0o600)
}
