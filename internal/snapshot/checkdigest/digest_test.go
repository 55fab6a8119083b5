package checkdigest

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the digest goldens under testdata/golden")

// Every rule matches its own sample, and no earlier rule of another category does (the table's
// order is the precedence, so a sample an earlier rule of another category matched would be
// classified as that category).
func TestRulesMatchTheirSamples(t *testing.T) {
	ids := map[string]bool{}
	kebab := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	for i, r := range rules {
		if ids[r.ID] || !kebab.MatchString(r.ID) {
			t.Errorf("rule %q: ids are unique and kebab-case", r.ID)
		}
		ids[r.ID] = true
		if !slices.Contains(categories(), r.Category) {
			t.Errorf("rule %s: category %q is not in the closed set", r.ID, r.Category)
		}
		if len(r.Keywords) == 0 || r.Sample == "" {
			t.Errorf("rule %s: a rule needs keywords and a sample", r.ID)
		}
		if !r.match(r.Sample) {
			t.Errorf("rule %s does not match its own sample %q", r.ID, r.Sample)
		}
		got := classify([]byte(r.Sample), make([]bool, len(rules)))
		if got < 0 || got > i || rules[got].Category != r.Category {
			t.Errorf("rule %s: its sample is classified by %s (%s)", r.ID, ruleID(got), categoryOf(got))
		}
	}
}

func ruleID(i int) string {
	if i < 0 {
		return "no rule"
	}
	return rules[i].ID
}

func categoryOf(i int) Category {
	if i < 0 {
		return catUnknown
	}
	return rules[i].Category
}

// The closed category set is documented, each with its meaning, and so is every rule.
func TestCategoriesAndRulesAreDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/check-digest.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range categories() {
		if !bytes.Contains(doc, []byte("| `"+string(c)+"` |")) {
			t.Errorf("docs/check-digest.md has no row for category %s", c)
		}
	}
	for _, r := range rules {
		if !bytes.Contains(doc, []byte("`"+r.ID+"`")) {
			t.Errorf("docs/check-digest.md does not list rule %s", r.ID)
		}
	}
}

func digestOf(s string) Digest { return Of([]byte(s), Limits{}) }

func TestGitHubFormat(t *testing.T) {
	d := digestOf("2024-01-02T03:04:05.1234567Z Complete job name: test (ubuntu-latest)\n" +
		"2024-01-02T03:04:05.1234568Z ##[group]Run go vet ./...\n" +
		"2024-01-02T03:04:05.1234569Z ##[endgroup]\n" +
		"2024-01-02T03:04:06.0000000Z ##[group]Run go test ./...\n" +
		"2024-01-02T03:04:06.1000000Z go test ./...\n" +
		"2024-01-02T03:04:06.2000000Z ##[endgroup]\n" +
		"2024-01-02T03:04:07.0000000Z --- FAIL: TestX (0.00s)\n" +
		"2024-01-02T03:04:07.1000000Z ##[warning]slow runner\n" +
		"2024-01-02T03:04:08.0000000Z ##[error]Process completed with exit code 1.\n")
	if d.Format != formatGitHub || d.Job != "test (ubuntu-latest)" || d.Step != "go test ./..." {
		t.Fatalf("format %q job %q step %q", d.Format, d.Job, d.Step)
	}
	if d.Category != catTest || d.Rule != "go-test-fail" || d.FirstError != "--- FAIL: TestX (0.00s)" {
		t.Fatalf("category %s rule %s first %q", d.Category, d.Rule, d.FirstError)
	}
	want := []Line{{5, "go test ./...", false}, {7, "--- FAIL: TestX (0.00s)", true}, {8, "slow runner", false}, {9, "Process completed with exit code 1.", true}}
	if !slices.Equal(d.Lines, want) {
		t.Fatalf("lines %+v\nwant %+v", d.Lines, want)
	}
}

