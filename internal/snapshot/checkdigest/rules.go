package checkdigest

import (
	"bytes"
	"regexp"
	"strings"
)

// ruleRow is one row of the classifier table, in the style of a secret scanner's rule list: an
// id, the literal keywords that pre-filter lines (cheap, so the digest stays linear in the
// log), an optional regular expression that decides, and a sample. A line is a key line of a
// rule when it contains one of the rule's Keywords (case-sensitive) and, when the rule has a
// Pattern, the pattern matches the line's text (without timestamp, ANSI escapes or the
// runner's ##[error]/##[warning] prefix).
//
// The table's order is the precedence: a digest's category is the category of the earliest
// rule that matched any line of the log, so a timeout beats the test output printed before
// it, a runner shutdown beats the cancellation it causes, a missing go.sum entry beats the build failure it causes, and a language's own error
// beats the make or docker line that wraps it. Rules of the Unknown category are generic
// ("exit code 1", "##[error]…"): they give key lines but never a category, and a digest keeps
// them only after every specific key line.
type ruleRow struct {
	ID       string   // stable, kebab-case; Digest.Rule names it
	Category Category // from the closed set
	Keywords []string // literals (at least two bytes each); a line must contain one
	Pattern  string   // optional regular expression the line must also match (RE2)
	Sample   string   // a real-shaped line the rule must match (tested)

	re *regexp.Regexp
}

// generic reports whether the rule decides no category (its lines rank after specific ones).
func (r *ruleRow) generic() bool { return r.Category == catUnknown }

// match reports whether text is a key line of the rule, keywords included (the digest itself
// reaches the pattern only through the keyword index; this is the whole rule, for tests).
func (r *ruleRow) match(text string) bool {
	for _, k := range r.Keywords {
		if strings.Contains(text, k) {
			return r.re == nil || r.re.MatchString(text)
		}
	}
	return false
}

func kw(k ...string) []string { return k }

// goFile is a Go source position at the start of a line: path/file.go:LINE:COL:.
const goFile = `^(\.{1,2}/)?[\w.@+/-]*\w\.go:\d+:\d+: `

