package realforge

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/test/realforge/giteaserver"
)

// prWorkflow is the pull request's workflow: build, test and e2e run on the emulated runner's
// label (e2e is left running); lint asks for a label no runner has, so Gitea never makes a task
// for it.
const prWorkflow = `name: ci
on: [pull_request]
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - run: go build ./...
  test:
    runs-on: ubuntu-latest
    steps:
      - run: go test ./...
  e2e:
    runs-on: ubuntu-latest
    steps:
      - run: ./e2e.sh
  lint:
    runs-on: no-runner-has-this-label
    steps:
      - run: golangci-lint run
`

// checksProfile reads checks and the logs of failed checks.
const checksProfile = `{"entity_kind":"change_proposal","included_sources":["entity","checks","check_logs"],"record_selection":"oldest","check_log_selection":"failed","bounds":{"max_records_per_source":200,"max_source_bytes":1048576,"max_record_bytes":65536,"max_log_bytes":16384,"max_metadata_string_bytes":256,"max_labels":20}}`

// checkMeta is a checks/<key>/metadata.json document.
type checkMeta struct {
	ID, Name, Status, Conclusion string
	CreatedAt                    string `json:"created_at"`
	StartedAt                    string `json:"started_at"`
	CompletedAt                  string `json:"completed_at"`
	HeadSHA                      string `json:"head_sha"`
	NeverStarted                 *bool  `json:"never_started"`
}