func TestGitLabRawAndFiltered(t *testing.T) {
	raw := "\x1b[0K\x1b[36;1mRunning with gitlab-runner 17.5.2\x1b[0;m\n" +
		"\x1b[0Ksection_start:1764900000:step_script[collapsed=true]\r\x1b[0K\x1b[36;1mExecuting \"step_script\" stage\x1b[0;m\n" +
		"\x1b[32;1m$ go build ./...\x1b[0;m\n" +
		"main.go:3:1: undefined: x\n" +
		"\x1b[0Ksection_end:1764900005:step_script\r\x1b[0K\n" +
		"\x1b[0Ksection_start:1764900005:cleanup_file_variables\r\x1b[0K\x1b[36;1mCleaning up project directory and file based variables\x1b[0;m\n" +
		"\x1b[0Ksection_end:1764900006:cleanup_file_variables\r\x1b[0K\n" +
		"\x1b[31;1mERROR: Job failed: exit code 1\x1b[0;m\n"
	// The snapshot's filter removes terminal escapes and turns each CR into a line end.
	filtered := "Running with gitlab-runner 17.5.2\nsection_start:1764900000:step_script[collapsed=true]\nExecuting \"step_script\" stage\n$ go build ./...\nmain.go:3:1: undefined: x\nsection_end:1764900005:step_script\n\nERROR: Job failed: exit code 1\n"
	for name, log := range map[string]string{"raw": raw, "filtered": filtered} {
		d := digestOf(log)
		if d.Format != formatGitLab || d.Step != "step_script" || d.Category != catCompile || d.Rule != "go-compile" {
			t.Errorf("%s: format %q step %q category %s rule %s", name, d.Format, d.Step, d.Category, d.Rule)
		}
		var keys []string
		for _, l := range d.Lines {
			if strings.ContainsAny(l.Text, "\x1b\r") || strings.Contains(l.Text, "Cleaning up") {
				t.Errorf("%s: line %d keeps an escape, a CR or cleanup noise: %q", name, l.Number, l.Text)
			}
			if l.Key {
				keys = append(keys, fmt.Sprint(l.Number, " ", l.Text))
			}
		}
		wantKeys := map[string][]string{"raw": {"4 main.go:3:1: undefined: x", "8 ERROR: Job failed: exit code 1"}, "filtered": {"5 main.go:3:1: undefined: x", "8 ERROR: Job failed: exit code 1"}}[name]
		if !slices.Equal(keys, wantKeys) {
			t.Errorf("%s: key lines %q, want %q (1-based lines of the file)", name, keys, wantKeys)
		}
	}
	// GitLab's timestamped traces: the timestamp and the stream marker go.
	d := digestOf("2026-09-03T14:02:01.000001Z 00O section_start:1:build\n2026-09-03T14:02:02.000001Z 01E+ ERROR: Job failed: execution took longer than 1h0m0s seconds\n")
	if d.Category != catTimeout || len(d.Lines) != 1 || d.Lines[0].Text != "ERROR: Job failed: execution took longer than 1h0m0s seconds" {
		t.Errorf("timestamped trace: %+v", d)
	}
}

func TestForgejoFormat(t *testing.T) {
	d := digestOf("[CI/unit] ⭐ Run Main actions/checkout@v4\n[CI/unit]   ✅  Success - Main actions/checkout@v4\n[CI/unit] ⭐ Run Main cargo test\n[CI/unit] test result: FAILED. 1 passed; 1 failed\n[CI/unit]   ❌  Failure - Main cargo test\n[CI/unit] exitcode '101': failure\n")
	if d.Format != formatForgejo || d.Job != "unit" || d.Step != "cargo test" || d.Category != catTest || d.Rule != "cargo-test-result" {
		t.Fatalf("%+v", d)
	}
	if d.Lines[len(d.Lines)-1].Text != "exitcode '101': failure" || !d.Lines[len(d.Lines)-1].Key {
		t.Errorf("the act prefix is not stripped or the failure line is not key: %+v", d.Lines)
	}
}

