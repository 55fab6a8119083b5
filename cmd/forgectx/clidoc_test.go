package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/platform/version"
)

// updateCLIDoc rewrites docs/cli.md from the commands' flag sets instead of comparing.
var updateCLIDoc = flag.Bool("update", false, "rewrite docs/cli.md from the commands' --help")

// cliDocPath is the generated command-line reference.
const cliDocPath = "../../docs/cli.md"

// subcommands are the commands whose flags live one level down: their own --help is the
// synopsis of the subcommands, each of which has its own flag set. A subcommand added without
// an entry here is still in its parent's synopsis, so the reference shows it exists.
var subcommands = map[string][]string{
	"review-context": {"policy validate", "acquire", "run"},
	"rework":         {"input-gate"},
	"stage":          {"create", "verify-copy", "cleanup", "scavenge"},
	"status":         {"reconcile"},
}

// helpText runs `forgectx ARGS... --help` in-process with an empty environment (so no CI
// variable or account shapes a default) and returns what it printed: usage goes to stderr.
func helpText(args ...string) string {
	var out, errb bytes.Buffer
	run(context.Background(), append(args, "--help"), strings.NewReader(""), &out, &errb,
		func(string) string { return "" }, func() []string { return nil })
	return strings.TrimRight(out.String()+errb.String(), "\n")
}

// cliDoc renders docs/cli.md: the global usage, then every command in name order with its
// summary and its --help, then its subcommands' --help. The version the binary reports is
// replaced by a placeholder, so a release build generates the same bytes.
func cliDoc() []byte {
	var b strings.Builder
	b.WriteString("# forgectx command-line reference\n\n")
	b.WriteString("<!-- Generated from the commands' flag sets by `go test ./cmd/forgectx -run TestCLIDoc -update`.\n")
	b.WriteString("     Do not edit: TestCLIDoc fails when this file and the flag sets drift apart. -->\n\n")
	b.WriteString("Every command's synopsis and flags, exactly as `forgectx <command> --help` prints them\n")
	b.WriteString("(defaults shown are those of an empty environment; in CI several come from the job).\n")
	b.WriteString("What each command does and how to use it: [commands.md](commands.md); exit codes:\n")
	b.WriteString("[exit-codes.md](exit-codes.md).\n\n")
	global := helpText()
	global = strings.Replace(global, "forgectx "+version.String()+":", "forgectx <version>:", 1)
	b.WriteString("## forgectx\n\n```text\n" + global + "\n```\n")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "\n## forgectx %s\n\n%s\n\n```text\n%s\n```\n", n, commands[n].Summary, helpText(n))
		for _, sub := range subcommands[n] {
			args := append([]string{n}, strings.Fields(sub)...)
			fmt.Fprintf(&b, "\n### forgectx %s %s\n\n```text\n%s\n```\n", n, sub, helpText(args...))
		}
	}
	return []byte(b.String())
}

// TestCLIDoc: docs/cli.md is exactly what the flag sets print. A flag added, renamed or
// re-described without regenerating the file fails here; -update regenerates it.
func TestCLIDoc(t *testing.T) {
	want := cliDoc()
	if !bytes.Equal(want, cliDoc()) {
		t.Fatal("the generated reference differs between two renderings: --help is not deterministic")
	}
	if *updateCLIDoc {
		if err := os.WriteFile(cliDocPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(cliDocPath)
	if err != nil {
		t.Fatalf("%v (generate it: go test ./cmd/forgectx -run TestCLIDoc -update)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("docs/cli.md is stale (first difference at line %d):\n  file:      %q\n  flag sets: %q\nregenerate: go test ./cmd/forgectx -run TestCLIDoc -update", i+1, g, w)
			}
		}
	}
}
