package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/rework"
	"github.com/forgectx/forgectx/internal/run/harness"
	"github.com/forgectx/forgectx/pkg/prescript"
	"github.com/forgectx/forgectx/test/httpfake"
)

// A compact Gitea 1.25-shaped world for the command tests (internal/rework's tests hold the full
// rule tables): acme/demo, Source Issue number 7, PR 9 by the impl actor 11, spec reviewer 21, code
// reviewer 22.
const (
	rwHead     = "0123456789abcdef0123456789abcdef01234567"
	rwIssueBdy = "discovery-draft/v2\n# Widget cache\n"
)

func rwDigest(s string) string { x := sha256.Sum256([]byte(s)); return hex.EncodeToString(x[:]) }

func rwUser(id int, login string) string {
	return fmt.Sprintf(`{"id":%d,"login":%q,"full_name":"","email":"","avatar_url":"","username":%q}`, id, login, login)
}

func rwReviewJSON(id, user int, login, state, body, submitted string) string {
	b, _ := json.Marshal(body)
	return fmt.Sprintf(`{"id":%d,"user":%s,"team":null,"state":%q,"body":%s,"commit_id":%q,"stale":false,"official":true,"dismissed":false,"comments_count":0,"submitted_at":%q,"updated_at":%q,"html_url":"","pull_request_url":""}`,
		id, rwUser(user, login), state, b, rwHead, submitted, submitted)
}

func rwTarget() *rework.Target {
	return &rework.Target{Owner: "acme", Repository: "demo", Issue: 7, PR: 9, Head: rwHead, ContractSHA256: rwDigest(rwIssueBdy)}
}

// rwReviews builds the review list of one decision path.
func rwReviews(decision string) []string {
	t := rwTarget()
	specOK := rwReviewJSON(101, 21, "spec-bot", "APPROVED", rework.RenderSpecReview(t, "Spec holds.", rework.VerdictApproved, rwHead, t.ContractSHA256), "2026-11-21T12:00:00Z")
	switch decision {
	case rework.DecisionRework:
		return []string{specOK, rwReviewJSON(102, 22, "code-bot", "REQUEST_CHANGES", rework.RenderCodeMarker(rework.VerdictRequestChanges, rwHead, t.ContractSHA256)+"\nrename it", "2026-11-21T13:00:00Z")}
	case rework.DecisionNoOp:
		return []string{specOK, rwReviewJSON(102, 22, "code-bot", "APPROVED", rework.RenderCodeMarker(rework.VerdictApproved, rwHead, t.ContractSHA256)+"\nfine", "2026-11-21T13:00:00Z")}
	}
	return []string{specOK} // blocked: missing_current_review (no code review)
}

func rwExpect(f *httpfake.Server, reviews []string) {
	const p = "/api/v1/repos/acme/demo"
	list := func(path string, rows []string) {
		f.Expect("GET", path+"?limit=50&page=1", withRWHeader(httpfake.JSON(200, "["+strings.Join(rows, ",")+"]"), len(rows)))
	}
	for i := 0; i < rework.Captures; i++ {
		f.Expect("GET", "/api/v1/version", httpfake.JSON(200, `{"version":"1.25.5"}`))
		f.Expect("GET", p, httpfake.JSON(200, `{"id":77,"owner":`+rwUser(5, "acme")+`,"name":"demo","full_name":"acme/demo","default_branch":"main","private":false}`))
		f.Expect("GET", p+"/pulls/9", httpfake.JSON(200, `{"id":9009,"number":9,"user":`+rwUser(11, "impl-bot")+`,"state":"open","merged":false,"comments":0,"review_comments":0,"base":{"label":"main","ref":"main","sha":"1111111111111111111111111111111111111111","repo_id":77},"head":{"label":"issue-7","ref":"issue-7","sha":"`+rwHead+`","repo_id":77}}`))
		body, _ := json.Marshal(rwIssueBdy)
		f.Expect("GET", p+"/issues/7", httpfake.JSON(200, `{"id":7007,"number":7,"user":`+rwUser(5, "acme")+`,"title":"Widget cache","body":`+string(body)+`,"state":"open","comments":0,"pull_request":null}`))
		list(p+"/issues/7/comments", nil)
		list(p+"/issues/9/comments", nil)
		list(p+"/pulls/9/reviews", reviews)
		for _, r := range reviews {
			var id struct{ ID int }
			_ = json.Unmarshal([]byte(r), &id)
			f.Expect("GET", fmt.Sprintf("%s/pulls/9/reviews/%d/comments?limit=50&page=1", p, id.ID), httpfake.JSON(200, `[]`))
		}
	}
}

func withRWHeader(r httpfake.Reply, total int) httpfake.Reply {
	r.Header = r.Header.Clone()
	r.Header.Set("X-Total-Count", fmt.Sprint(total))
	return r
}

type rwFiles struct {
	dir, target, contract, output string
}