// Every step row matches its own sample, no earlier row of another category does, ids are
// unique kebab-case and distinct from the line rules', and every row is documented.
func TestStepRulesMatchTheirSamples(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/check-digest.md")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, r := range rules {
		ids[r.ID] = true
	}
	kebab := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	for i, r := range stepRules {
		if ids[r.ID] || !kebab.MatchString(r.ID) {
			t.Errorf("step rule %q: ids are unique and kebab-case", r.ID)
		}
		ids[r.ID] = true
		if !slices.Contains(categories(), r.Category) || r.Category == catUnknown {
			t.Errorf("step rule %s: category %q decides nothing", r.ID, r.Category)
		}
		if got := stepRule(r.Sample); got != i {
			t.Errorf("step rule %s: its sample %q is decided by row %d", r.ID, r.Sample, got)
		}
		if !bytes.Contains(doc, []byte("`"+r.ID+"`")) {
			t.Errorf("docs/check-digest.md does not list step rule %s", r.ID)
		}
	}
	// Words that merely contain a row's keyword decide nothing.
	for _, cmd := range []string{"./scripts/check-licenses.sh", "docker pull app:latest", "./scripts/deploy.sh", "echo done", "bundle exec rake release"} {
		if got := stepRule(cmd); got >= 0 {
			t.Errorf("%q is decided by step rule %s", cmd, stepRules[got].ID)
		}
	}
	// The first matching row decides: a test runner's options or a build's output format do
	// not make it another kind of step.
	for cmd, want := range map[string]string{"npm run build -- --format=esm": "step-compile", "pytest --format=json": "step-test", "cargo fmt --check": "step-lint", "go test -run TestBuild ./...": "step-test"} {
		if got := stepRule(cmd); got < 0 || stepRules[got].ID != want {
			t.Errorf("%q: step row %d, want %s", cmd, got, want)
		}
	}
}