// treeChecks reads every check metadata document of a tree, by check name.
func treeChecks(t *testing.T, root string) map[string]checkMeta {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(root, "checks", "*", "metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]checkMeta{}
	for _, p := range paths {
		var c checkMeta
		readJSON(t, p, &c)
		if _, dup := m[c.Name]; dup {
			t.Fatalf("two checks named %q", c.Name)
		}
		m[c.Name] = c
	}
	return m
}

// TestActionsChecks gives the real server real Actions tasks for a pull request head. No
// act_runner (and no container runtime) exists here, so an emulated runner
// (giteaserver.Runner) speaks Gitea's runner protocol: Gitea itself detects the workflow on the
// pull_request event, creates the run and its jobs, hands the runner a task per job it matches
// and stores the log and result the runner reports. Nothing is written into the database
// directly. The test job's log carries a fake token and an instruction override.
func TestActionsChecks(t *testing.T) {
	srv := giteaserver.Start(t, giteaserver.Config{})
	owner := srv.CreateUser(t, "owner")
	admin := srv.CreateUser(t, "repo-admin")
	reader := srv.CreateUser(t, "reader")
	author := srv.CreateUser(t, "author")
	repo := srv.CreateRepo(t, owner, "widgets")
	srv.AddCollaborator(t, repo, admin, "admin")
	srv.AddCollaborator(t, repo, reader, "read")
	srv.AddCollaborator(t, repo, author, "write")
	srv.PutFile(t, owner, repo, "main", "lib.txt", oldFile)
	head := srv.PushBranch(t, author, repo, "feature", map[string]string{"lib.txt": newFile, ".gitea/workflows/ci.yml": prWorkflow})
	pull := srv.CreatePull(t, author, repo, "feature", "Fix the crash", "Changes line three.")

	runner := srv.RegisterRunner(t, "emulated", "ubuntu-latest")
	tasks := map[string]giteaserver.Task{}
	for len(tasks) < 3 {
		tk := runner.FetchTask(t, 90*time.Second)
		tasks[tk.Job] = tk
	}
	if _, ok := tasks["build"]; !ok {
		t.Fatalf("tasks %v: no build task", tasks)
	}
	if _, ok := tasks["test"]; !ok {
		t.Fatalf("tasks %v: no test task", tasks)
	}
	// Gitea's timestamps are whole seconds: finishing a second after the start makes the
	// completion time distinguishable from the creation and start times.
	time.Sleep(1100 * time.Millisecond)
	runner.Finish(t, tasks["build"], "success", "go build ./...", "ok")
	runner.Finish(t, tasks["test"], "failure", "go test ./...", "--- FAIL: TestWidget",
		"env GITHUB_TOKEN="+fakeToken, override, "FAIL")

	// The server really holds the log with the hostile lines: Gitea 1.24+ serves it per job
	// (GET /actions/jobs/{job_id}/logs). The adapter reads the Forgejo API, which has no log
	// download for a task, and the tasks list names no job id, so forgectx reports the log as
	// unsupported rather than reading it — and no hostile line can reach a tree.
	if log := srv.JobLog(t, owner.Token, repo, "test"); !strings.Contains(log, fakeToken) || !strings.Contains(log, override) {
		t.Fatalf("the server's test job log lacks the planted lines (%d bytes)", len(log))
	}

	for _, tc := range []struct{ name, token string }{{"instance-admin", srv.Admin.Token}, {"repo-admin", admin.Token}} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustSnapshot(t, srv.APIURL, tc.token, repo.FullName(), pull, checksProfile)
			verify(t, s)
			noHostile(t, s.out)
			checkActionsTree(t, s, head)
		})
	}

	t.Run("read-only", func(t *testing.T) {
		// A read collaborator's token reads the tasks list (Actions needs only read access)
		// but not other users' permissions: the pull request author's role is unverifiable,
		// so the entity aborts, fail closed, with no tree. --stats still shows the three checks
		// were acquired from the real tasks list.
		s := snapshot(t, srv.APIURL, reader.Token, repo.FullName(), pull, checksProfile)
		if s.code != 1 || hasAnyFile(s.out) {
			t.Fatalf("read-only token: exit %d, tree %v; want exit 1 and no tree\n%s", s.code, hasAnyFile(s.out), tailStr(s.stderr, 1500))
		}
		if !strings.Contains(s.stderr, "entity authorization_failed") {
			t.Fatalf("read-only token: the abort is not the entity author's authorization_failed:\n%s", tailStr(s.stderr, 1500))
		}
		recs, _ := s.stats["records"].(map[string]any)
		if n, _ := recs["checks"].(float64); n != 3 {
			t.Fatalf("read-only token: --stats records %v, want 3 checks read from the tasks list", s.stats["records"])
		}
	})

	t.Run("two-live-runs-byte-identical", func(t *testing.T) {
		a := mustSnapshot(t, srv.APIURL, admin.Token, repo.FullName(), pull, checksProfile)
		b := mustSnapshot(t, srv.APIURL, admin.Token, repo.FullName(), pull, checksProfile)
		sameTree(t, a.out, b.out)
	})

	t.Run("only-jobs-no-runner-can-take", func(t *testing.T) {
		// Every job of this head waits for a label no runner has: Gitea makes no task, so the
		// tasks list has nothing for the head, but Gitea does write a pending commit status per
		// job when it creates the run. The head must not look check-free: the statuses are the
		// checks unsupported gap.
		wf := "on: [pull_request]\njobs:\n  lint:\n    runs-on: no-runner-has-this-label\n    steps:\n      - run: true\n"
		sha := srv.PushBranch(t, author, repo, "waiting", map[string]string{"lib.txt": "waiting\n", ".gitea/workflows/ci.yml": wf})
		pr := srv.CreatePull(t, author, repo, "waiting", "Waiting for a runner", "No runner has the label.")
		waitStatuses(t, srv, owner.Token, repo, sha, 1)
		s := mustSnapshot(t, srv.APIURL, admin.Token, repo.FullName(), pr, checksProfile)
		verify(t, s)
		if got := s.sum.acquired("checks"); got != 0 {
			t.Errorf("%d checks acquired for a head whose only job has no task", got)
		}
		if got := s.sum.gap("checks", "unsupported"); got != 1 {
			t.Errorf("checks unsupported gap count %d, want 1 (the waiting job's pending status); gaps %+v", got, s.sum.Summary.Gaps)
		}
	})

	t.Run("commit-statuses-only-head", func(t *testing.T) {
		// The repository has Actions tasks, but none for this head: its CI reports commit
		// statuses only. A status has no check-run lifecycle, so it is the checks scope's
		// unsupported gap (one per status), never a check-free head.
		other := srv.PushBranch(t, author, repo, "external-ci", map[string]string{"lib.txt": "external\n"})
		pr := srv.CreatePull(t, author, repo, "external-ci", "External CI", "Built by Woodpecker.")
		srv.CommitStatus(t, owner, repo, other, "failure", "woodpecker/test", "2 tests failed")
		srv.CommitStatus(t, owner, repo, other, "success", "drone/build", "built")
		s := mustSnapshot(t, srv.APIURL, admin.Token, repo.FullName(), pr, checksProfile)
		verify(t, s)
		if got := s.sum.acquired("checks"); got != 0 {
			t.Errorf("%d checks acquired for a head whose only CI is commit statuses", got)
		}
		if got := s.sum.gap("checks", "unsupported"); got != 2 {
			t.Errorf("checks unsupported gap count %d, want 2 (one per commit status); gaps %+v", got, s.sum.Summary.Gaps)
		}
		if n := len(treeChecks(t, s.out)); n != 0 {
			t.Errorf("%d check documents for a head without Actions tasks", n)
		}
	})
}

