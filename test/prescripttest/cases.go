// Package prescripttest holds the spec-row table of real bash pre-scripts that both the
// pkg/prescript tests (through prescript.Run) and the forgectx CLI tests (through
// `forgectx prescript`) drive, so every row of the spec is proven at both levels from one
// table. It is imported by tests only.
package prescripttest

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/pkg/prescript"
)

// GitHubToken is a syntactically valid GitHub token shape (ghp_ + 36 alphanumerics) that the
// shared secret-pattern scanner must redact. It is not a real credential.
const GitHubToken = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"

// DeployTokenValue is the value the table gives DEPLOY_TOKEN, an env var named like *_TOKEN:
// a literal runner secret with no recognisable pattern of its own.
const DeployTokenValue = "plain-literal-9f8e7d6c5b4a"

// Case is one spec row: a bash script body and what the gate must decide.
type Case struct {
	Name   string            // the spec row it proves
	Script string            // bash body; $O is the output file ($FULLSEND_PRESCRIPT_OUTPUT)
	Env    map[string]string // extra environment

	// Decision, when Fail and Protocol are nil.
	Skipped bool
	Reason  string
	Outputs map[string]string

	// ReasonExcludes, when set, replaces the exact Reason check: the reason must be non-empty
	// and contain none of these (redaction rows, whose replacement text is the filter's).
	ReasonExcludes []string

	// Fail is a hard failure of the script.
	Fail *Failure
	// Protocol is a hard error of the output file.
	Protocol *prescript.ProtocolError
}

// Failure is the expected *prescript.HardFailure.
type Failure struct {
	ExitCode   int
	Diagnostic string   // exact, unless empty
	Contains   []string // substrings the diagnostic must contain
	Excludes   []string // substrings it must not contain
}