// The generic rows recognise a line shape many tools share, not one tool's line: each case is
// a real-shaped line of a tool the corpus has no log of, and the row that must classify it.
func TestSharedLineShapes(t *testing.T) {
	cand := make([]bool, len(rules))
	for _, c := range []struct{ line, rule string }{
		{"lib/shop/cart.ex:12:5: error: undefined variable \"totl\"", "compiler-error"},
		{"  /home/runner/work/app/src/app.py:12:5 - error: \"foo\" is not defined (reportUndefinedVariable)", "compiler-error"},
		{"** (CompileError) lib/shop/cart.ex:12: undefined function totl/0", "compiler-error"},
		{"Main.kt:(.text+0x1a): undefined reference to `retry'", "linker-error"},
		{"error: linking with `cc` failed: exit status: 1", "linker-error"},
		{"src/app.py:1:0: C0114: Missing module docstring (missing-module-docstring)", "flake8-ruff"},
		{"Diff in /home/runner/work/widgets/src/lib.rs:12:", "lint-summary"},
		{"  12:81     error    line too long (97 > 80 characters)  (line-length)", "eslint-error"},
		{"oh no: 3 files would be reformatted, 12 files would be left unchanged.", "lint-summary"},
		{"Test Case '-[AppTests.CartTests testTotal]' failed (0.002 seconds).", "test-failed-marker"},
		{"FAIL: test_total (shop.tests.CartTests.test_total)", "test-failed-marker"},
		{"  ● Test suite failed to run", "jest-failed-test"},
		{"  2 failing", "test-summary"},
		{"FAILED (failures=2, errors=1)", "test-summary"},
		{"Tests: 12, Assertions: 30, Failures: 2.", "test-failure-count"},
		{"FAIL Required test coverage of 90% not reached. Total coverage: 85.00%", "coverage-threshold"},
		{"AssertionError: expected 90 to equal 85", "assertion-failed"},
		{"npm error notarget No matching version found for left-pad@^9.0.0.", "dependency-unsatisfiable"},
		{"error: Dependencies could not be resolved because root depends on 'swift-nio' 9.0.0..<10.0.0.", "dependency-unsatisfiable"},
		{"fatal: unable to access 'https://git.example.com/x.git/': SSL certificate problem: unable to get local issuer certificate", "network-error"},
		{"toomanyrequests: You have reached your pull rate limit.", "network-error"},
		{"The hosted runner encountered an error while running your job. (Error Type: Disconnect).", "runner-error"},
		{"* What went wrong:", "maven-build-failure"},
		{"CMake Error at CMakeLists.txt:12 (find_package):", "failure-banner"},
		{"rake aborted!", "failure-banner"},
		{"java.lang.IllegalStateException: pool closed", "exception-line"},
		{"PHP Fatal error:  Uncaught Error: Class \"Shop\\Cart\" not found", "exception-line"},
		{"E: Unable to locate package libpq-dev", "error-prefix"},
		{"    Error: Timed out 5000ms waiting for expect(locator).toBeVisible()", "error-prefix"},
		{"[error] (Compile / compileIncremental) Compilation failed", "error-prefix"},
		{"ERROR: InvocationError for command /usr/bin/pytest tests (exited with code 1)", "exit-status"},
	} {
		if got := classify([]byte(c.line), cand); ruleID(got) != c.rule {
			t.Errorf("%q: rule %s, want %s", c.line, ruleID(got), c.rule)
		}
	}
	// Shapes that look close but are not failures decide nothing.
	for _, line := range []string{
		"src/types.ts(3,5): error TS2344: Type 'string' does not satisfy the constraint 'number'.",
		"1) Install the dependencies",
		"Tests:       18 passed, 18 total",
		"the assertion helpers live in test/assert.go",
	} {
		if got := classify([]byte(line), cand); got >= 0 && rules[got].Category != catCompile {
			t.Errorf("%q: classified by %s (%s)", line, ruleID(got), categoryOf(got))
		}
	}
}