// rules is the classifier table (see ruleRow for the order's meaning). docs/check-digest.md
// says how to add a row; TestRulesMatchTheirSamples holds every row to its sample.
var rules = compileRules([]ruleRow{
	// Timeouts: the deadline is the cause, whatever the step printed before it.
	{ID: "gha-job-timeout", Category: catTimeout, Keywords: kw("has exceeded the maximum execution time"),
		Sample: "The job running on runner GitHub Actions 12 has exceeded the maximum execution time of 10 minutes."},
	{ID: "gitlab-job-timeout", Category: catTimeout, Keywords: kw("execution took longer than"),
		Sample: "ERROR: Job failed: execution took longer than 1h0m0s seconds"},
	{ID: "go-test-timeout", Category: catTimeout, Keywords: kw("panic: test timed out after"),
		Sample: "panic: test timed out after 10m0s"},
	{ID: "forgejo-job-timeout", Category: catTimeout, Keywords: kw("Job timed out"), Pattern: `^(🏁\s+)?Job timed out`,
		Sample: "🏁  Job timed out"},
	{ID: "step-timeout", Category: catTimeout, Keywords: kw("has timed out after"), Pattern: `has timed out after \d+ (minutes?|seconds?|hours?)`,
		Sample: "The action 'Run ./scripts/integration.sh' has timed out after 15 minutes."},

	// Infrastructure: the runner, the machine or the network failed, not the code.
	{ID: "gha-runner-shutdown", Category: catInfrastructure, Keywords: kw("The runner has received a shutdown signal"),
		Sample: "The runner has received a shutdown signal. This can happen when the runner service is stopped, or a manually started runner is canceled."},
	{ID: "runner-error", Category: catInfrastructure, Keywords: kw("encountered an error while running your job", "runner has been lost"),
		Sample: "The hosted runner encountered an error while running your job. (Error Type: Disconnect)."},
	{ID: "runner-lost", Category: catInfrastructure, Keywords: kw("lost communication with the server"),
		Sample: "The self-hosted runner: runner-7 lost communication with the server. Verify the machine is running and has a healthy network connection."},
	{ID: "gitlab-system-failure", Category: catInfrastructure, Keywords: kw("ERROR: Job failed (system failure)"),
		Sample: "ERROR: Job failed (system failure): prepare environment: waiting for pod running: timed out waiting for pod to start"},
	{ID: "gitlab-preparation-failed", Category: catInfrastructure, Keywords: kw("ERROR: Preparation failed"),
		Sample: "ERROR: Preparation failed: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"},
	{ID: "oom-exit-137", Category: catInfrastructure, Keywords: kw("137"), Pattern: `exit (code|status):? 137\b|exitcode '137'`,
		Sample: "Process completed with exit code 137."},
	{ID: "oom-killed", Category: catInfrastructure, Keywords: kw("OOMKilled", "Killed", "ut of memory", "oom-kill", "signal: killed", "SIGKILL"), Pattern: `OOMKilled|^Killed$|[Oo]ut of memory|oom-kill|signal: killed|signal:? SIGKILL`,
		Sample: "fatal error: runtime: out of memory"},
	{ID: "disk-full", Category: catInfrastructure, Keywords: kw("o space left on device", "running out of disk space", "ENOSPC"), Pattern: `[Nn]o space left on device|running out of disk space|ENOSPC`,
		Sample: "write /home/runner/go/pkg/mod/cache/download/x.zip: no space left on device: No space left on device"},
	{ID: "network-unreachable", Category: catInfrastructure, Keywords: kw("etwork is unreachable", "Could not resolve host", "Temporary failure in name resolution", "TLS handshake timeout", "Connection reset by peer"), Pattern: `[Nn]etwork is unreachable|Could not resolve host|Temporary failure in name resolution|TLS handshake timeout|Connection reset by peer`,
		Sample: "fatal: unable to access 'https://github.com/acme/widgets/': Could not resolve host: github.com"},
	{ID: "network-error", Category: catInfrastructure, Keywords: kw("ECONNRESET", "EAI_AGAIN", "Temporary failure resolving", "x509: certificate", "SSL certificate problem", "unable to get local issuer certificate", "toomanyrequests", "pull rate limit", "API rate limit exceeded", "ETIMEDOUT", "getaddrinfo", "onnection timed out", "ConnectTimeoutError", "Max retries exceeded", "connection reset by peer", "TLS handshake"),
		Sample: "npm error network request to https://registry.npmjs.org/typescript/-/typescript-5.7.2.tgz failed, reason: read ECONNRESET"},
	{ID: "docker-daemon", Category: catInfrastructure, Keywords: kw("Cannot connect to the Docker daemon"),
		Sample: "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"},

	// Cancellations.
	{ID: "gha-cancelled", Category: catCancelled, Keywords: kw("The operation was canceled."),
		Sample: "The operation was canceled."},
	{ID: "gitlab-cancelled", Category: catCancelled, Keywords: kw("Job failed: canceled"),
		Sample: "ERROR: Job failed: canceled"},
	{ID: "forgejo-cancelled", Category: catCancelled, Keywords: kw("Job cancel"), Pattern: `^(🏁\s+)?Job (cancelled|canceled)\b`,
		Sample: "🏁  Job cancelled"},

	// Dependencies: resolution, download or checksum of a dependency.
	{ID: "go-sum-missing", Category: catDependency, Keywords: kw("missing go.sum entry"),
		Sample: "internal/api/client.go:9:2: missing go.sum entry for module providing package golang.org/x/sync/errgroup (imported by example.com/widgets/internal/api); to add:"},
	{ID: "go-module-fetch", Category: catDependency, Keywords: kw("go: "), Pattern: `^go: .*(unknown revision|: not found|: reading .*: \d{3} |invalid version|checksum mismatch|no matching versions|module lookup disabled|malformed module path)`,
		Sample: "go: example.com/widgets imports github.com/acme/retry@v1.4.0: reading https://proxy.golang.org/github.com/acme/retry/@v/v1.4.0.mod: 404 Not Found"},
	{ID: "go-mod-needs-update", Category: catDependency, Keywords: kw("go: updates to go.mod needed", "go: inconsistent vendoring"),
		Sample: "go: updates to go.mod needed; to update it:"},
	{ID: "go-setup-failed", Category: catDependency, Keywords: kw("[setup failed]"),
		Sample: "FAIL\texample.com/widgets/internal/api [setup failed]"},
	{ID: "npm-eresolve", Category: catDependency, Keywords: kw("ERESOLVE"),
		Sample: "npm ERR! code ERESOLVE"},
	{ID: "npm-not-found", Category: catDependency, Keywords: kw("npm "), Pattern: `^npm (ERR!|error) (code E404|404 )`,
		Sample: "npm ERR! 404 Not Found - GET https://registry.npmjs.org/@acme%2fwidgets - Not found"},
	{ID: "yarn-resolve", Category: catDependency, Keywords: kw("error "), Pattern: `^error (Your lockfile needs to be updated|Couldn't find (package|any versions)|An unexpected error occurred: ".*(404|ENOTFOUND))`,
		Sample: "error Your lockfile needs to be updated, but yarn was run with `--frozen-lockfile`."},
	{ID: "pip-no-distribution", Category: catDependency, Keywords: kw("No matching distribution", "Could not find a version that satisfies", "ResolutionImpossible"), Pattern: `No matching distribution found for|Could not find a version that satisfies the requirement|ResolutionImpossible`,
		Sample: "ERROR: No matching distribution found for requests==9.99.0"},
	{ID: "cargo-resolve", Category: catDependency, Keywords: kw("failed to select a version", "no matching package named", "as a dependency"), Pattern: `failed to select a version for|no matching package named|failed to get .* as a dependency`,
		Sample: "error: failed to select a version for the requirement `serde = \"^9.0\"`"},
	{ID: "maven-resolve", Category: catDependency, Keywords: kw("Could not resolve", "Could not find artifact"), Pattern: `Could not resolve dependencies for project|Could not find artifact|Could not resolve all (files|dependencies) for configuration`,
		Sample: "[ERROR] Failed to execute goal on project widgets: Could not resolve dependencies for project com.acme:widgets:jar:1.0-SNAPSHOT: Could not find artifact com.acme:retry:jar:9.9 in central (https://repo.maven.apache.org/maven2) -> [Help 1]"},
	{ID: "lockfile-stale", Category: catDependency, Keywords: kw("lockfile", "lock file", "poetry.lock", "package-lock.json"), Pattern: `(?i)lock ?file (would have been modified|needs to be updated|is (not up to date|out of date|outdated)|does not contain a compatible)|changed significantly since poetry\.lock|package\.json and package-lock\.json .*in sync`,
		Sample: "YN0028: │ The lockfile would have been modified by this install, which is explicitly forbidden."},
	{ID: "dependency-unsatisfiable", Category: catDependency, Keywords: kw("could not be resolved", "does not satisfy", "version solving failed", "Could not find gem", "compatible versions for gem", "nable to resolve dependency", "onflicting dependencies", "onvergence error", "No matching version found for"), Pattern: `No matching version found for|([Rr]equirements|[Dd]ependencies|[Pp]ackages?) could not be resolved|does not satisfy (that|the) requirement|version solving failed|Could not find gem|compatible versions for gem|[Uu]nable to resolve dependency|[Cc]onflicting dependencies|[Dd]ependency convergence error`,
		Sample: "    - laravel/framework v11.31.0 requires php ^8.2 -> your php version (8.1.30) does not satisfy that requirement."},

	// Lint rules that share a compiler's line shape come before the compile rules.
	{ID: "golangci-lint", Category: catLint, Keywords: kw(".go:"), Pattern: goFile + `.* \(([a-z][a-z0-9-]*|[A-Z]{1,2}\d{4})\)$`,
		Sample: "internal/api/client.go:41:12: Error return value of `resp.Body.Close` is not checked (errcheck)"},
	{ID: "go-vet", Category: catLint, Keywords: kw(".go:"), Pattern: goFile + `(.*(possible misuse|unkeyed fields|unreachable code|self-assignment|[Ff]ormat %|formatting directive|passes lock by value|copies lock|cancel function|struct field tag|has arg .* of wrong type|call has arguments but no formatting)|^vet: )`,
		Sample: "./main.go:14:2: fmt.Printf format %d has arg name of wrong type string"},
	{ID: "lint-rule-code", Category: catLint, Keywords: kw(" DL3", " DL4", " SC1", " SC2", " SC3", ": C: ", ": W: ", ": E: ", ": F: ", ": R: "), Pattern: `^\S+:\d+(:\d+)?:? (DL\d{4}|SC\d{4}|[CWEFR]: )|\bSC\d{4} \((error|warning|info|style)\)`,
		Sample: "app/models/user.rb:14:5: C: [Correctable] Style/GuardClause: Use a guard clause (return unless email.present?) instead of wrapping the code inside a conditional expression."},
	{ID: "shellcheck-location", Category: catLint, Keywords: kw("In "), Pattern: `^In \S+ line \d+:$`,
		Sample: "In scripts/deploy.sh line 14:"},
	{ID: "lint-finding", Category: catLint, Keywords: kw(": Error: "), Pattern: `^\S+:\d+: Error: .+ \[\w+\]$`,
		Sample: "/home/runner/work/app/app/src/main/java/com/acme/LocationActivity.kt:44: Error: Call requires permission which may be rejected by user [MissingPermission]"},
	{ID: "lint-violations", Category: catLint, Keywords: kw("violation", "checkstyle"), Pattern: `(?i)[1-9]\d* (checkstyle |pmd |lint |style )?violations?\b|maven-checkstyle-plugin`,
		Sample: "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-checkstyle-plugin:3.5.0:check (validate) on project shop: You have 1 Checkstyle violation. -> [Help 1]"},
	{ID: "lint-summary", Category: catLint, Keywords: kw("offense", "Lint found", "would reformat", "would be reformatted", "Diff in "), Pattern: `^Diff in \S+( at line \d+)?:$|[1-9]\d* offenses? detected|Lint found [1-9]\d* errors?|^would reformat |[1-9]\d* files? would be reformatted`,
		Sample: "84 files inspected, 2 offenses detected, 2 offenses autocorrectable"},
	{ID: "gradle-lint-task", Category: catLint, Keywords: kw("> Task :"), Pattern: `> Task :\S*([Ll]int|detekt|ktlint|[Cc]heckstyle|spotless|[Pp]md|spotbugs)\S* FAILED`,
		Sample: "> Task :app:lintDebug FAILED"},
	{ID: "pre-commit-hook", Category: catLint, Keywords: kw("Failed", "files were modified by this hook"), Pattern: `\.{4,}Failed$|^- files were modified by this hook`,
		Sample: "trim trailing whitespace.................................................Failed"},

	// Compile errors.
	{ID: "go-compile", Category: catCompile, Keywords: kw(".go:"), Pattern: goFile,
		Sample: "./internal/api/client.go:27:9: undefined: retryPolicy"},
	{ID: "go-build-failed", Category: catCompile, Keywords: kw("[build failed]"),
		Sample: "FAIL\texample.com/widgets/internal/api [build failed]"},
	{ID: "rustc-error", Category: catCompile, Keywords: kw("error[E"), Pattern: `^error\[E\d{4}\]: `,
		Sample: "error[E0308]: mismatched types"},
	{ID: "rust-could-not-compile", Category: catCompile, Keywords: kw("could not compile"),
		Sample: "error: could not compile `widgets` (lib) due to 2 previous errors"},
	{ID: "tsc-error", Category: catCompile, Keywords: kw("error TS"), Pattern: `error TS\d+: `,
		Sample: "src/api/client.ts(27,9): error TS2322: Type 'string' is not assignable to type 'number'."},
	{ID: "mypy-error", Category: catCompile, Keywords: kw(".py:"), Pattern: `^[\w./-]+\.py:\d+(:\d+)?: error: `,
		Sample: "src/widgets/client.py:27: error: Incompatible types in assignment (expression has type \"str\", variable has type \"int\")  [assignment]"},
	{ID: "csharp-error", Category: catCompile, Keywords: kw("error CS"), Pattern: `error CS\d{4}: `,
		Sample: "/home/runner/work/widgets/src/Client.cs(27,9): error CS0103: The name 'retryPolicy' does not exist in the current context [/home/runner/work/widgets/src/Widgets.csproj]"},
	{ID: "javac-error", Category: catCompile, Keywords: kw("COMPILATION ERROR", ".java:", ".kt"), Pattern: `COMPILATION ERROR|\.java:\[\d+,\d+\] |\.(java|kt):\d+: error: |^e: .*\.kt`,
		Sample: "[ERROR] /home/runner/work/widgets/src/main/java/com/acme/Client.java:[27,9] cannot find symbol"},
	{ID: "gradle-compile-task", Category: catCompile, Keywords: kw("> Task :"), Pattern: `> Task :\S*[Cc]ompile\S* FAILED`,
		Sample: "> Task :app:compileJava FAILED"},
	{ID: "c-compile", Category: catCompile, Keywords: kw("error: "), Pattern: `^[\w./+-]+\.(c|cc|cpp|cxx|h|hpp|m|swift):\d+:\d+: (fatal )?error: `,
		Sample: "src/parser.c:112:5: error: implicit declaration of function 'parse_header' [-Wimplicit-function-declaration]"},
	{ID: "compiler-error", Category: catCompile, Keywords: kw("error:", "CompileError"), Pattern: `^(?:[\w./+@-]*\w\.[A-Za-z0-9]+:\d+:\d+: (fatal )?error:|\s*\S+:\d+:\d+ - error: |\*\* \((CompileError|SyntaxError|TokenMissingError)\) )`,
		Sample: "src/Shop/Retry.hs:23:15: error: [GHC-88464]"},
	{ID: "linker-error", Category: catCompile, Keywords: kw("undefined reference to", "ld returned", "linking with", "Undefined symbols for architecture", "unresolved external symbol", "symbol(s) not found"),
		Sample: "main.cpp:(.text.startup+0x4a): undefined reference to `net::Listener::bind(unsigned short)'"},

	// Linters.
	{ID: "eslint-summary", Category: catLint, Keywords: kw("✖ "), Pattern: `✖ \d+ problems? \(`,
		Sample: "✖ 3 problems (2 errors, 1 warning)"},
	{ID: "eslint-error", Category: catLint, Keywords: kw("error"), Pattern: `^\s+\d+:\d+\s+error\s+.*\s{2}(\([@\w/-]+\)|[@\w/-]+)$`,
		Sample: "  12:5  error  'retries' is assigned a value but never used  no-unused-vars"},
	{ID: "flake8-ruff", Category: catLint, Keywords: kw(".py:"), Pattern: `^[\w./-]+\.py:\d+:\d+: [A-Z]+\d+:? `,
		Sample: "src/widgets/client.py:3:1: F401 'os' imported but unused"},
	{ID: "prettier-check", Category: catLint, Keywords: kw("Code style issues"), Pattern: `Code style issues (found|were found)`,
		Sample: "[warn] Code style issues found in 2 files. Run Prettier with --write to fix."},
	{ID: "gofmt-check", Category: catLint, Keywords: kw("gofmt"), Pattern: `(not|are not|is not) gofmt(ed|'d)|files? need(s)? gofmt`,
		Sample: "the following files are not gofmt'd:"},

	// Tests.
	{ID: "go-test-fail", Category: catTest, Keywords: kw("--- FAIL: "),
		Sample: "--- FAIL: TestRetryCapsDelay (0.30s)"},
	{ID: "go-test-log", Category: catTest, Keywords: kw("_test.go:"), Pattern: `^\s{4,}[\w.-]+_test\.go:\d+: `,
		Sample: "    retry_test.go:57: delay after 8 attempts = 41.2s, want <= 30s"},
	{ID: "go-test-pkg-fail", Category: catTest, Keywords: kw("FAIL"), Pattern: `^FAIL\s+\S+\s+\d+(\.\d+)?s$`,
		Sample: "FAIL\texample.com/widgets/internal/httpclient\t0.331s"},
	{ID: "go-panic", Category: catTest, Keywords: kw("panic: "), Pattern: `^panic: `,
		Sample: "panic: runtime error: invalid memory address or nil pointer dereference"},
	{ID: "jest-failed-test", Category: catTest, Keywords: kw("● "), Pattern: `^\s*● (.+ › |Test suite failed to run)`,
		Sample: "  ● RetryClient › caps the delay at 30 seconds"},
	{ID: "jest-summary", Category: catTest, Keywords: kw("Tests:"), Pattern: `^Tests:\s+\d+ failed`,
		Sample: "Tests:       1 failed, 41 passed, 42 total"},
	{ID: "jest-suite-fail", Category: catTest, Keywords: kw("FAIL "), Pattern: `^\s*FAIL\s+\S+\.(test|spec)\.[cm]?[jt]sx?\b`,
		Sample: "FAIL src/retry.test.ts (5.12 s)"},
	{ID: "npm-test-failed", Category: catTest, Keywords: kw("Test failed."), Pattern: `^npm (ERR!|error) catTest failed`,
		Sample: "npm ERR! catTest failed.  See above for more details."},
	{ID: "pytest-failed", Category: catTest, Keywords: kw("FAILED "), Pattern: `^FAILED \S+::`,
		Sample: "FAILED tests/test_client.py::test_retry_caps_delay - AssertionError: assert 41.2 <= 30"},
	{ID: "pytest-assert", Category: catTest, Keywords: kw("E  "), Pattern: `^E\s{3,}\S`,
		Sample: "E       AssertionError: assert 41.2 <= 30"},
	{ID: "pytest-summary", Category: catTest, Keywords: kw(" failed"), Pattern: `^=+ .*\d+ failed.* in [\d.]+s`,
		Sample: "========================= 1 failed, 12 passed in 0.84s ========================="},
	{ID: "pytest-collection", Category: catTest, Keywords: kw("ERROR "), Pattern: `^ERROR (collecting )?\S+\.py\b`,
		Sample: "ERROR tests/test_client.py - ModuleNotFoundError: No module named 'widgets.retry'"},
	{ID: "cargo-test-result", Category: catTest, Keywords: kw("test result: FAILED"),
		Sample: "test result: FAILED. 11 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.02s"},
	{ID: "cargo-test-stdout", Category: catTest, Keywords: kw("---- "), Pattern: `^---- \S+ stdout ----$`,
		Sample: "---- retry::tests::caps_delay stdout ----"},
	{ID: "rust-panicked", Category: catTest, Keywords: kw("panicked at"), Pattern: `^thread '.*' panicked at`,
		Sample: "thread 'retry::tests::caps_delay' panicked at src/retry.rs:88:9:"},
	{ID: "cargo-test-failed", Category: catTest, Keywords: kw("... FAILED"), Pattern: `^test \S+ \.\.\. FAILED$`,
		Sample: "test retry::tests::caps_delay ... FAILED"},
	{ID: "maven-surefire", Category: catTest, Keywords: kw("Tests run:", "maven-surefire-plugin", "There are test failures"), Pattern: `Tests run: \d+, Failures: [1-9]|Tests run: \d+, Failures: \d+, Errors: [1-9]|maven-surefire-plugin|There are test failures`,
		Sample: "[ERROR] Tests run: 4, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.21 s <<< FAILURE! - in com.acme.RetryTest"},
	{ID: "gradle-test-task", Category: catTest, Keywords: kw(" FAILED"), Pattern: `> Task :\S*[Tt]est\S* FAILED|^\S+ > .+ FAILED$`,
		Sample: "RetryTest > capsDelay() FAILED"},
	{ID: "rspec-failure", Category: catTest, Keywords: kw("Failure/Error: ", " examples, ", "rspec ./"), Pattern: `^\s*Failure/Error: |^\d+ examples?, [1-9]\d* failures?|^rspec \./\S+:\d+ # `,
		Sample: "     Failure/Error: expect(policy.delay(8)).to be <= 30"},
	{ID: "dotnet-test", Category: catTest, Keywords: kw("Failed "), Pattern: `^\s*Failed \S+ \[[\d.]+ m?s\]$|^Failed!\s+- Failed:\s+[1-9]`,
		Sample: "  Failed Widgets.Tests.RetryTests.CapsDelay [12 ms]"},
	{ID: "test-failed-marker", Category: catTest, Keywords: kw("*** ", "FAIL: ", "Test Case '"), Pattern: `\*\*\* ([1-9]\d* TESTS? )?FAILED \*\*\*|^FAIL: \S|^Test Case '.+' failed \(`,
		Sample: "[info] - should cap the delay *** FAILED ***"},
	{ID: "numbered-failure", Category: catTest, Keywords: kw(") "), Pattern: `^\s*[1-9]\d*\) (test |\[[\w -]+\] › |[\w\\.]+::\w|\S.* › )`,
		Sample: "1) Tests\\Unit\\PriceCalculatorTest::testAppliesDiscount"},
	{ID: "test-failure-header", Category: catTest, Keywords: kw("Failure (", "Error (", "[E]"), Pattern: `^(?:(── )?(Failure|Error) \('?[\w./-]+:\d+(:\d+)?'?\): |\d+:\d+ \+\d+.* -[1-9]\d*: .*\[E\]$)`,
		Sample: "── Failure ('test-cart.R:12:3'): total applies the discount ──────────────────"},
	{ID: "coverage-threshold", Category: catTest, Keywords: kw("coverage threshold", "Required test coverage", "overage failure"), Pattern: `coverage threshold .* not met|Required test coverage of [\d.]+% not reached|[Cc]overage failure`,
		Sample: "Jest: \"global\" coverage threshold for lines (80%) not met: 76.41%"},
	{ID: "assertion-failed", Category: catTest, Keywords: kw("ssertion", "Assert", "assert"), Pattern: `AssertionError|[Aa]ssertion (with \S+ )?failed|Failed asserting that|XCTAssert\w* failed|assert(ion)? failed`,
		Sample: "     Assertion with == failed"},
	{ID: "test-summary", Category: catTest, Keywords: kw(" failed", " failing", "FAILED (", "FAILURES!"), Pattern: `^(?:\s*(Test Files|Tests?:?)?\s*[1-9]\d* (failed|failing)(\s*[|,(]|\s*$)|FAILED \((failures|errors)=[1-9]|FAILURES!$)`,
		Sample: "  1 failed"},
	{ID: "test-failure-count", Category: catTest, Keywords: kw("tests, ", "test, ", "examples, ", "example, ", "specs, ", "scenarios, ", "Failures: ", "Failed: Total", "fails locally"), Pattern: `\d+ (tests?|examples?|specs?|scenarios?), [1-9]\d* failures?\b|Failures: [1-9]|Failed: Total \d+, Failed [1-9]|with [1-9]\d* failures?|[1-9]\d* fails? locally`,
		Sample: "42 tests, 1 failure"},

	// Wrappers: the container build failed; the language rule above, if any, said why.
	{ID: "docker-build", Category: catCompile, Keywords: kw("failed to solve:", "executor failed running", "failed to build: "), Pattern: `ERROR: failed to solve:|executor failed running|failed to build: `,
		Sample: "ERROR: failed to solve: process \"/bin/sh -c go build -o /out/widgets ./cmd/widgets\" did not complete successfully: exit code: 1"},

	// Generic failure lines: key lines, no category.
	{ID: "make-error", Category: catUnknown, Keywords: kw("make"), Pattern: `^g?make(\[\d+\])?: \*\*\* `,
		Sample: "make: *** [Makefile:12: test] Error 2"},
	{ID: "npm-error", Category: catUnknown, Keywords: kw("npm "), Pattern: `^npm (ERR!|error) `,
		Sample: "npm ERR! code ELIFECYCLE"},
	{ID: "maven-build-failure", Category: catUnknown, Keywords: kw("[ERROR] ", "BUILD FAILURE", "FAILURE: Build failed", "> Task :", "What went wrong:"), Pattern: `^\* What went wrong:|^\[ERROR\] |BUILD FAILURE|^FAILURE: Build failed with an exception|^> Task :\S+ FAILED$`,
		Sample: "[ERROR] BUILD FAILURE"},
	{ID: "gha-exit-code", Category: catUnknown, Keywords: kw("Process completed with exit code"),
		Sample: "Process completed with exit code 1."},
	{ID: "gitlab-job-failed", Category: catUnknown, Keywords: kw("ERROR: Job failed"),
		Sample: "ERROR: Job failed: exit code 1"},
	{ID: "forgejo-step-failure", Category: catUnknown, Keywords: kw("❌", "exitcode '", "Job failed"), Pattern: `^\s*❌\s+Failure - |exitcode '\d+': failure|^(🏁\s+)?Job failed$`,
		Sample: "❌  Failure - Main go test ./..."},
	{ID: "failure-banner", Category: catUnknown, Keywords: kw("FAILED", "CMake Error", "rake aborted!"), Pattern: `^(?:\*\* [A-Z ]+ FAILED \*\*$|FAILED: \S|CMake Error|rake aborted!)`,
		Sample: "** BUILD FAILED **"},
	{ID: "exit-status", Category: catUnknown, Keywords: kw("exit code", "exit status", "exited with", "ExitFailure"), Pattern: `(?i)exit(ed)?( with)? (code|status)[: ]+[1-9]|ExitFailure [1-9]`,
		Sample: "ERROR: Job failed: command terminated with exit code 2"},
	{ID: "exception-line", Category: catUnknown, Keywords: kw("Error: ", "Exception: ", "Exception in thread", "Caused by: ", "PHP Fatal error", "PHP Parse error"), Pattern: `^(?:([\w$]+\.)*[A-Z]\w*(Error|Exception): \S|Exception in thread |Caused by: |PHP (Fatal|Parse) error: )`,
		Sample: "ModuleNotFoundError: No module named 'shop.retry'"},
	{ID: "error-code", Category: catUnknown, Keywords: kw("ERR_"), Pattern: `^\s*ERR_[A-Z0-9_]+ `,
		Sample: " ERR_PNPM_META_FETCH_FAIL  GET https://registry.npmjs.org/@babel%2Fcore: request failed"},
	{ID: "error-prefix", Category: catUnknown, Keywords: kw("error", "Error", "ERROR", "fatal", "FATAL", "E: "), Pattern: `^(?:E: |(error|Error|ERROR)(\[\w+\])?:? |[\s│|]+(error|Error|ERROR|FATAL|fatal)(\[\w+\])?: |\[(error|ERROR|FATAL)\] |(fatal|FATAL)( ERROR)?: )`,
		Sample: "Error: Cannot find module '@acme/retry'"},
})