func rwSetup(t *testing.T) rwFiles {
	t.Helper()
	dir := t.TempDir()
	target := fmt.Sprintf(`{"schema":"gitea-agent.rework-input/v1","target":{"owner":"acme","repository":"demo","issue":7,"pr":9},"head":%q,"contract_sha256":%q}`, rwHead, rwDigest(rwIssueBdy))
	contract, err := os.ReadFile("../../examples/rework/provider-contract.json")
	if err != nil {
		t.Fatal(err)
	}
	f := rwFiles{dir: dir, target: filepath.Join(dir, "rework-input.json"), contract: filepath.Join(dir, "provider-contract.json")}
	if err := os.WriteFile(f.target, []byte(target), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.contract, contract, 0o600); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "verification", "run-1")
	if err := os.MkdirAll(run, 0o700); err != nil {
		t.Fatal(err)
	}
	f.output = filepath.Join(run, "decision.json")
	return f
}

func (f rwFiles) args(apiURL string, extra ...string) []string {
	tb, _ := os.ReadFile(f.target)
	cb, _ := os.ReadFile(f.contract)
	return append([]string{"rework", "input-gate", "--target", f.target, "--target-sha256", rwDigest(string(tb)),
		"--provider-contract", f.contract, "--provider-contract-sha256", rwDigest(string(cb)),
		"--actor-id", "11", "--output", f.output, "--api-url", apiURL}, extra...)
}

func TestReworkInputGateProducesTheThreeDecisions(t *testing.T) {
	for _, d := range []string{rework.DecisionRework, rework.DecisionNoOp, rework.DecisionBlocked} {
		t.Run(d, func(t *testing.T) {
			fake := httpfake.New(t)
			rwExpect(fake, rwReviews(d))
			files := rwSetup(t)
			code, stdout, stderr := runCLI(t, map[string]string{"FORGEJO_TOKEN": "tok-value"}, "", files.args(fake.URL+"/api/v1")...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var s reworkSummary
			if err := json.Unmarshal([]byte(stdout), &s); err != nil {
				t.Fatalf("stdout %q: %v", stdout, err)
			}
			if s.Decision != d {
				t.Fatalf("decision %s %v, want %s", s.Decision, s.BlockingReasons, d)
			}
			b, err := os.ReadFile(files.output)
			if err != nil || rwDigest(string(b)) != s.ReceiptSHA256 {
				t.Fatalf("receipt %v: digest on stdout does not match the file", err)
			}
			if strings.Contains(stderr, "tok-value") || strings.Contains(stdout, "tok-value") {
				t.Error("the token was printed")
			}
		})
	}
}

// TestReworkInputGateRefusalsMakeNoRequest: the fake has no expectation, so any request fails
// the test; each refusal exits non-zero before the token or the network.
func TestReworkInputGateRefusalsMakeNoRequest(t *testing.T) {
	cases := []struct {
		name  string
		mod   func(f rwFiles, args []string) []string
		env   map[string]string
		code  int
		inErr string
	}{
		{"TargetDigestMismatch", func(f rwFiles, a []string) []string { a[5] = strings.Repeat("0", 64); return a }, nil, exitUsage, "--target-sha256"},
		{"ActorIDNotAnInteger", func(f rwFiles, a []string) []string { a[11] = "011"; return a }, nil, exitUsage, "--actor-id"},
		{"ExistingOutput", func(f rwFiles, a []string) []string { _ = os.WriteFile(f.output, []byte("x"), 0o600); return a }, nil, exitFailed, "already exists"},
		{"PrescriptOutputWithoutTheProtocolFile", func(f rwFiles, a []string) []string { return append(a, "--prescript-output") }, nil, exitUsage, "FULLSEND_PRESCRIPT_OUTPUT"},
		{"TokenUnset", func(f rwFiles, a []string) []string { return a }, map[string]string{}, exitFailed, "FORGEJO_TOKEN"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fake := httpfake.New(t)
			files := rwSetup(t)
			env := c.env
			if env == nil {
				env = map[string]string{"FORGEJO_TOKEN": "tok-value"}
			}
			code, _, stderr := runCLI(t, env, "", c.mod(files, files.args(fake.URL+"/api/v1"))...)
			if code != c.code || !strings.Contains(stderr, c.inErr) {
				t.Fatalf("exit %d, stderr %q; want exit %d naming %s", code, stderr, c.code, c.inErr)
			}
			if n := len(fake.Served()); n != 0 {
				t.Errorf("%d requests made", n)
			}
		})
	}
}