// When only generic failure lines matched, the running command decides the category: the
// step's name (GitHub, Forgejo) or the last "$ command" GitLab echoed before the first key line.
func TestStepDecidesCategory(t *testing.T) {
	for _, c := range []struct {
		name, log string
		cat       Category
		rule      string
	}{
		{"gitlab echo", "Running with gitlab-runner 17.5.2\nsection_start:1:step_script\n$ composer validate\n$ vendor/bin/phpunit\nsomething went wrong\nsection_end:2:step_script\nERROR: Job failed: exit code 1\n", catTest, "step-test"},
		{"github step", "2024-01-02T03:04:05.1234568Z ##[group]Run npm ci\n2024-01-02T03:04:05.1234569Z ##[endgroup]\n2024-01-02T03:04:06.0000000Z ##[error]Process completed with exit code 1.\n", catDependency, "step-dependency"},
		{"forgejo step", "[CI/lint] ⭐ Run Main helm lint charts/app\n[CI/lint] Error: 1 chart(s) linted, 1 chart(s) failed\n[CI/lint]   ❌  Failure - Main helm lint charts/app\n", catLint, "step-lint"},
		// A specific rule still wins over the step: the build broke under "go test".
		{"rule wins", "2024-01-02T03:04:05.1234568Z ##[group]Run go test ./...\n2024-01-02T03:04:06.0000000Z ./a.go:1:2: undefined: x\n", catCompile, "go-compile"},
		// A linter that reports through the compiler is lint.
		{"lint step", "2024-01-02T03:04:05.1234568Z ##[group]Run cargo clippy -- -D warnings\n2024-01-02T03:04:06.0000000Z error: could not compile `widgets` (lib) due to 1 previous error\n", catLint, "step-lint"},
		// GitHub echoes the whole script under "Run <first line>": the tool is in a later line.
		{"github script", "2024-01-02T03:04:05.1234568Z ##[group]Run set -euo pipefail\n2024-01-02T03:04:05.1234569Z set -euo pipefail\n2024-01-02T03:04:05.1234570Z cd services/api\n2024-01-02T03:04:05.1234571Z python -m pytest -q\n2024-01-02T03:04:05.1234572Z shell: /usr/bin/bash -e {0}\n2024-01-02T03:04:05.1234573Z env:\n2024-01-02T03:04:05.1234574Z   BUILD_TARGET: release\n2024-01-02T03:04:05.1234575Z ##[endgroup]\n2024-01-02T03:04:06.0000000Z something broke\n2024-01-02T03:04:06.1000000Z ##[error]Process completed with exit code 1.\n", catTest, "step-test"},
		// The step's environment is not its script.
		{"github env", "2024-01-02T03:04:05.1234568Z ##[group]Run ./deploy.sh\n2024-01-02T03:04:05.1234569Z ./deploy.sh\n2024-01-02T03:04:05.1234572Z shell: /usr/bin/bash -e {0}\n2024-01-02T03:04:05.1234573Z env:\n2024-01-02T03:04:05.1234574Z   RUN_TESTS: false\n2024-01-02T03:04:05.1234575Z ##[endgroup]\n2024-01-02T03:04:06.1000000Z ##[error]Process completed with exit code 1.\n", catUnknown, ""},
		// A step that printed no failure line says nothing about a failure.
		{"no key line", "2024-01-02T03:04:05.1234568Z ##[group]Run npm test\n2024-01-02T03:04:06.0000000Z all good\n", catUnknown, ""},
		// An unknown script stays unknown.
		{"unknown script", "2024-01-02T03:04:05.1234568Z ##[group]Run ./scripts/check-licenses.sh\n2024-01-02T03:04:06.0000000Z ##[error]Process completed with exit code 1.\n", catUnknown, ""},
	} {
		d := digestOf(c.log)
		if d.Category != c.cat || d.Rule != c.rule {
			t.Errorf("%s: category %s rule %q, want %s %q", c.name, d.Category, d.Rule, c.cat, c.rule)
		}
	}
}

// GitLab prints "ERROR: Job failed" after the script's section has ended; the step of such a
// key line is the last section that printed a line, not "".
func TestGitLabStepAfterSectionEnd(t *testing.T) {
	d := digestOf("Running with gitlab-runner 17.5.2\nsection_start:1:step_script\n$ ./run.sh\nworking\nsection_end:2:step_script\nsection_start:3:cleanup_file_variables\nCleaning up project directory and file based variables\nsection_end:4:cleanup_file_variables\nERROR: Job failed: exit code 1\n")
	if d.Step != "step_script" || d.FirstError != "ERROR: Job failed: exit code 1" {
		t.Errorf("step %q first %q", d.Step, d.FirstError)
	}
}

// A log the tool cannot read still gives a digest: plain, unknown, no lines, never nil.
func TestNoErrorLines(t *testing.T) {
	for _, log := range []string{"", "\n", "all good\nok\n"} {
		d := digestOf(log)
		if d.Format != formatPlain || d.Category != catUnknown || d.Lines == nil || len(d.Lines) != 0 || d.OmittedLines != 0 {
			t.Errorf("%q: %+v", log, d)
		}
		if !strings.Contains(Render(Check{Digest: d}), "no error line recognised") {
			t.Errorf("%q: the rendering does not say nothing was recognised", log)
		}
	}
}

