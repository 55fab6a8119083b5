package giteaserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// Runner is an emulated Actions runner: it speaks Gitea's real runner protocol (connect-rpc
// runner.v1.RunnerService under /api/actions/, JSON encoding) as act_runner does, but executes
// nothing. The test decides each task's log and result, so the server holds real action_run,
// action_run_job and action_task rows and a real log file, made by Gitea's own code paths
// (workflow detection, PickTask, UpdateLog, UpdateTask), without a container runtime.
//
//	r := srv.RegisterRunner(t, "emulated", "ubuntu-latest")
//	task := r.FetchTask(t, time.Minute)              // waits for a job matching the labels
//	r.Finish(t, task, "failure", "go test ./...", "FAIL")
type Runner struct {
	s           *Server
	uuid, token string
}

// Task is one task FetchTask handed the runner: its id (the Actions task id the tasks API
// lists) and the workflow job's key in the workflow file (context.job).
type Task struct {
	ID  int64
	Job string
}

// int64s decodes a protojson int64, which is a JSON string ("7") or, leniently, a number.
type int64s int64

func (n *int64s) UnmarshalJSON(b []byte) error {
	s := string(bytes.Trim(b, `"`))
	if s == "" || s == "null" {
		*n = 0
		return nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	*n = int64s(v)
	return err
}

// RunnerRegistrationToken returns the instance-level runner registration token, as the
// instance admin: POST /admin/actions/runners/registration-token, the only route Gitea 1.27
// keeps; Gitea 1.25 answers GET /admin/runners/registration-token, which 1.27 removed (404).
func (s *Server) RunnerRegistrationToken(t testing.TB) string {
	t.Helper()
	var got struct {
		Token string `json:"token"`
	}
	if code := s.Do(t, s.Admin.Token, "", "POST", "/admin/actions/runners/registration-token", nil, &got); code/100 != 2 {
		s.MustDo(t, s.Admin.Token, "", "GET", "/admin/runners/registration-token", nil, &got)
	}
	if got.Token == "" {
		t.Fatal("runner registration token: empty answer")
	}
	return got.Token
}

// RegisterRunner registers an instance-wide runner with labels (Register, then Declare, as
// act_runner does at start). Jobs whose runs-on names none of the labels are never handed to it.
func (s *Server) RegisterRunner(t testing.TB, name string, labels ...string) *Runner {
	t.Helper()
	r := &Runner{s: s}
	var reg struct {
		Runner struct {
			UUID  string `json:"uuid"`
			Token string `json:"token"`
		} `json:"runner"`
	}
	r.call(t, "Register", map[string]any{"name": name, "token": s.RunnerRegistrationToken(t),
		"version": "forgectx-emulated", "labels": labels}, &reg)
	if reg.Runner.UUID == "" || reg.Runner.Token == "" {
		t.Fatal("runner Register: no uuid or token in the answer")
	}
	r.uuid, r.token = reg.Runner.UUID, reg.Runner.Token
	r.call(t, "Declare", map[string]any{"version": "forgectx-emulated", "labels": labels}, nil)
	return r
}

// FetchTask polls FetchTask until Gitea assigns the runner a task (workflow detection after a
// push or a pull request event is asynchronous) or wait passes, which fails the test. Gitea
// marks the task running and stamps its start when it hands it out.
func (r *Runner) FetchTask(t testing.TB, wait time.Duration) Task {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		var got struct {
			Task *struct {
				ID      int64s `json:"id"`
				Context struct {
					Job string `json:"job"`
				} `json:"context"`
			} `json:"task"`
		}
		// tasksVersion 0 never equals the server's version, so every call tries to pick a task.
		r.call(t, "FetchTask", map[string]any{"tasksVersion": 0}, &got)
		if got.Task != nil && got.Task.ID > 0 {
			return Task{ID: int64(got.Task.ID), Job: got.Task.Context.Job}
		}
		if time.Now().After(deadline) {
			t.Fatalf("runner: no task assigned within %v", wait)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// Finish uploads lines as the task's whole log (UpdateLog with noMore, which moves the log from
// the database to log storage, as act_runner does at the end) and then reports result
// ("success", "failure", "cancelled" or "skipped") with a stop time of now.
func (r *Runner) Finish(t testing.TB, task Task, result string, lines ...string) {
	t.Helper()
	results := map[string]string{"success": "RESULT_SUCCESS", "failure": "RESULT_FAILURE",
		"cancelled": "RESULT_CANCELLED", "skipped": "RESULT_SKIPPED"}
	res, ok := results[result]
	if !ok {
		t.Fatalf("runner Finish: result %q: must be success, failure, cancelled or skipped", result)
	}
	now := time.Now().UTC()
	rows := make([]map[string]any, len(lines))
	for i, l := range lines {
		rows[i] = map[string]any{"time": now.Format(time.RFC3339), "content": l}
	}
	var ack struct {
		AckIndex int64s `json:"ackIndex"`
	}
	r.call(t, "UpdateLog", map[string]any{"taskId": task.ID, "index": 0, "rows": rows, "noMore": true}, &ack)
	if int(ack.AckIndex) != len(lines) {
		t.Fatalf("runner UpdateLog: ack %d of %d rows", ack.AckIndex, len(lines))
	}
	r.call(t, "UpdateTask", map[string]any{"state": map[string]any{"id": task.ID, "result": res,
		"startedAt": now.Format(time.RFC3339), "stoppedAt": now.Format(time.RFC3339)}}, nil)
}

// call is one unary connect-rpc call with the JSON codec. Every method but Register is
// authenticated by the runner's uuid and token headers.
func (r *Runner) call(t testing.TB, method string, req, out any) {
	t.Helper()
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	hr, err := http.NewRequest("POST", r.s.URL+"/api/actions/runner.v1.RunnerService/"+method, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Connect-Protocol-Version", "1")
	if method != "Register" {
		hr.Header.Set("x-runner-uuid", r.uuid)
		hr.Header.Set("x-runner-token", r.token)
	}
	resp, err := r.s.http.Do(hr)
	if err != nil {
		t.Fatalf("runner %s: %v", method, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("runner %s: %v", method, err)
	}
	if resp.StatusCode != http.StatusOK {
		// A connect error body is {"code":…,"message":…}: no secret in it.
		t.Fatalf("runner %s: HTTP %d: %s", method, resp.StatusCode, tail(string(raw), 500))
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("runner %s: decoding: %v", method, err)
		}
	}
}

// JobLog downloads the log Gitea serves for the workflow job that ran task
// (GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs, Gitea 1.24 and later; Forgejo has no
// such endpoint). The job id is looked up from the runs' jobs, matched by name; listing runs
// needs the repository owner's (or an instance admin's) token.
func (s *Server) JobLog(t testing.TB, token string, repo Repo, jobName string) string {
	t.Helper()
	var runs struct {
		WorkflowRuns []struct {
			ID int64 `json:"id"`
		} `json:"workflow_runs"`
	}
	s.MustDo(t, token, "", "GET", "/repos/"+repo.FullName()+"/actions/runs", nil, &runs)
	for _, run := range runs.WorkflowRuns {
		var jobs struct {
			Jobs []struct {
				ID   int64  `json:"id"`
				Name string `json:"name"`
			} `json:"jobs"`
		}
		s.MustDo(t, token, "", "GET", fmt.Sprintf("/repos/%s/actions/runs/%d/jobs", repo.FullName(), run.ID), nil, &jobs)
		for _, j := range jobs.Jobs {
			if j.Name != jobName {
				continue
			}
			code, raw, err := s.do(token, "", "GET", fmt.Sprintf("/repos/%s/actions/jobs/%d/logs", repo.FullName(), j.ID), nil)
			if err != nil || code != http.StatusOK {
				t.Fatalf("job %q log: HTTP %d: %v", jobName, code, err)
			}
			return string(raw)
		}
	}
	t.Fatalf("no workflow job named %q", jobName)
	return ""
}
