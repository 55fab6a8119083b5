// Package giteaserver starts a throw-away Gitea server on 127.0.0.1 for tests and seeds it
// through its own API (and, where Gitea has no API, its web forms).
//
// The binary comes from scripts/gitea.sh (built from the Go module proxy, cached by version).
// Binary finds it; Start skips the test with a notice when it is absent, unless
// FORGECTX_REALFORGE=1 (set by .ci/run after a successful build) makes that a failure.
//
//	srv := giteaserver.Start(t, giteaserver.Config{MaxResponseItems: 2})
//	alice := srv.CreateUser(t, "alice")              // password login + an "all"-scope token
//	repo := srv.CreateRepo(t, alice, "widgets")      // private, initialised on main
//	srv.AddCollaborator(t, repo, bob, "write")
//	srv.Restart(t, giteaserver.Config{ActionsDisabled: true}) // new app.ini, same data
//
// Every server listens on a random free loopback port, stores everything (sqlite, repositories,
// logs) in the test's temporary directory and is stopped by t.Cleanup. Nothing leaves loopback:
// OFFLINE_MODE, no SSH, no mailer, webhooks allowed to loopback only.
package giteaserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forgectx/forgectx/test/testnotice"
)

// DefaultVersion is the Gitea release the suite runs against when FORGECTX_GITEA_VERSION is
// unset (scripts/gitea.sh builds the same one by default).
const DefaultVersion = "1.25.5"

// Versions are the Gitea releases the real-forge suite is run against, once per version
// (.ci/run builds or reuses each with scripts/gitea.sh VERSION): the oldest supported and the
// newest the Go module proxy serves.
var Versions = []string{"1.25.5", "1.27.3"}

// Version is the Gitea release this test process runs against: FORGECTX_GITEA_VERSION, else
// DefaultVersion. It picks the cached binary (Binary) and names the version in skip messages;
// a started server's own answer is Server.Version.
func Version() string {
	if v := os.Getenv("FORGECTX_GITEA_VERSION"); v != "" {
		return v
	}
	return DefaultVersion
}

// Config is the part of app.ini a test may vary. Changing it needs Restart.
type Config struct {
	// MaxResponseItems is [api] MAX_RESPONSE_ITEMS (0: Gitea's default, 50): the largest page
	// Gitea serves whatever limit is asked for.
	MaxResponseItems int
	// ActionsDisabled sets [actions] ENABLED=false.
	ActionsDisabled bool
	// Extra holds more app.ini keys by section ("" is the root section).
	Extra map[string]map[string]string
}

// User is an account on the server. Token is empty for an account made without one.
type User struct {
	ID       int64
	Login    string
	Password string
	Token    string
}

// Repo names a repository.
type Repo struct {
	Owner, Name string
	ID          int64
}

// FullName is OWNER/NAME.
func (r Repo) FullName() string { return r.Owner + "/" + r.Name }

// Server is a running Gitea instance.
type Server struct {
	// URL is the web root (http://127.0.0.1:PORT), APIURL the API root (URL + /api/v1).
	URL, APIURL string
	// Admin is the instance administrator created at start (the first user).
	Admin *User
	// Version is what the server's GET /version reports (1.25.5, 1.27.3).
	Version string

	bin, dir, ini string
	port          int
	cfg           Config
	mu            sync.Mutex
	cmd           *exec.Cmd
	done          chan error
	http          *http.Client
}

// Binary is the cached Gitea binary's path, or "" when it has not been built. The cache root is
// ${FORGECTX_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/forgectx-test}, as in scripts/gitea.sh.
func Binary() string {
	if b := os.Getenv("FORGECTX_GITEA_BIN"); b != "" {
		return b
	}
	root := os.Getenv("FORGECTX_TEST_CACHE")
	if root == "" {
		c := os.Getenv("XDG_CACHE_HOME")
		if c == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return ""
			}
			c = filepath.Join(home, ".cache")
		}
		root = filepath.Join(c, "forgectx-test")
	}
	b := filepath.Join(root, "gitea", "v"+Version(), "gitea")
	if st, err := os.Stat(b); err != nil || st.IsDir() {
		return ""
	}
	return b
}

// Require skips t when no Gitea binary is available (or fails it when FORGECTX_REALFORGE=1
// says one must be), and returns the binary's path.
func Require(t testing.TB) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		testnotice.Skip(t, "real-forge tests (Gitea server)", "the Gitea test server is run on Linux only")
	}
	b := Binary()
	if b != "" {
		return b
	}
	msg := "realforge: no Gitea " + Version() + " binary in the test cache; build it with scripts/gitea.sh " + Version() + " (8-18 min cold, needs CGO and a C compiler)"
	if os.Getenv("FORGECTX_REALFORGE") == "1" {
		t.Fatal(msg)
	}
	testnotice.Skip(t, "real-forge tests (Gitea server)", msg)
	return ""
}

