// Package readme runs the README's shell commands as a new user would type them.
//
// Every command of every ```sh block of README.md and of the pages its content moved to
// (docFiles) is classified: run here exactly as written,
// or not run, with the reason (the test suite itself, a Gitea build, a synopsis with
// placeholders). A command no rule classifies fails the test, so a new README command is either
// proven offline or named as not runnable here.
//
// The quick start writes /tmp/forgectx and /tmp/demo, so the commands run in a private mount
// namespace whose /tmp is a fresh tmpfs: the paths are the README's, the machine's /tmp is not
// touched, and what a command leaves in /tmp can be listed afterwards.
package readme

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/test/testnotice"
)

// root is the repository root (tests run in test/readme).
var root = func() string {
	r, err := filepath.Abs("../..")
	if err != nil {
		panic(err)
	}
	return r
}()

// docFiles are the README and the pages its quick start, install steps, test instructions and
// command reference live in: their commands are the ones a new user types first.
var docFiles = []string{"README.md", "docs/getting-started.md", "docs/install.md", "docs/testing.md", "docs/commands.md", "docs/adapters.md"}

// command is one documented command: its file, its first line number and its text
// (continuation lines joined as bash joins them).
type command struct {
	file string
	line int
	text string
}

// readmeCommands returns the commands of every ```sh block of docFiles, file by file.
func readmeCommands(t *testing.T) []command {
	t.Helper()
	var cmds []command
	for _, f := range docFiles {
		cmds = append(cmds, fileCommands(t, f)...)
	}
	return cmds
}

// fileCommands returns the commands of every ```sh block of one file.
func fileCommands(t *testing.T, file string) []command {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	var cmds []command
	in := false
	var cur *command
	for i, l := range strings.Split(string(b), "\n") {
		switch {
		case !in && l == "```sh":
			in = true
		case in && strings.HasPrefix(l, "```"):
			in, cur = false, nil
		case in && cur != nil:
			cur.text += "\n" + l
			if !strings.HasSuffix(l, "\\") {
				cmds, cur = append(cmds, *cur), nil
			}
		case in && strings.TrimSpace(l) != "" && !strings.HasPrefix(strings.TrimSpace(l), "#"):
			c := command{file: file, line: i + 1, text: l}
			if strings.HasSuffix(l, "\\") {
				cur = &c
			} else {
				cmds = append(cmds, c)
			}
		}
	}
	return cmds
}

// Where a command runs, or why it does not.
const (
	atCheckout = "checkout" // at the root of this checkout, as the quick start says
	inUserRepo = "user-repo"
	asRoot     = "as-root" // at the checkout, and only as root (the README says so)
)

// classify returns where c runs, or "" and the reason it is not run here.
func classify(c command) (where, notRun string) {
	text := c.text
	switch {
	case strings.HasPrefix(text, "go test ") || strings.HasPrefix(text, "FORGECTX_REALFORGE=1 go test "):
		return "", "the test suite itself (this test is part of it)"
	case strings.HasPrefix(text, "scripts/gitea.sh"):
		return "", "builds a Gitea server from the Go module proxy (8-18 min); .ci/run does"
	case strings.HasPrefix(text, "forgectx "):
		return "", "a synopsis with placeholders: the README names no forgectx on PATH"
	case strings.HasPrefix(text, "mkdir -p .") || strings.HasPrefix(text, "cp ../forgectx/"):
		return inUserRepo, ""
	case strings.HasPrefix(text, "/tmp/forgectx run "):
		return asRoot, ""
	}
	return atCheckout, ""
}

// result is what one command did.
type result struct {
	code           int
	stdout, stderr string
}