// Cases returns the table.
func Cases() []Case {
	skipLong := strings.Repeat("a", 1023)
	return []Case{
		// Protocol: skipped=true / false / absent / empty file.
		{Name: "skipped=true requests a skip", Script: `printf 'skipped=true\nreason=an open PR already addresses this issue\nmyagent_existing_pr=123\n' >> "$O"`,
			Skipped: true, Reason: "an open PR already addresses this issue", Outputs: map[string]string{"myagent_existing_pr": "123"}},
		{Name: "skipped=false proceeds", Script: `echo skipped=false >> "$O"`},
		{Name: "absent skipped proceeds and keeps reason and outputs", Script: `printf 'reason=nothing to skip\nmyagent_k=v\n' >> "$O"`,
			Reason: "nothing to skip", Outputs: map[string]string{"myagent_k": "v"}},
		{Name: "empty file proceeds (old script, new CLI)", Script: `echo "an old script that knows nothing of the protocol"`},

		// Grammar.
		{Name: "whitespace surrounding key and value is insignificant", Script: `printf '  skipped = true  \n\treason\t=\t spaced out \t\n' >> "$O"`,
			Skipped: true, Reason: "spaced out"},
		{Name: "comments and blank lines are ignored; only a leading # starts a comment", Script: `printf '# skipped=true\n\n   \n   # indented comment\nreason=fix #123 first\n' >> "$O"`,
			Reason: "fix #123 first"},
		{Name: "= in values is preserved; only the first = splits", Script: `echo 'myagent_url=https://example.test/?a=b&c==d' >> "$O"`,
			Outputs: map[string]string{"myagent_url": "https://example.test/?a=b&c==d"}},
		{Name: "repeated keys: the last assignment wins", Script: `printf 'skipped=true\nmyagent_k=1\nskipped=false\nmyagent_k=2\nreason=a\nreason=b\n' >> "$O"`,
			Reason: "b", Outputs: map[string]string{"myagent_k": "2"}},
		{Name: "keys match the pattern with hyphens and underscores", Script: `printf 'my-agent_pr-1=x\n_private=y\nZ=z\n' >> "$O"`,
			Outputs: map[string]string{"my-agent_pr-1": "x", "_private": "y", "Z": "z"}},
		{Name: "a last line without newline is parsed", Script: `printf 'skipped=true' >> "$O"`, Skipped: true},
		{Name: "quoting is not supported: quotes stay part of a non-reserved value", Script: `echo 'myagent_q="quoted"' >> "$O"`,
			Outputs: map[string]string{"myagent_q": `"quoted"`}},
		{Name: "a file of exactly 1 MiB is accepted", Script: `{ head -c 1048575 /dev/zero | tr '\0' '#'; echo; } >> "$O"`},

		// Exit code 78.
		{Name: "exit 78 skips; the file reason wins over stdout", Script: `echo reason=from the file >> "$O"; echo "from stdout"; exit 78`,
			Skipped: true, Reason: "from the file"},
		{Name: "exit 78 without a file reason uses the last non-empty stdout line", Script: `echo first; echo "No issues need scoring"; echo; echo "   "; echo oops >&2; exit 78`,
			Skipped: true, Reason: "No issues need scoring"},
		{Name: "exit 78 stdout reason has control characters stripped", Script: `printf 'a\tb\033[31mred\177\r\n'; exit 78`,
			Skipped: true, Reason: "ab[31mred"},
		{Name: "exit 78 stdout reason is capped at 1024 bytes on a UTF-8 boundary", Script: `head -c 1023 /dev/zero | tr '\0' a; printf '\303\251 tail\n'; exit 78`,
			Skipped: true, Reason: skipLong},
		{Name: "exit 78 with a malformed file still skips, with the stdout reason", Script: `printf 'reason=ignored\nskipped true\n' >> "$O"; echo fallback; exit 78`,
			Skipped: true, Reason: "fallback"},
		{Name: "exit 78 with the file deleted still skips", Script: `rm -f "$O"; echo gone; exit 78`, Skipped: true, Reason: "gone"},
		{Name: "exit 78 overrides skipped=false and keeps the file's reason and outputs", Script: `printf 'skipped=false\nreason=r\nmyagent_k=v\n' >> "$O"; exit 78`,
			Skipped: true, Reason: "r", Outputs: map[string]string{"myagent_k": "v"}},
		{Name: "exit 78 with no reason anywhere skips with an empty reason", Script: `exit 78`, Skipped: true},
		{Name: "exit 78 with an empty file reason= uses the stdout line", Script: `echo 'reason=' >> "$O"; echo "from stdout"; exit 78`, Skipped: true, Reason: "from stdout"},
		{Name: "exit 78 with a byte order mark in the file still skips", Script: `printf '\357\273\277reason=x\n' >> "$O"; echo "bom"; exit 78`, Skipped: true, Reason: "bom"},
		{Name: "exit 78 stdout reason: an indented last line is trimmed", Script: `echo "    indented reason   "; exit 78`, Skipped: true, Reason: "indented reason"},
		{Name: "exit 78 with an oversized file still skips", Script: `head -c 1048577 /dev/zero | tr '\0' '#' >> "$O"; echo big; exit 78`, Skipped: true, Reason: "big"},

		// Error semantics: hard errors after exit 0.
		{Name: "a line that is not key=value", Script: `printf 'reason=x\nskipped true\n' >> "$O"`, Protocol: pe(2, prescript.RuleNotKeyValue)},
		{Name: "a key that fails the key pattern (leading digit)", Script: `printf 'ok=1\n9lives=x\n' >> "$O"`, Protocol: pe(2, prescript.RuleKeyPattern)},
		{Name: "a key that fails the key pattern (dot)", Script: `echo 'my.key=1' >> "$O"`, Protocol: pe(1, prescript.RuleKeyPattern)},
		{Name: "a key that fails the key pattern (empty)", Script: `echo '=1' >> "$O"`, Protocol: pe(1, prescript.RuleKeyPattern)},
		{Name: "a key differing from a reserved key only by case (SKIPPED)", Script: `echo 'SKIPPED=true' >> "$O"`, Protocol: pe(1, prescript.RuleReservedCase)},
		{Name: "a key differing from a reserved key only by case (Reason)", Script: `printf '# c\nReason=x\n' >> "$O"`, Protocol: pe(2, prescript.RuleReservedCase)},
		{Name: "a key differing from a reserved key only by case (Skipped)", Script: `echo 'Skipped=true' >> "$O"`, Protocol: pe(1, prescript.RuleReservedCase)},
		{Name: "a key differing from a reserved key only by case (REASON, blanks around)", Script: `echo '  REASON = x' >> "$O"`, Protocol: pe(1, prescript.RuleReservedCase)},
		{Name: "a UTF-8 byte order mark at file start is named as such", Script: `printf '\357\273\277skipped=true\n' >> "$O"`, Protocol: pe(1, prescript.RuleBOM)},
		{Name: "no heredoc: a hyphenated key<<DELIMITER is named as a heredoc", Script: `printf 'my-out << EOF\nx\nEOF\n' >> "$O"`, Protocol: pe(1, prescript.RuleHeredoc)},
		{Name: "a value containing a control character (bare CR smuggling an entry)", Script: `printf 'reason=a\rskipped=false\n' >> "$O"`, Protocol: pe(1, prescript.RuleControlChar)},
		{Name: "a value containing a control character (CRLF line ending)", Script: `printf 'skipped=true\r\n' >> "$O"`, Protocol: pe(1, prescript.RuleControlChar)},
		{Name: "a value containing a control character (DEL)", Script: `printf 'myagent_k=a\177\n' >> "$O"`, Protocol: pe(1, prescript.RuleControlChar)},
		{Name: "skipped set to anything but true/false", Script: `echo skipped=yes >> "$O"`, Protocol: pe(1, prescript.RuleSkippedValue)},
		{Name: "skipped values are case-sensitive", Script: `echo skipped=TRUE >> "$O"`, Protocol: pe(1, prescript.RuleSkippedValue)},
		{Name: "no quoting: skipped=\"true\" is an error", Script: `echo 'skipped="true"' >> "$O"`, Protocol: pe(1, prescript.RuleSkippedQuoted)},
		{Name: "skipped present but empty (skipped=${SKIP} with SKIP unset)", Script: `echo "skipped=${SKIP:-}" >> "$O"`, Protocol: pe(1, prescript.RuleSkippedEmpty)},
		{Name: "no heredoc: key<<DELIMITER is an error naming the limitation", Script: `printf 'reason<<EOF\nmulti\nEOF\n' >> "$O"`, Protocol: pe(1, prescript.RuleHeredoc)},
		{Name: "the output file missing after the script ran", Script: `rm -f "$O"`, Protocol: pe(0, prescript.RuleFileMissing)},
		{Name: "the output file replaced by a directory", Script: `rm -f "$O" && mkdir "$O"`, Protocol: pe(0, prescript.RuleNotRegular)},
		{Name: "the output file replaced by a symlink", Script: `rm -f "$O" && ln -s /dev/null "$O"`, Protocol: pe(0, prescript.RuleNotRegular)},
		{Name: "a file larger than 1 MiB", Script: `head -c 1048577 /dev/zero | tr '\0' '#' >> "$O"`, Protocol: pe(0, prescript.RuleFileTooLarge)},

		// Any other non-zero exit code is a hard failure.
		{Name: "exit 1 is a hard failure", Script: `echo "it broke" >&2; exit 1`, Fail: &Failure{ExitCode: 1, Diagnostic: "it broke"}},
		{Name: "exit 2 is a hard failure", Script: `echo "usage: nope" >&2; exit 2`, Fail: &Failure{ExitCode: 2, Diagnostic: "usage: nope"}},
		{Name: "exit 77 is a hard failure", Script: `echo skipped=true >> "$O"; echo "seventy-seven"; exit 77`, Fail: &Failure{ExitCode: 77, Diagnostic: "seventy-seven"}},
		{Name: "exit 79 is a hard failure", Script: `echo "seventy-nine" >&2; exit 79`, Fail: &Failure{ExitCode: 79, Diagnostic: "seventy-nine"}},
		{Name: "exit 127 (command not found) is a hard failure", Script: `no-such-command-forgectx-test`,
			Fail: &Failure{ExitCode: 127, Contains: []string{"no-such-command-forgectx-test: command not found"}}},

		// Hard-failure diagnostics: preference order, sanitising, capping.
		{Name: "diagnostics: annotations from stdout first, then stderr, each in stream order", Script: `
echo "::error::first on stderr" >&2
echo "::error::first on stdout"
echo "##[error]second on stdout"
echo "::error title=Bad input,file=x.sh,line=3::third on stdout"
echo "  ::error::second on stderr" >&2
echo "a plain stderr line" >&2
echo "a plain stdout line"
exit 1`, Fail: &Failure{ExitCode: 1, Diagnostic: "first on stdout | second on stdout | third on stdout | first on stderr | second on stderr"}},
		{Name: "diagnostics: ::error file=x,line=1::msg contributes msg, ahead of a later plain stderr line", Script: `echo "::error file=x,line=1::msg" >&2; echo "plain" >&2; exit 1`,
			Fail: &Failure{ExitCode: 1, Diagnostic: "msg"}},
		{Name: "diagnostics: ##[error] on stderr beats the last stdout and stderr lines", Script: `echo "##[error]legacy form" >&2; echo out; echo err >&2; exit 1`,
			Fail: &Failure{ExitCode: 1, Diagnostic: "legacy form"}},
		{Name: "diagnostics: a parameterised annotation contributes its message", Script: `echo "::error title=Cap,file=.fullsend/scripts/pre-fix.sh::Fix iteration 4 exceeds bot cap of 3. Escalating to human."; exit 1`,
			Fail: &Failure{ExitCode: 1, Diagnostic: "Fix iteration 4 exceeds bot cap of 3. Escalating to human."}},
		{Name: "diagnostics: annotation data escapes are decoded, then control characters stripped", Script: `echo "::error::100%25 broken%0Anext"; exit 1`,
			Fail: &Failure{ExitCode: 1, Diagnostic: "100% brokennext"}},
		{Name: "diagnostics: without annotations, the last non-empty stderr line", Script: `echo out; echo err1 >&2; echo err2 >&2; echo >&2; echo "  " >&2; exit 3`,
			Fail: &Failure{ExitCode: 3, Diagnostic: "err2"}},
		{Name: "diagnostics: without stderr, the last non-empty stdout line", Script: `echo out1; echo out2; echo; exit 4`,
			Fail: &Failure{ExitCode: 4, Diagnostic: "out2"}},
		{Name: "diagnostics: a script that printed nothing", Script: `exit 5`,
			Fail: &Failure{ExitCode: 5, Diagnostic: "exited with code 5 and printed nothing"}},
		{Name: "diagnostics: sanitised and capped at 1024 bytes", Script: `printf '\033[1mbold\033[0m '; head -c 4000 /dev/zero | tr '\0' b; echo; exit 1`,
			Fail: &Failure{ExitCode: 1, Diagnostic: "[1mbold[0m " + strings.Repeat("b", 1024-len("[1mbold[0m "))}},
		{Name: "diagnostics: a stderr line far longer than any buffer", Script: `head -c 300000 /dev/zero | tr '\0' c >&2; echo " end" >&2; exit 1`,
			Fail: &Failure{ExitCode: 1, Diagnostic: strings.Repeat("c", 1024)}},

		// Secrets.
		{Name: "secrets: a ghp_ token in an annotation is redacted", Script: `echo "::error::push failed with token ` + GitHubToken + ` for repo"; exit 1`,
			Fail: &Failure{ExitCode: 1, Contains: []string{"push failed with token", "for repo"}, Excludes: []string{GitHubToken, GitHubToken[:20]}}},
		{Name: "secrets: the value of a *_TOKEN env var is redacted from the stderr diagnostic", Script: `echo "auth with $DEPLOY_TOKEN failed" >&2; exit 1`,
			Env:  map[string]string{"DEPLOY_TOKEN": DeployTokenValue},
			Fail: &Failure{ExitCode: 1, Contains: []string{"auth with", "failed"}, Excludes: []string{DeployTokenValue}}},
		{Name: "secrets: the exit-78 stdout reason is redacted", Script: `echo "skipping; token $DEPLOY_TOKEN and ` + GitHubToken + `"; exit 78`,
			Env: map[string]string{"DEPLOY_TOKEN": DeployTokenValue}, Skipped: true, ReasonExcludes: []string{DeployTokenValue, GitHubToken}},
		{Name: "secrets: a file-based reason is not redacted", Script: `echo "reason=chosen by author $DEPLOY_TOKEN" >> "$O"; exit 78`,
			Env: map[string]string{"DEPLOY_TOKEN": DeployTokenValue}, Skipped: true, Reason: "chosen by author " + DeployTokenValue},

		// Version skew.
		{Name: "version skew: a new script guarding on the variable skips under a new CLI", Script: GuardedScript, Skipped: true, Reason: "an open PR already addresses this issue"},
	}
}