// Bounds: at most MaxKeyLines key lines, the rest counted and marked; MaxBytes of text;
// MaxLineBytes per line.
func TestBounds(t *testing.T) {
	var b strings.Builder
	for i := range 50 {
		fmt.Fprintf(&b, "--- FAIL: TestCase%02d (0.00s)\n    case_test.go:%d: %s\n", i, i+1, strings.Repeat("z", 500))
	}
	lim := Limits{MaxKeyLines: 5, Context: 1, MaxLineBytes: 100, MaxBytes: 1000}
	d := Of([]byte(b.String()), lim)
	keys, size := 0, 0
	for _, l := range d.Lines {
		if l.Key {
			keys++
		}
		size += len(l.Text)
		if len(l.Text) > 100+len(ellipsis) {
			t.Errorf("line %d is %d bytes", l.Number, len(l.Text))
		}
	}
	// Each key line is 100 bytes plus the ellipsis: 1000 bytes hold nine of them, five allowed.
	if keys != 5 || size > 1000 || d.OmittedLines != 100-5 {
		t.Fatalf("%d key lines, %d bytes, %d omitted", keys, size, d.OmittedLines)
	}
	if !strings.HasSuffix(Render(Check{Digest: d}), "… 95 more error lines not shown\n") {
		t.Errorf("no omission marker:\n%s", Render(Check{Digest: d}))
	}
	d = Of([]byte(b.String()), Limits{MaxKeyLines: 50, MaxLineBytes: 100, MaxBytes: 250})
	if keys := countKeys(d); keys != 3 || d.OmittedLines != 97 {
		t.Errorf("byte bound: %d key lines, %d omitted", keys, d.OmittedLines)
	}
}

func countKeys(d Digest) int {
	n := 0
	for _, l := range d.Lines {
		if l.Key {
			n++
		}
	}
	return n
}

// Specific key lines come before generic ones when the bound bites.
func TestSpecificLinesFirst(t *testing.T) {
	log := "npm ERR! one\nnpm ERR! two\nnpm ERR! three\nerror TS2322: Type 'string' is not assignable\n"
	d := Of([]byte(log), Limits{MaxKeyLines: 1})
	if len(d.Lines) == 0 || !d.Lines[len(d.Lines)-1].Key || d.Lines[len(d.Lines)-1].Number != 4 || d.OmittedLines != 3 || d.Category != catCompile {
		t.Fatalf("%+v", d)
	}
}

// A context line that is itself an error line the bound left out is not shown unmarked.
func TestOmittedKeyLinesAreNotContext(t *testing.T) {
	d := Of([]byte("--- FAIL: TestA (0s)\n--- FAIL: TestB (0s)\n--- FAIL: TestC (0s)\n"), Limits{MaxKeyLines: 1})
	if len(d.Lines) != 1 || d.Lines[0].Number != 1 || d.OmittedLines != 2 {
		t.Fatalf("%+v", d)
	}
}