// Start builds app.ini, migrates the database, creates the instance admin with a token and
// starts the server; t.Cleanup stops it.
func Start(t testing.TB, cfg Config) *Server {
	t.Helper()
	bin := Require(t)
	dir, err := os.MkdirTemp("", "forgectx-gitea-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{bin: bin, dir: dir, ini: filepath.Join(dir, "app.ini"), port: port, cfg: cfg,
		URL: fmt.Sprintf("http://127.0.0.1:%d", port), http: &http.Client{Timeout: 60 * time.Second}}
	s.APIURL = s.URL + "/api/v1"
	if err := s.writeINI(); err != nil {
		t.Fatal(err)
	}
	s.cli(t, "migrate")
	admin := &User{Login: "instance-admin", Password: "admin-Pa55word!"}
	s.cli(t, "admin", "user", "create", "--username", admin.Login, "--password", admin.Password,
		"--email", admin.Login+"@example.invalid", "--admin", "--must-change-password=false")
	admin.Token = s.cliToken(t, admin.Login)
	s.Admin = admin
	t.Cleanup(s.stop)
	s.start(t)
	var u struct {
		ID int64 `json:"id"`
	}
	s.MustDo(t, admin.Token, "", "GET", "/user", nil, &u)
	admin.ID = u.ID
	var v struct {
		Version string `json:"version"`
	}
	s.MustDo(t, admin.Token, "", "GET", "/version", nil, &v)
	s.Version = v.Version
	t.Logf("gitea %s on %s", s.Version, s.URL)
	return s
}

// Restart stops the server, rewrites app.ini from cfg and starts it again on the same port
// with the same data (Gitea reads its configuration only at start).
func (s *Server) Restart(t testing.TB, cfg Config) {
	t.Helper()
	s.stop()
	s.cfg = cfg
	if err := s.writeINI(); err != nil {
		t.Fatal(err)
	}
	s.start(t)
}

// Dir is the server's working directory (app.ini, gitea.db, repositories, logs).
func (s *Server) Dir() string { return s.dir }

// DBPath is the sqlite database file.
func (s *Server) DBPath() string { return filepath.Join(s.dir, "data", "gitea.db") }

// currentUser is RUN_USER: Gitea refuses to start as another user than the one configured.
func currentUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "root"
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) writeINI() error {
	sec := map[string]map[string]string{
		"": {"APP_NAME": "forgectx-test", "RUN_MODE": "prod", "WORK_PATH": s.dir, "RUN_USER": currentUser()},
		"server": {"PROTOCOL": "http", "HTTP_ADDR": "127.0.0.1", "HTTP_PORT": fmt.Sprint(s.port),
			"ROOT_URL": s.URL + "/", "DOMAIN": "127.0.0.1", "DISABLE_SSH": "true", "START_SSH_SERVER": "false",
			"OFFLINE_MODE": "true", "LFS_START_SERVER": "false", "STATIC_ROOT_PATH": filepath.Dir(s.bin),
			"APP_DATA_PATH": filepath.Join(s.dir, "data")},
		"database":            {"DB_TYPE": "sqlite3", "PATH": s.DBPath(), "SQLITE_JOURNAL_MODE": "WAL"},
		"security":            {"INSTALL_LOCK": "true", "SECRET_KEY": "forgectx-test-secret-key-not-secret", "INTERNAL_TOKEN": "forgectx-test-internal-token-not-a-secret-0123456789abcdef", "PASSWORD_HASH_ALGO": "pbkdf2_hi", "MIN_PASSWORD_LENGTH": "8", "PASSWORD_COMPLEXITY": "off"},
		"oauth2":              {"ENABLED": "false"},
		"service":             {"DISABLE_REGISTRATION": "true", "REQUIRE_SIGNIN_VIEW": "false", "DEFAULT_KEEP_EMAIL_PRIVATE": "true", "ENABLE_NOTIFY_MAIL": "false"},
		"mailer":              {"ENABLED": "false"},
		"repository":          {"ROOT": filepath.Join(s.dir, "repos"), "DEFAULT_BRANCH": "main"},
		"log":                 {"MODE": "file", "LEVEL": "Warn", "ROOT_PATH": filepath.Join(s.dir, "log")},
		"webhook":             {"ALLOWED_HOST_LIST": "loopback", "DELIVER_TIMEOUT": "10"},
		"cron":                {"ENABLED": "false"},
		"cron.update_checker": {"ENABLED": "false"},
		"indexer":             {"REPO_INDEXER_ENABLED": "false", "ISSUE_INDEXER_TYPE": "db"},
		"session":             {"PROVIDER": "memory"},
		"cache":               {"ADAPTER": "memory"},
		"queue":               {"TYPE": "channel"},
		"picture":             {"DISABLE_GRAVATAR": "true", "ENABLE_FEDERATED_AVATAR": "false"},
		"migrations":          {"ALLOW_LOCALNETWORKS": "false"},
		"git":                 {"HOME_PATH": filepath.Join(s.dir, "git-home")},
		"api":                 {},
		"actions":             {},
	}
	if s.cfg.MaxResponseItems > 0 {
		sec["api"]["MAX_RESPONSE_ITEMS"] = fmt.Sprint(s.cfg.MaxResponseItems)
		sec["api"]["DEFAULT_PAGING_NUM"] = fmt.Sprint(s.cfg.MaxResponseItems)
	}
	if s.cfg.ActionsDisabled {
		sec["actions"]["ENABLED"] = "false"
	} else {
		sec["actions"]["ENABLED"] = "true"
	}
	for name, kv := range s.cfg.Extra {
		if sec[name] == nil {
			sec[name] = map[string]string{}
		}
		for k, v := range kv {
			sec[name][k] = v
		}
	}
	var b strings.Builder
	names := make([]string, 0, len(sec))
	for n := range sec {
		names = append(names, n)
	}
	sort.Strings(names) // "" first: the root section must precede every [section]
	for _, n := range names {
		if n != "" {
			fmt.Fprintf(&b, "\n[%s]\n", n)
		}
		keys := make([]string, 0, len(sec[n]))
		for k := range sec[n] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "%s = %s\n", k, sec[n][k])
		}
	}
	return os.WriteFile(s.ini, []byte(b.String()), 0o600)
}