// GuardedScript is the spec's "Version skew" guard verbatim. Run without
// FULLSEND_PRESCRIPT_OUTPUT (an old CLI) it succeeds and writes nothing.
const GuardedScript = `if [ -n "${FULLSEND_PRESCRIPT_OUTPUT:-}" ]; then
  {
    echo "skipped=true"
    echo "reason=an open PR already addresses this issue"
  } >> "${FULLSEND_PRESCRIPT_OUTPUT}"
fi`

func pe(line int, rule prescript.Rule) *prescript.ProtocolError {
	return &prescript.ProtocolError{Line: line, Rule: rule}
}

// WriteScript writes body as an executable bash script in dir and returns its path. $O is set
// to the output file's path only when the variable exists, so a script run without it fails
// only where it would in real life (>> "").
func WriteScript(t testing.TB, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	src := "#!/usr/bin/env bash\nO=\"${FULLSEND_PRESCRIPT_OUTPUT:-}\"\n" + body + "\n"
	if err := os.WriteFile(path, []byte(src), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// Command is the argv that runs a script written by WriteScript: through bash rather than
// directly, because exec'ing a file that was just written races with parallel tests forking
// (the child can inherit the still-open write descriptor: ETXTBSY, golang/go#22315).
func Command(path string) []string { return []string{"bash", path} }

// Env is the base environment for a table script (PATH, so /usr/bin/env finds bash) plus the
// case's extras, as KEY=VALUE sorted by key.
func Env(extra map[string]string) map[string]string {
	m := map[string]string{"PATH": os.Getenv("PATH")}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// Environ flattens an Env map for exec, sorted for determinism.
func Environ(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// WantOutputs returns c.Outputs as a non-nil map.
func (c Case) WantOutputs() map[string]string {
	if c.Outputs == nil {
		return map[string]string{}
	}
	return c.Outputs
}