// Render's exact bytes for a handful of the corpus (after the snapshot's filter).
func TestGoldenDigests(t *testing.T) {
	names := []string{"gha-go-test-fail", "gha-jest-fail", "gha-hostile", "gitlab-pytest", "gitlab-system-failure", "forgejo-cargo-build", "gha-job-timeout", "plain-make-only"}
	for _, name := range names {
		log, err := os.ReadFile(filepath.Join(corpusDir, name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		got := Render(Check{Name: name, Conclusion: "failure", Path: "checks/" + strings.Repeat("0", 64) + "/log.txt", Digest: Of(filtered(t, name, log), Limits{})})
		p := filepath.Join("testdata", "golden", name+".txt")
		if *update {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%v (run with -update)", err)
		}
		if got != string(want) {
			t.Errorf("%s: digest differs from %s:\n%s", name, p, got)
		}
	}
}

// checkBounds fails when d breaks lim or the invariants of a digest.
func checkBounds(t *testing.T, log []byte, d Digest, lim Limits) {
	t.Helper()
	lim = lim.withDefaults()
	lines := len(splitLines(log))
	keys, size, prev := 0, 0, 0
	for _, l := range d.Lines {
		if l.Number <= prev || l.Number > lines {
			t.Fatalf("line number %d after %d (log of %d lines)", l.Number, prev, lines)
		}
		prev = l.Number
		if l.Key {
			keys++
		}
		size += len(l.Text)
		if len(l.Text) > lim.MaxLineBytes+len(ellipsis) || !utf8.ValidString(l.Text) || strings.ContainsAny(l.Text, "\x1b\r\n\x00") {
			t.Fatalf("line %d: %q", l.Number, l.Text)
		}
	}
	if d.Lines == nil || keys > lim.MaxKeyLines || size > lim.MaxBytes || d.OmittedLines < 0 {
		t.Fatalf("%d key lines, %d bytes, %d omitted", keys, size, d.OmittedLines)
	}
	if !slices.Contains(categories(), d.Category) {
		t.Fatalf("category %q", d.Category)
	}
}

// FuzzOf: any bytes give a digest within its bounds, the same one every time.
func FuzzOf(f *testing.F) {
	for _, name := range []string{"gha-go-test-fail", "gitlab-go-test", "forgejo-npm-test", "gha-hostile"} {
		b, err := os.ReadFile(filepath.Join(corpusDir, name+".log"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, 3, 1, 40, 200)
	}
	f.Add([]byte("\x1b[31m\r\x1b]0;t\x07##[group]Run \xff\n--- FAIL: \n"), 1, 1, 1, 1)
	f.Fuzz(func(t *testing.T, log []byte, keys, ctx, lineBytes, bytes int) {
		lim := Limits{MaxKeyLines: keys % 20, Context: ctx % 5, MaxLineBytes: lineBytes % 500, MaxBytes: bytes % 5000}
		d := Of(log, lim)
		checkBounds(t, log, d, lim)
		again := Of(slices.Clone(log), lim)
		if Render(Check{Digest: d}) != Render(Check{Digest: again}) || !slices.Equal(d.Lines, again.Lines) {
			t.Fatal("two digests of the same log differ")
		}
	})
}

// benchLog is n bytes of a GitHub Actions log: passing test output with a failure every 200
// lines.
func benchLog(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		if i%200 == 199 {
			fmt.Fprintf(&b, "2026-09-03T14:02:%02d.%07dZ --- FAIL: TestGenerated%06d (0.01s)\n", i%60, i%10000000, i)
			continue
		}
		fmt.Fprintf(&b, "2026-09-03T14:02:%02d.%07dZ === RUN   TestGenerated%06d/subtest_with_a_longer_name\n", i%60, i%10000000, i)
	}
	return b.Bytes()[:n]
}

func benchOf(b *testing.B, n int) {
	log := benchLog(n)
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		Of(log, Limits{})
	}
}

// BenchmarkOfCorpus64KiB runs the digest on 64 KiB of the corpus's own logs (every forge's
// format, many tools' error lines), where far more lines reach a rule's pattern than in the
// passing test output of benchLog.
func BenchmarkOfCorpus64KiB(b *testing.B) {
	logs, err := filepath.Glob(filepath.Join(corpusDir, "*.log"))
	if err != nil || len(logs) == 0 {
		b.Fatalf("no corpus: %v", err)
	}
	var all []byte
	for _, p := range logs {
		x, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		if len(x) < 16<<10 { // the long logs are mostly passing lines
			all = append(all, x...)
		}
	}
	for len(all) < 64<<10 {
		all = append(all, all...)
	}
	all = all[:64<<10]
	b.SetBytes(int64(len(all)))
	b.ReportAllocs()
	for b.Loop() {
		Of(all, Limits{})
	}
}

// BenchmarkOf64KiB and its larger siblings show the digest is linear in the log's size.
func BenchmarkOf64KiB(b *testing.B) { benchOf(b, 64<<10) }
func BenchmarkOf1MiB(b *testing.B)  { benchOf(b, 1<<20) }
func BenchmarkOf8MiB(b *testing.B)  { benchOf(b, 8<<20) }