// stepRow is one row of the step table. When the log's lines decide no category (only
// generic failure lines matched), the command that was running decides it: the step's name on
// GitHub and Forgejo, the last "$ command" GitLab echoed before the first key line. A step
// named for a linter also turns a compile rule into lint: linters such as clippy or go vet
// report through the compiler's own diagnostics. The first row whose pattern matches wins.
type stepRow struct {
	ID       string   // stable, kebab-case; Digest.Rule names it
	Category Category // from the closed set
	Pattern  string   // RE2, matched against the command (case-insensitive where it says so)
	Sample   string   // a real-shaped step name the row must match (tested)

	re *regexp.Regexp
}

// stepRules is the step table (see stepRow); tests come first, so "go test" and "npm test" are
// tests whatever else their command says.
var stepRules = compileSteps([]stepRow{
	{ID: "step-test", Category: catTest, Pattern: `(?i)(^|[^a-z])(tests?|specs?|e2e)([^a-z]|$)|pytest|vitest|jest|mocha|phpunit|rspec|playwright|cypress|ctest|karma|unittest|(^|[^a-z])(tox|nox)([^a-z]|$)`,
		Sample: "mix test"},
	{ID: "step-lint", Category: catLint, Pattern: `(?i)lint|clippy|rubocop|flake8|ruff|(^|[^a-z])(black|isort|vet)([^a-z]|$)|prettier|shellcheck|staticcheck|pre-commit|fmt|(^|[\s:/])format([^a-z=]|$)|checkstyle|spotless|detekt|phpstan|psalm|phpcs|credo`,
		Sample: "helm lint charts/shop --strict"},
	{ID: "step-dependency", Category: catDependency, Pattern: `(?i)(^|[\s&;|])((npm|pnpm|yarn|bun|pip|pip3|poetry|uv|bundle|composer|cargo|dotnet|mix|go mod|gem) (ci|install|i|sync|lock|restore|fetch|update|download|deps\.get))([^a-z]|$)`,
		Sample: "composer install --no-interaction --prefer-dist"},
	{ID: "step-compile", Category: catCompile, Pattern: `(?i)(^|[^a-z])(build|compile|make|cmake|ninja|xcodebuild|tsc|javac|msbuild|assemble|validate|gcc|clang)([^a-z]|$)|cargo check`,
		Sample: "cmake --build build"},
})

