package giteaserver

import (
	"strings"
	"testing"
	"time"
)

// The helper's own contract: a started server answers as the admin it created, a user made
// through it can authenticate with its token, and a restart keeps the data.
func TestStartCreateRestart(t *testing.T) {
	s := Start(t, Config{})
	u := s.CreateUser(t, "smoke")
	var me struct {
		Login   string `json:"login"`
		IsAdmin bool   `json:"is_admin"`
	}
	s.MustDo(t, u.Token, "", "GET", "/user", nil, &me)
	if me.Login != "smoke" || me.IsAdmin {
		t.Fatalf("GET /user as smoke = %+v", me)
	}
	s.Restart(t, Config{MaxResponseItems: 2})
	s.MustDo(t, s.Admin.Token, "", "GET", "/user", nil, &me)
	if me.Login != s.Admin.Login || !me.IsAdmin {
		t.Fatalf("GET /user as admin after restart = %+v", me)
	}
}

// The emulated runner's contract: a pushed workflow becomes a task handed to a runner with the
// job's label, and the result and log it reports are what Gitea's API then serves.
func TestRunnerFinishesTask(t *testing.T) {
	s := Start(t, Config{})
	u := s.CreateUser(t, "ci-owner")
	repo := s.CreateRepo(t, u, "ci")
	s.PushBranch(t, u, repo, "work", map[string]string{".gitea/workflows/ci.yml": "on: [push]\njobs:\n  unit:\n    runs-on: emu\n    steps:\n      - run: true\n"})
	r := s.RegisterRunner(t, "emu-runner", "emu")
	task := r.FetchTask(t, 90*time.Second)
	if task.Job != "unit" {
		t.Fatalf("task %+v, want job unit", task)
	}
	r.Finish(t, task, "failure", "line one", "line two")
	var got struct {
		Tasks []struct {
			ID     int64  `json:"id"`
			Status string `json:"status"`
		} `json:"workflow_runs"`
	}
	s.MustDo(t, u.Token, "", "GET", "/repos/"+repo.FullName()+"/actions/tasks", nil, &got)
	if len(got.Tasks) != 1 || got.Tasks[0].ID != task.ID || got.Tasks[0].Status != "failure" {
		t.Fatalf("tasks %+v, want task %d failure", got.Tasks, task.ID)
	}
	if log := s.JobLog(t, u.Token, repo, "unit"); !strings.Contains(log, "line one") || !strings.Contains(log, "line two") {
		t.Fatalf("job log %q lacks the reported lines", log)
	}
}
