package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const webhookFixtures = "../../test/fixtures/webhooks"

func TestDistillDefaultsFromTheCIEnvironment(t *testing.T) {
	issueComment := filepath.Join(webhookFixtures, "github/issue_comment/01-created.json")
	gitlabNote := filepath.Join(webhookFixtures, "gitlab/note_issue.json")
	inline, err := os.ReadFile(gitlabNote)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		env    map[string]string
		stdin  string
		args   []string
		prefix string
	}{
		{"GitHub Actions", map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "issue_comment", "GITHUB_EVENT_PATH": issueComment},
			"", nil, `{"comment":{"body":`},
		{"Forgejo Actions", map[string]string{"FORGEJO_ACTIONS": "true", "GITHUB_EVENT_NAME": "issue_comment", "GITHUB_EVENT_PATH": issueComment},
			"", nil, `{"comment":{"body":`},
		{"GitLab TRIGGER_PAYLOAD file variable", map[string]string{"GITLAB_CI": "true", "TRIGGER_PAYLOAD": gitlabNote},
			"", nil, `{"action":"create","note":{"noteable_type":"Issue"`},
		{"GitLab TRIGGER_PAYLOAD inline", map[string]string{"GITLAB_CI": "true", "TRIGGER_PAYLOAD": string(inline)},
			"", nil, `{"action":"create","note":{"noteable_type":"Issue"`},
		{"flags override the environment", map[string]string{"GITHUB_EVENT_NAME": "push", "GITHUB_EVENT_PATH": "/nonexistent"},
			"", []string{"--event", "issue_comment", "--payload", issueComment}, `{"comment":{"body":`},
		{"--forge gitlab with an X-Gitlab-Event name", nil,
			"", []string{"--forge", "gitlab", "--event", "Note Hook", "--payload", gitlabNote}, `{"action":"create","note":`},
		{"payload on stdin", nil,
			string(inline), []string{"--forge", "gitlab", "--payload", "-"}, `{"action":"create","note":`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.env, tc.stdin, append([]string{"distill"}, tc.args...)...)
			if code != exitOK || !strings.HasPrefix(out, tc.prefix) || !strings.HasSuffix(out, "}\n") {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
			}
			if !json.Valid([]byte(out)) {
				t.Errorf("stdout is not JSON: %s", out)
			}
			if errOut != "" {
				t.Errorf("unexpected stderr: %s", errOut)
			}
		})
	}
}

func TestDistillMalformedInputExitsZeroWithEmptyObjectAndAWarning(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	secret := "comment body that must never be logged"
	cases := []struct {
		name string
		env  map[string]string
		args []string
		code string
	}{
		{"not JSON", nil, []string{"--payload", write("bad.json", "{"+secret)}, "payload_not_json"},
		{"not an object", nil, []string{"--payload", write("arr.json", `["`+secret+`"]`)}, "payload_not_object"},
		{"wrong-typed container", nil, []string{"--event", "issue_comment", "--payload", write("wt.json", `{"comment":"`+secret+`"}`)}, "nothing_recognised"},
		{"missing file named by GITHUB_EVENT_PATH", map[string]string{"GITHUB_EVENT_PATH": filepath.Join(dir, "none.json")}, nil, "payload_unreadable"},
		{"no payload anywhere", nil, nil, "payload_missing"},
		{"GitLab without TRIGGER_PAYLOAD", map[string]string{"GITLAB_CI": "true"}, nil, "payload_missing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.env, "", append([]string{"--log-format", "json", "distill"}, tc.args...)...)
			if code != exitOK || out != "{}\n" {
				t.Fatalf("exit %d, stdout %q", code, out)
			}
			if !strings.Contains(errOut, `"level":"warn"`) || !strings.Contains(errOut, `"code":"`+tc.code+`"`) {
				t.Errorf("stderr has no warning with code %s: %s", tc.code, errOut)
			}
			if strings.Contains(errOut, secret) {
				t.Errorf("payload text logged: %s", errOut)
			}
		})
	}
}

// Regression: a mistyped --payload path exited 0 with payload_unreadable and did not name
// the path. A file the operator names that cannot be read is a bad flag: exit 2 naming it. A
// path from the CI environment stays fail safe ({} exit 0) and the warning names it.
func TestDistillUnreadablePayloadNamesThePath(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "evnet.json")
	for _, c := range []struct{ path, want string }{
		{missing, "--payload " + missing + ": no such file or directory"},
		{dir, "--payload " + dir + ": is a directory"},
	} {
		code, out, errOut := runCLI(t, nil, "", "distill", "--payload", c.path)
		if code != exitUsage || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("--payload %s: exit %d, stdout %q, stderr %q; want exit 2 with %q", c.path, code, out, errOut, c.want)
		}
	}
	code, out, errOut := runCLI(t, map[string]string{"GITHUB_EVENT_PATH": missing}, "", "--log-format", "json", "distill")
	if code != exitOK || out != "{}\n" || !strings.Contains(errOut, `"payload":"`+missing+`"`) ||
		!strings.Contains(errOut, `"payload_from":"GITHUB_EVENT_PATH"`) || !strings.Contains(errOut, `"cause":"no such file or directory"`) {
		t.Errorf("GITHUB_EVENT_PATH missing: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestDistillUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"distill", "--forge", "bitbucket"},
		{"distill", "--max-text", "10"},
		{"distill", "extra-arg"},
		{"distill", "--no-such-flag"},
	} {
		code, _, errOut := runCLI(t, nil, "", args...)
		if code != exitUsage || !strings.Contains(errOut, "forgectx distill --help") {
			t.Errorf("%q: exit %d, stderr %q", args, code, errOut)
		}
	}
}

func TestDistillMaxTextCapsFreeText(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "big.json")
	body := strings.Repeat("x", 5000)
	payload := `{"action":"created","comment":{"body":"` + body + `","html_url":"https://github.com/o/r/issues/1#issuecomment-2","user":{"login":"a"}}}`
	if err := os.WriteFile(p, []byte(payload), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, nil, "", "distill", "--event", "issue_comment", "--payload", p, "--max-text", "100")
	var m struct {
		Comment struct {
			Body    string `json:"body"`
			HTMLURL string `json:"html_url"`
		} `json:"comment"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &m) != nil {
		t.Fatalf("exit %d: %s", code, out)
	}
	if len(m.Comment.Body) > 100 || !strings.Contains(m.Comment.Body, "[forgectx: truncated") || m.Comment.HTMLURL == "" {
		t.Errorf("body %d bytes, url %q", len(m.Comment.Body), m.Comment.HTMLURL)
	}
}

func TestDistillRedactsRegisteredCITokens(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "tok.json")
	token := "glpat-registered-token-value"
	payload := `{"action":"created","comment":{"body":"here: ` + token + `","html_url":"https://github.com/o/r/issues/1#issuecomment-2","user":{"login":"a"}}}`
	if err := os.WriteFile(p, []byte(payload), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, map[string]string{"CI_JOB_TOKEN": token}, "", "distill", "--event", "issue_comment", "--payload", p)
	if code != exitOK || strings.Contains(out, token) || !strings.Contains(out, `"body":"here: `) {
		t.Errorf("exit %d: %s", code, out)
	}
}