// runInPrivateTmp runs the commands with bash, one after the other, inside a mount namespace
// whose /tmp is an empty tmpfs: checkout commands at the checkout root, user-repository
// commands in /tmp/first-run/repo beside /tmp/first-run/forgectx (this checkout, as the README's
// ../forgectx). It returns each command's result and the names /tmp holds at the end.
func runInPrivateTmp(t *testing.T, cmds []command, where []string) ([]result, []string) {
	t.Helper()
	out := t.TempDir()
	var drv strings.Builder
	// The results go to the test's directory through a descriptor opened before /tmp is
	// mounted over (the directory itself is under the real /tmp).
	fmt.Fprintf(&drv, "set -u\nexec 9<%q\nR=/proc/$$/fd/9\n", out)
	// The checkout itself may live under /tmp (CI clones wherever it likes): it is reached
	// through a descriptor opened before the mount and bound back at its own path afterwards
	// (--no-canonicalize: resolved as a path, the /proc link would name the new, empty /tmp).
	fmt.Fprintf(&drv, "exec 8<%q\n", root)
	drv.WriteString("mount -t tmpfs -o mode=1777 tmpfs /tmp || exit 97\n")
	fmt.Fprintf(&drv, "case %q in /tmp/*) mkdir -p %q && mount --no-canonicalize --bind /proc/$$/fd/8 %q || exit 97;; esac\n", root, root, root)
	fmt.Fprintf(&drv, "mkdir -p /tmp/first-run/repo && ln -s %q /tmp/first-run/forgectx || exit 98\n", root)
	for i, c := range cmds {
		if err := os.WriteFile(filepath.Join(out, fmt.Sprintf("%d.cmd", i)), []byte(c.text+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		dir := root
		if where[i] == inUserRepo {
			dir = "/tmp/first-run/repo"
		}
		fmt.Fprintf(&drv, "(cd %q && bash \"$R/%d.cmd\" >\"$R/%d.out\" 2>\"$R/%d.err\" </dev/null); echo $? >\"$R/%d.rc\"\n", dir, i, i, i, i)
	}
	drv.WriteString("ls -A /tmp >\"$R/tmp.ls\"\n")
	driver := filepath.Join(out, "driver.sh")
	if err := os.WriteFile(driver, []byte(drv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	args := []string{"--mount", "--propagation", "private", "bash", driver}
	if os.Geteuid() != 0 {
		args = append([]string{"--user", "--map-root-user"}, args...)
	}
	cmd := exec.CommandContext(ctx, "unshare", args...)
	b, err := cmd.CombinedOutput()
	if err != nil {
		if code := cmd.ProcessState.ExitCode(); code == 97 || code == 98 || strings.Contains(string(b), "unshare failed") || strings.Contains(string(b), "Operation not permitted") {
			testnotice.Skip(t, "README commands (private /tmp)", fmt.Sprintf("cannot make a mount namespace with its own /tmp here: %s", strings.TrimSpace(string(b))))
		}
		t.Fatalf("driver: %v\n%s", err, b)
	}
	res := make([]result, len(cmds))
	for i := range cmds {
		read := func(ext string) string {
			b, err := os.ReadFile(filepath.Join(out, fmt.Sprintf("%d.%s", i, ext)))
			if err != nil {
				t.Fatalf("command %d: %v", i, err)
			}
			return string(b)
		}
		code, err := strconv.Atoi(strings.TrimSpace(read("rc")))
		if err != nil {
			t.Fatalf("command %d: exit status: %v", i, err)
		}
		res[i] = result{code: code, stdout: read("out"), stderr: read("err")}
	}
	ls, err := os.ReadFile(filepath.Join(out, "tmp.ls"))
	if err != nil {
		t.Fatal(err)
	}
	return res, strings.Fields(string(ls))
}

// TestReadmeCommandsRunAsWritten: the README's offline commands, run exactly as written, do what
// their comments say — the quick start (demo, build, demo --out, verify against the tree's own
// index digest, prompt, prescript, distill, filter), the offline replay of a whole run (as root,
// as the README says), and the copy steps of the GitHub, GitLab and Forgejo sections into a
// fresh repository. `go run ./cmd/forgectx demo` leaves nothing in /tmp.
func TestReadmeCommandsRunAsWritten(t *testing.T) {
	if runtime.GOOS != "linux" {
		testnotice.Skip(t, "README commands (private /tmp)", "a private /tmp needs Linux mount namespaces")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		testnotice.Skip(t, "README commands (private /tmp)", "unshare (util-linux) is not installed")
	}
	all := readmeCommands(t)
	var cmds []command
	var where []string
	for _, c := range all {
		w, why := classify(c)
		if w == "" {
			t.Logf("%s:%d not run: %s: %s", c.file, c.line, why, firstLine(c.text))
			continue
		}
		if w == asRoot && os.Geteuid() != 0 {
			testnotice.Notice("test/readme", "README replay command (non-root)", "the README runs it as root")
			continue
		}
		cmds, where = append(cmds, c), append(where, w)
	}
	ran := map[string]bool{}
	for _, c := range cmds {
		ran[firstLine(c.text)] = true
	}
	// The commands this test exists for must still be in the README (and so were run).
	for _, want := range []string{"go run ./cmd/forgectx demo", "go build -o /tmp/forgectx ./cmd/forgectx", "/tmp/forgectx demo --out /tmp/demo",
		"/tmp/forgectx verify /tmp/demo", "/tmp/forgectx filter", "mkdir -p .github/workflows .github/forgectx", "cp ../forgectx/examples/gitlab/.gitlab-ci.yml .gitlab-ci.yml"} {
		found := false
		for l := range ran {
			found = found || strings.HasPrefix(l, want) || strings.Contains(l, want)
		}
		if !found {
			t.Errorf("no README command runs %q", want)
		}
	}

	res, tmp := runInPrivateTmp(t, cmds, where)
	for i, c := range cmds {
		r := res[i]
		if r.code != 0 {
			t.Errorf("%s:%d exited %d: %s\nstdout:\n%s\nstderr:\n%s", c.file, c.line, r.code, c.text, r.stdout, r.stderr)
			continue
		}
		if msg := checkOutput(c.text, r.stdout); msg != "" {
			t.Errorf("%s:%d: %s: %s\nstdout:\n%s", c.file, c.line, c.text, msg, r.stdout)
		}
	}
	for _, name := range tmp {
		if strings.HasPrefix(name, "forgectx-demo-") {
			t.Errorf("the README's commands left /tmp/%s behind", name)
		}
	}
}

// checkOutput checks what the README's comment (or the command's purpose) says it prints.
func checkOutput(cmd, stdout string) string {
	switch {
	case strings.HasPrefix(cmd, "/tmp/forgectx demo --out /tmp/demo"):
		if !strings.Contains(stdout, "index.json sha256: ") {
			return `no "index.json sha256:" line`
		}
	case strings.HasPrefix(cmd, "/tmp/forgectx verify /tmp/demo"):
		if !strings.HasPrefix(stdout, "ok files=33 ") {
			return `want "ok files=33 …"`
		}
	case strings.HasPrefix(cmd, "/tmp/forgectx prompt /tmp/demo"):
		if strings.TrimSpace(stdout) == "" {
			return "printed no content blocks"
		}
	case strings.HasPrefix(cmd, "/tmp/forgectx prescript "), strings.HasPrefix(cmd, "/tmp/forgectx distill "):
		var v map[string]any
		if err := json.Unmarshal([]byte(stdout), &v); err != nil {
			return "stdout is not one JSON object: " + err.Error()
		}
	case strings.Contains(cmd, "| /tmp/forgectx filter"):
		if strings.Contains(stdout, "ghp_abcdefghijklmnopqrstuvwxyz0123456789") || !strings.HasPrefix(stdout, "token ") {
			return "the planted token was not redacted"
		}
	case strings.HasPrefix(cmd, "/tmp/forgectx run --replay "):
		n := 0
		sc := bufio.NewScanner(strings.NewReader(stdout))
		for sc.Scan() {
			var w struct{ Op, Body string }
			if err := json.Unmarshal(sc.Bytes(), &w); err != nil || w.Op == "" {
				return fmt.Sprintf("line %q is not a comment write", sc.Text())
			}
			n++
		}
		if n < 3 {
			return fmt.Sprintf("%d comment writes, want the start, the completion and the receipt", n)
		}
	}
	return ""
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// TestReadmeCommandClassification: the classifier runs every command but those it names a reason
// for, so a new README command is run unless a rule says why not.
func TestReadmeCommandClassification(t *testing.T) {
	for _, c := range []struct {
		text, where string
	}{
		{"go test ./...", ""},
		{"FORGECTX_REALFORGE=1 go test ./test/realforge/...", ""},
		{"scripts/gitea.sh", ""},
		{"forgectx run --harness triage.yml", ""},
		{"cp ../forgectx/examples/github/forgectx-action.yml .github/workflows/forgectx.yml", inUserRepo},
		{"/tmp/forgectx run --replay examples/replay/github-issue", asRoot},
		{"/tmp/forgectx demo --out /tmp/demo", atCheckout},
		{"some-new-command --flag", atCheckout},
	} {
		if w, _ := classify(command{text: c.text}); w != c.where {
			t.Errorf("classify(%q) = %q, want %q", c.text, w, c.where)
		}
	}
	var buf bytes.Buffer
	for _, c := range readmeCommands(t) {
		fmt.Fprintf(&buf, "%s:%d %s\n", c.file, c.line, firstLine(c.text))
	}
	if !strings.Contains(buf.String(), "/tmp/forgectx run --replay examples/replay/github-issue") {
		t.Errorf("the README's replay command was not found among its commands:\n%s", buf.String())
	}
}

// TestReadmeIsAFrontDoor: the README fits on a few screens (at most 150 lines), shows the
// architecture as a Mermaid diagram, has exactly the two quick-start commands as its first
// shell block (the embedded example with no network and no token, then the test suite), an
// install section per forge and the container image, and links the documentation index.
func TestReadmeIsAFrontDoor(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if n := strings.Count(s, "\n"); n > 150 {
		t.Errorf("README.md has %d lines, want at most 150: move reference material under docs/", n)
	}
	if !strings.Contains(s, "\n```mermaid\nflowchart ") {
		t.Error("README.md has no Mermaid flowchart")
	}
	cmds := fileCommands(t, "README.md")
	if len(cmds) < 2 || cmds[0].text != "go run ./cmd/forgectx demo   # assemble an embedded pull-request conversation into a snapshot tree: no network, no token" ||
		!strings.HasPrefix(cmds[1].text, "go test ./...") {
		t.Errorf("README.md's quick start is not `go run ./cmd/forgectx demo` then `go test ./...`: %v", cmds)
	}
	qs := s[strings.Index(s, "\n## Quick start\n"):]
	qs = qs[:strings.Index(qs[1:], "\n## ")+1]
	if n := len(fileCommandsText(qs)); n != 2 {
		t.Errorf("README.md's quick start has %d commands, want exactly 2", n)
	}
	for _, h := range []string{"### GitHub", "### GitLab", "### Forgejo", "### Container image", "## Licence"} {
		if !strings.Contains(s, "\n"+h) {
			t.Errorf("README.md has no %q section", h)
		}
	}
	if !strings.Contains(s, "](docs/README.md)") {
		t.Error("README.md does not link the documentation index docs/README.md")
	}
}

// fileCommandsText counts the non-comment lines of the ```sh blocks of a text.
func fileCommandsText(s string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(s, "\n") {
		switch {
		case !in && l == "```sh":
			in = true
		case in && strings.HasPrefix(l, "```"):
			in = false
		case in && strings.TrimSpace(l) != "" && !strings.HasPrefix(strings.TrimSpace(l), "#"):
			out = append(out, l)
		}
	}
	return out
}