// checkActionsTree asserts the checks of the pull request tree: build succeeded, test failed,
// each with the start and completion times the spec's completed-check rules require, on the
// captured head; e2e, still running, is in_progress with a start and no completion; lint, which no runner could take, has no task and so no check, only
// its pending status, the checks unsupported gap; the failed
// check's selected log is the check_logs unsupported gap, with no log file.
func checkActionsTree(t *testing.T, s snap, head string) {
	t.Helper()
	checks := treeChecks(t, s.out)
	var names []string
	for n := range checks {
		names = append(names, n)
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "build,e2e,test" {
		t.Fatalf("checks %v, want build, e2e and test (lint has no task: no runner has its label)", names)
	}
	if got := s.sum.acquired("checks"); got != 3 {
		t.Errorf("checks acquired %d, want 3", got)
	}
	// lint's pending commit status is the one no task accounts for (build's, test's and e2e's
	// are their tasks'): the checks unsupported gap, so lint does not vanish.
	if got := s.sum.gap("checks", "unsupported"); got != 1 {
		t.Errorf("checks unsupported gap %d, want 1 (lint, waiting for a runner); gaps %+v", got, s.sum.Summary.Gaps)
	}
	if e := checks["e2e"]; e.Status != "in_progress" || e.StartedAt == "" || e.CompletedAt != "" || e.Conclusion != "" || e.NeverStarted != nil || e.HeadSHA != head {
		t.Errorf("e2e (running) = %+v, want in_progress with started_at only", e)
	}
	for name, want := range map[string]string{"build": "success", "test": "failure"} {
		completedCheck(t, name, checks[name], want, head)
	}
	// check_log_selection "failed" selects the test log only.
	if got := s.sum.acquired("check_logs"); got != 1 {
		t.Errorf("check_logs acquired %d, want 1 (the failed check's log)", got)
	}
	if got := s.sum.gap("check_logs", "unsupported"); got != 1 {
		t.Errorf("check_logs unsupported gap %d, want 1; gaps %+v", got, s.sum.Summary.Gaps)
	}
	if logs, _ := filepath.Glob(filepath.Join(s.out, "checks", "*", "log.txt")); len(logs) != 0 {
		t.Errorf("log files %v, want none (the Forgejo API has no task log download)", logs)
	}
	if hasString(t, s.out, "TestWidget") {
		t.Error("text of the test job's log is in the tree")
	}
}

// completedCheck asserts a finished task's check: completed with the conclusion, on the head,
// started (never_started false) and with RFC 3339 times in lifecycle order, the completion
// strictly after the start (the test finishes tasks a second after Gitea started them).
func completedCheck(t *testing.T, name string, c checkMeta, want, head string) {
	t.Helper()
	if c.Status != "completed" || c.Conclusion != want {
		t.Errorf("%s: status %q conclusion %q, want completed/%s", name, c.Status, c.Conclusion, want)
	}
	if c.HeadSHA != head {
		t.Errorf("%s: head_sha %q, want the pull request head %s", name, c.HeadSHA, head)
	}
	if c.NeverStarted == nil || *c.NeverStarted {
		t.Errorf("%s: never_started %v, want false (the runner started it)", name, c.NeverStarted)
	}
	created, e1 := time.Parse(time.RFC3339, c.CreatedAt)
	started, e2 := time.Parse(time.RFC3339, c.StartedAt)
	completed, e3 := time.Parse(time.RFC3339, c.CompletedAt)
	if e1 != nil || e2 != nil || e3 != nil {
		t.Errorf("%s: created_at %q started_at %q completed_at %q: each must be RFC 3339", name, c.CreatedAt, c.StartedAt, c.CompletedAt)
		return
	}
	if started.Before(created) || !completed.After(started) || created.Year() < 2020 {
		t.Errorf("%s: created %v, started %v, completed %v: not in lifecycle order", name, created, started, completed)
	}
}

// waitStatuses waits until sha has at least n commit statuses (Gitea creates an Actions run,
// and its statuses, asynchronously after the event).
func waitStatuses(t *testing.T, srv *giteaserver.Server, token string, repo giteaserver.Repo, sha string, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var st struct {
			TotalCount int `json:"total_count"`
		}
		srv.MustDo(t, token, "", "GET", "/repos/"+repo.FullName()+"/commits/"+sha+"/status", nil, &st)
		if st.TotalCount >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d commit statuses after 60 s, want %d", sha, st.TotalCount, n)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