func (s *Server) env() []string {
	return append(os.Environ(), "GITEA_WORK_DIR="+s.dir, "HOME="+filepath.Join(s.dir, "home"),
		"GITEA_I_AM_BEING_UNSAFE_RUNNING_AS_ROOT="+fmt.Sprint(os.Geteuid() == 0), "GIT_CONFIG_NOSYSTEM=1")
}

// cli runs one gitea command against this server's app.ini and returns its stdout.
func (s *Server) cli(t testing.TB, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.bin, append(args, "--config", s.ini, "--work-path", s.dir)...)
	cmd.Env = s.env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("gitea %s: %v\n%s", args[0], err, tail(errb.String()+out.String(), 2000))
	}
	return out.String()
}

// cliToken makes an "all"-scope token for login with the CLI. The CLI may log to stdout too (the
// run-as-root warning), so the token is the last line that is 40 hex digits.
func (s *Server) cliToken(t testing.TB, login string) string {
	t.Helper()
	out := s.cli(t, "admin", "user", "generate-access-token", "--username", login, "--token-name", "forgectx", "--scopes", "all", "--raw")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); hexToken.MatchString(l) {
			return l
		}
	}
	t.Fatalf("gitea generate-access-token for %s printed no token", login)
	return ""
}

var hexToken = regexp.MustCompile(`^[0-9a-f]{40}$`)

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func (s *Server) start(t testing.TB) {
	t.Helper()
	logf, err := os.OpenFile(filepath.Join(s.dir, "gitea.out"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(s.bin, "web", "--config", s.ini, "--work-path", s.dir)
	cmd.Env = s.env()
	cmd.Stdout, cmd.Stderr = logf, logf
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); logf.Close() }()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case err := <-done:
			s.mu.Lock()
			s.cmd = nil
			s.mu.Unlock()
			out, _ := os.ReadFile(filepath.Join(s.dir, "gitea.out"))
			t.Fatalf("gitea web exited: %v\n%s", err, tail(string(out), 3000))
		default:
		}
		resp, err := s.http.Get(s.APIURL + "/version")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("gitea did not answer on %s within 90s", s.URL)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// stop ends the server process (SIGTERM, then SIGKILL after 10 s) and waits for it.
func (s *Server) stop() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(os.Interrupt)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// Do sends one API request (path relative to /api/v1) with token, optionally as another user
// through Gitea's Sudo header (admin tokens only), JSON-encoding body and decoding the answer
// into out when both are non-nil. It returns the status code.
func (s *Server) Do(t testing.TB, token, sudo, method, path string, body, out any) int {
	t.Helper()
	code, raw, err := s.do(token, sudo, method, path, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if out != nil && code/100 == 2 && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decoding: %v", method, path, err)
		}
	}
	return code
}

// MustDo is Do that fails the test on a non-2xx answer.
func (s *Server) MustDo(t testing.TB, token, sudo, method, path string, body, out any) {
	t.Helper()
	code, raw, err := s.do(token, sudo, method, path, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if code/100 != 2 {
		t.Fatalf("%s %s: HTTP %d: %s", method, path, code, tail(string(raw), 500))
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decoding: %v", method, path, err)
		}
	}
}

func (s *Server) do(token, sudo, method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.APIURL+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "token "+token)
	}
	if sudo != "" {
		req.Header.Set("Sudo", sudo)
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}
