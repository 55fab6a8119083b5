package procgroup_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// starters are the calls that start a child process: exec.Command and exec.CommandContext (a
// Cmd is only ever built to be started), os.StartProcess, and the fork-exec entry points of
// syscall and golang.org/x/sys/unix.
var starters = map[string]map[string]bool{
	"os/exec":               {"Command": true, "CommandContext": true},
	"os":                    {"StartProcess": true},
	"syscall":               {"ForkExec": true, "StartProcess": true, "Exec": true},
	"golang.org/x/sys/unix": {"Exec": true},
}

// startAllowed are the non-test files that may start a process besides procgroup.Run: test
// helpers, which are never linked into forgectx.
var startAllowed = map[string]bool{
	"internal/platform/procgroup/run.go":                true, // the primitive itself
	"test/realforge/giteaserver/server.go":              true, // runs the real Gitea binary for the real-forge suite
	"test/realforge/giteaserver/seed.go":                true, // runs git to seed the real-forge suite's repositories
	"internal/review/reviewrun/testdata/engine/main.go": true, // the fake review engine the tests build
}

// procgroup.Run is the one place that starts a child process: every production Go file of the
// module is parsed and each call of a process-starting function (through whatever name its
// package is imported as) outside the allow-list fails the test.
func TestOnlyProcgroupStartsProcesses(t *testing.T) {
	root := moduleRoot(t)
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		for _, call := range processStarts(t, path) {
			if !startAllowed[rel] {
				found = append(found, rel+":"+call)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(found)
	if len(found) > 0 {
		t.Errorf("child processes started outside procgroup.Run (use procgroup.Run):\n%s", strings.Join(found, "\n"))
	}
}

// processStarts returns "line: pkg.Func" for each process-starting call in the file.
func processStarts(t *testing.T, path string) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	names := map[string]string{} // local import name -> import path
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if starters[p] == nil {
			continue
		}
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = p
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		if p, ok := names[id.Name]; ok && starters[p][sel.Sel.Name] {
			out = append(out, strconv.Itoa(fset.Position(sel.Pos()).Line)+": "+id.Name+"."+sel.Sel.Name)
		}
		return true
	})
	return out
}

// moduleRoot is the directory of go.mod above this package.
func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = parent
	}
}