// TestReworkPrescriptMapsDecisions: with --prescript-output the gate writes the pre-script
// output protocol v1 file: rework proceeds; no_op and blocked skip with the reason.
func TestReworkPrescriptMapsDecisions(t *testing.T) {
	for _, c := range []struct {
		decision, reason string
		skipped          bool
	}{
		{rework.DecisionRework, "rework input gate: rework: review 102", false},
		{rework.DecisionNoOp, "rework input gate: no_op: the spec and code reviews approve the current head", true},
		{rework.DecisionBlocked, "rework input gate: blocked: missing_current_review", true},
	} {
		t.Run(c.decision, func(t *testing.T) {
			fake := httpfake.New(t)
			rwExpect(fake, rwReviews(c.decision))
			files := rwSetup(t)
			out := filepath.Join(files.dir, "prescript-1.out")
			if err := os.WriteFile(out, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := runCLI(t, map[string]string{"FORGEJO_TOKEN": "tok-value", "FULLSEND_PRESCRIPT_OUTPUT": out}, "", files.args(fake.URL+"/api/v1", "--prescript-output")...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			fh, err := os.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			pf, err := prescript.Parse(fh)
			if err != nil {
				t.Fatalf("the gate broke the pre-script protocol: %v", err)
			}
			d := prescript.DecisionFrom(pf)
			if d.Skipped != c.skipped || d.Reason != c.reason {
				t.Errorf("pre-script decision skipped=%v reason=%q, want %v %q", d.Skipped, d.Reason, c.skipped, c.reason)
			}
			outputs := map[string]string{}
			for _, kv := range d.Outputs {
				outputs[kv.Key] = kv.Value
			}
			if outputs[rework.PrescriptKeyDecision] != c.decision || len(outputs[rework.PrescriptKeyReceipt]) != 64 {
				t.Errorf("outputs %v", outputs)
			}
		})
	}
}

// TestReworkExampleHarnessPrescript copies examples/rework into a fresh repository as its
// README says (harness.yml as .forgejo/forgectx/rework.yml, pre-rework.sh beside it), loads the
// copied harness and runs its pre_script command as given, from the repository's root, exactly
// as forgectx run would (pkg/prescript, the protocol runner) with FORGECTX pointing at this test
// binary, for the three decisions: the example names nothing outside what is copied.
func TestReworkExampleHarnessPrescript(t *testing.T) {
	requireBash(t)
	repo := t.TempDir()
	dest := filepath.Join(repo, ".forgejo", "forgectx")
	if err := os.MkdirAll(dest, 0o755); err != nil {
		t.Fatal(err)
	}
	for src, name := range map[string]string{"harness.yml": "rework.yml", "pre-rework.sh": "pre-rework.sh"} {
		b, err := os.ReadFile(filepath.Join("../../examples/rework", src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dest, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h, err := harness.Load(filepath.Join(dest, "rework.yml"))
	if err != nil {
		t.Fatalf("example harness: %v", err)
	}
	if h.PreScript == nil || len(h.PreScript.Command) == 0 {
		t.Fatalf("example harness pre_script %+v", h.PreScript)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		decision string
		skipped  bool
	}{{rework.DecisionRework, false}, {rework.DecisionNoOp, true}, {rework.DecisionBlocked, true}} {
		t.Run(c.decision, func(t *testing.T) {
			fake := httpfake.New(t)
			rwExpect(fake, rwReviews(c.decision))
			files := rwSetup(t)
			shim := filepath.Join(files.dir, "forgectx")
			script := "#!/usr/bin/env bash\nexec " + fmt.Sprintf("%q", exe) + " -test.run='^TestReworkHelperProcess$' -- \"$@\"\n"
			if err := os.WriteFile(shim, []byte(script), 0o700); err != nil {
				t.Fatal(err)
			}
			a := files.args(fake.URL + "/api/v1")
			env := []string{
				"PATH=" + os.Getenv("PATH"), "FORGECTX=" + shim, "FORGECTX_REWORK_HELPER=1",
				"REWORK_TARGET=" + files.target, "REWORK_TARGET_SHA256=" + a[5],
				"REWORK_PROVIDER_CONTRACT=" + files.contract, "REWORK_PROVIDER_CONTRACT_SHA256=" + a[9],
				"REWORK_ACTOR_ID=11", "REWORK_OUTPUT=" + files.output,
				"FORGEJO_API_URL=" + fake.URL + "/api/v1", "FORGEJO_TOKEN=tok-value",
			}
			d, err := prescript.Run(t.Context(), prescript.Options{RunDir: files.dir, Command: h.PreScript.Command, Dir: repo, Env: env})
			if err != nil {
				t.Fatalf("pre-script: %v", err)
			}
			if d.Skipped != c.skipped || !strings.HasPrefix(d.Reason, "rework input gate: "+c.decision) {
				t.Errorf("decision skipped=%v reason=%q, want skipped=%v for %s", d.Skipped, d.Reason, c.skipped, c.decision)
			}
		})
	}
}

// TestReworkHelperProcess is the forgectx binary for TestReworkExampleHarnessPrescript's shim.
func TestReworkHelperProcess(t *testing.T) {
	if os.Getenv("FORGECTX_REWORK_HELPER") != "1" {
		t.Skip("helper process only")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(run(t.Context(), args, os.Stdin, os.Stdout, os.Stderr, os.Getenv, os.Environ))
}