// stepRule returns the index of the first step row matching cmd, or -1.
func stepRule(cmd string) int {
	if cmd == "" {
		return -1
	}
	for i := range stepRules {
		if stepRules[i].re.MatchString(cmd) {
			return i
		}
	}
	return -1
}

func compileSteps(rs []stepRow) []stepRow {
	for i := range rs {
		rs[i].re = regexp.MustCompile(rs[i].Pattern)
	}
	return rs
}

// compileRules compiles every pattern once; a bad pattern is a programming error.
func compileRules(rs []ruleRow) []ruleRow {
	for i := range rs {
		if rs[i].Pattern != "" {
			rs[i].re = regexp.MustCompile(rs[i].Pattern)
		}
	}
	return rs
}

// keyword is one entry of the bigram index: a keyword and the rule it belongs to.
type keyword struct {
	text string
	rule int
}

// kwBig maps the first two bytes of every keyword to 1 + its list in kwLists (0: none), so a
// line is scanned once, two bytes at a time, with one array load per byte whatever the number
// of rules.
var kwBig, kwLists = func() (*[1 << 16]uint8, [][]keyword) {
	var big [1 << 16]uint8
	lists := [][]keyword{nil}
	for i, r := range rules {
		for _, k := range r.Keywords {
			if len(k) < 2 {
				panic("checkdigest: rule " + r.ID + ": keyword shorter than two bytes")
			}
			bg := uint16(k[0])<<8 | uint16(k[1])
			if big[bg] == 0 {
				if len(lists) == 1<<8 {
					panic("checkdigest: more than 255 keyword prefixes")
				}
				big[bg] = uint8(len(lists))
				lists = append(lists, nil)
			}
			lists[big[bg]] = append(lists[big[bg]], keyword{k, i})
		}
	}
	return &big, lists
}()

// classify returns the index of the earliest rule whose keyword and pattern match text, or -1.
// cand is scratch space of len(rules).
func classify(text []byte, cand []bool) int {
	clear(cand)
	any := false
	for i := 0; i+1 < len(text); i++ {
		li := kwBig[uint16(text[i])<<8|uint16(text[i+1])]
		if li == 0 {
			continue
		}
		for _, k := range kwLists[li] {
			if !cand[k.rule] && bytes.HasPrefix(text[i:], []byte(k.text)) {
				cand[k.rule] = true
				any = true
			}
		}
	}
	if !any {
		return -1
	}
	for i, ok := range cand {
		if ok && (rules[i].re == nil || rules[i].re.Match(text)) {
			return i
		}
	}
	return -1
}
