package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// A fourth forge is one package implementing forge.Provider plus one Register call
// (docs/forges.md, "Adding a forge"). fakeProvider is such a forge, written as a new forge
// package would be: its client is forge.NewHTTPClient (policy-checked, authenticated,
// retrying) over a small JSON API, and nothing in cmd/forgectx or internal/run knows its name.
type fakeProvider struct{}

const fakeForge = "fakeforge"

func init() { forge.Register(fakeProvider{}) }

func (fakeProvider) Name() string { return fakeForge }

func (fakeProvider) Detect(getenv func(string) string) bool { return getenv("FAKEFORGE_CI") == "true" }

func (fakeProvider) Policy() forge.Policy {
	return forge.Policy{
		APIURLRule: "required for the fake forge", DefaultTokenEnv: "FAKE_TOKEN", RepoRule: "OWNER/NAME",
		ValidateRepo: func(repo string) error {
			if o, n, ok := strings.Cut(repo, "/"); !ok || o == "" || n == "" || strings.Contains(n, "/") {
				return fmt.Errorf("repo %q", repo)
			}
			return nil
		},
	}
}

func (p fakeProvider) CIDefaults(in forge.JobInput) (forge.Job, error) {
	j := forge.Job{Ref: forge.Ref{Forge: fakeForge, Repo: forge.FirstOf(in.Repo, in.Getenv("FAKEFORGE_REPO")), Number: in.Number,
		APIURL: forge.FirstOf(in.APIURL, in.Getenv("FAKEFORGE_API_URL"))}, TokenEnv: "FAKE_TOKEN", RunURL: in.Getenv("FAKEFORGE_RUN_URL")}
	if err := p.Policy().ValidateRepo(j.Ref.Repo); err != nil {
		return j, &forge.ConfigError{Field: "--repo", Rule: "OWNER/NAME", Err: err}
	}
	if j.ReceiptID = forge.CIReceiptID("fake", in.Getenv("FAKEFORGE_RUN_ID"), "1"); j.ReceiptID == "" {
		j.ReceiptID = forge.LocalReceiptID(in.Start)
	}
	return j, nil
}

func (fakeProvider) Open(o forge.Options) (*forge.Conn, error) {
	hc, err := forge.NewHTTPClient(o, forge.ClientSpec{Forge: fakeForge, Auth: forge.BearerAuth("token"),
		Retry: forge.Retry{Max: 1, WaitMin: time.Millisecond, WaitMax: time.Millisecond}})
	if err != nil {
		return nil, err
	}
	c := &fakeClient{http: hc, api: strings.TrimSuffix(o.APIURL, "/")}
	conn := &forge.Conn{Acquirer: c}
	if o.WithCommenter {
		conn.Commenter = c
	}
	return conn, nil
}

// fakeClient is the fake forge's adapter: an entity endpoint that serves the acquisition JSON
// interchange, and a comments API.
type fakeClient struct {
	http *http.Client
	api  string
}

func (c *fakeClient) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = strings.NewReader(string(b))
	}
	req, err := http.NewRequestWithContext(ctx, method, c.api+path, body)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: HTTP %d", method, path, resp.StatusCode)
	}
	if out == nil {
		return nil
	}
	if a, ok := out.(**acquisition.Acquisition); ok {
		*a, err = acquisition.Read(resp.Body)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

func (c *fakeClient) Acquire(ctx context.Context, ref forge.Ref, _ acquisition.Profile) (*acquisition.Acquisition, error) {
	var a *acquisition.Acquisition
	err := c.do(ctx, http.MethodGet, fmt.Sprintf("/entities/%d", ref.Number), nil, &a)
	return a, err
}

func (c *fakeClient) FindComments(ctx context.Context, ref forge.Ref, marker string) ([]forge.Comment, error) {
	var all, out []forge.Comment
	if err := c.do(ctx, http.MethodGet, fmt.Sprintf("/entities/%d/comments", ref.Number), nil, &all); err != nil {
		return nil, err
	}
	for _, cm := range all {
		if strings.Contains(cm.Body, marker) {
			out = append(out, cm)
		}
	}
	return out, nil
}

func (c *fakeClient) CreateComment(ctx context.Context, ref forge.Ref, body string) (forge.Comment, error) {
	var cm forge.Comment
	err := c.do(ctx, http.MethodPost, fmt.Sprintf("/entities/%d/comments", ref.Number), map[string]string{"body": body}, &cm)
	return cm, err
}

func (c *fakeClient) UpdateComment(ctx context.Context, _ forge.Ref, id string, body string) error {
	return c.do(ctx, http.MethodPatch, "/comments/"+id, map[string]string{"body": body}, nil)
}

// fakeForgeServer is the fake forge's API: it serves the entity and the comments, checks the
// credential of every request and records what was asked, so the test can require every
// expected request and nothing else.
type fakeForgeServer struct {
	t      *testing.T
	entity []byte
	mu     sync.Mutex
	seen   []string
	bodies []string
}

func (f *fakeForgeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen = append(f.seen, r.Method+" "+r.URL.Path)
	if r.Header.Get("Authorization") != "token fake-secret-value" {
		f.t.Errorf("%s %s: Authorization %q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
	}
	var in struct{ Body string }
	_ = json.NewDecoder(r.Body).Decode(&in)
	switch r.Method + " " + r.URL.Path {
	case "GET /api/entities/7":
		_, _ = w.Write(f.entity)
	case "GET /api/entities/7/comments":
		_, _ = w.Write([]byte(`[]`))
	case "POST /api/entities/7/comments":
		f.bodies = append(f.bodies, in.Body)
		_ = json.NewEncoder(w).Encode(forge.Comment{ID: fmt.Sprintf("c%d", len(f.bodies)), Body: in.Body})
	case "PATCH /api/comments/c1":
		f.bodies = append(f.bodies, in.Body)
	default:
		f.t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
		w.WriteHeader(http.StatusNotFound)
	}
}

func (f *fakeForgeServer) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := append([]string(nil), f.seen...)
	sort.Strings(out)
	return out
}

func newFakeForge(t *testing.T) (*fakeForgeServer, string) {
	entity, err := os.ReadFile("../../test/fixtures/acquisition/work-item/acquisition.json")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeForgeServer{t: t, entity: entity}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL + "/api"
}

// snapshot through a registered fourth forge gives the same tree as the same acquisition read
// from a file: the registry, the Session policy (token from the provider's default variable)
// and the shared HTTP client carry it, with no forge-specific code in cmd/forgectx.
func TestRegistryFakeProviderDrivesSnapshot(t *testing.T) {
	fx := "../../test/fixtures/acquisition/work-item/"
	f, api := newFakeForge(t)
	env := map[string]string{"FAKE_TOKEN": "fake-secret-value"}
	common := []string{"--profile", fx + "profile.json", "--bots", fx + "bots.json", "--category", "observation"}
	viaForge := filepath.Join(t.TempDir(), "forge")
	code, out1, stderr := runCLI(t, env, "", append([]string{"snapshot", "--forge", fakeForge, "--repo", "o/r", "--number", "7", "--api-url", api, "--out", viaForge}, common...)...)
	if code != exitOK {
		t.Fatalf("snapshot --forge %s: exit %d\n%s", fakeForge, code, stderr)
	}
	viaFile := filepath.Join(t.TempDir(), "file")
	code, out2, stderr := runCLI(t, env, "", append([]string{"snapshot", "--from-acquisition", fx + "acquisition.json", "--out", viaFile}, common...)...)
	if code != exitOK {
		t.Fatalf("snapshot --from-acquisition: exit %d\n%s", code, stderr)
	}
	var a, b struct {
		IndexSHA256 string `json:"index_sha256"`
	}
	if json.Unmarshal([]byte(out1), &a) != nil || json.Unmarshal([]byte(out2), &b) != nil || a.IndexSHA256 == "" || a.IndexSHA256 != b.IndexSHA256 {
		t.Errorf("index via the fake forge %q, via the file %q", a.IndexSHA256, b.IndexSHA256)
	}
	if got := strings.Join(f.requests(), ","); got != "GET /api/entities/7" {
		t.Errorf("requests = %s, want exactly the entity read", got)
	}
	// The provider's rules hold as for the built-in forges: no token, no --api-url.
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"--api-url", api}, "--token-env FAKE_TOKEN"},
		{env, nil, "--api-url: required for the fake forge"},
	} {
		args := append(append([]string{"snapshot", "--forge", fakeForge, "--repo", "o/r", "--number", "7", "--out", filepath.Join(t.TempDir(), "x")}, common...), tc.args...)
		if code, _, stderr := runCLI(t, tc.env, "", args...); code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %q", tc.args, code, stderr, tc.want)
		}
	}
}

// run through a registered fourth forge, detected from its CI environment: the start status
// comment, the acquisition, the snapshot, the pre-script's skip, the completion edit and the
// receipt all go through the provider.
func TestRegistryFakeProviderDrivesRun(t *testing.T) {
	f, api := newFakeForge(t)
	dir := t.TempDir()
	h := filepath.Join(dir, "h.yml")
	if err := os.WriteFile(h, []byte(cliHarness+"pre_script:\n  command: [\"sh\", \"-c\", \"exit 78\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"FAKEFORGE_CI": "true", "FAKEFORGE_REPO": "o/r", "FAKEFORGE_API_URL": api, "FAKEFORGE_RUN_ID": "41",
		"FAKE_TOKEN": "fake-secret-value", "PATH": os.Getenv("PATH")}
	code, _, stderr := runCLI(t, env, "", "run", "--harness", h, "--number", "7", "--tree-dir", tmp, "--state-dir", filepath.Join(tmp, "state"))
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	want := "GET /api/entities/7,GET /api/entities/7/comments,PATCH /api/comments/c1,POST /api/entities/7/comments,POST /api/entities/7/comments"
	if got := strings.Join(f.requests(), ","); got != want {
		t.Errorf("requests = %s\nwant       %s", got, want)
	}
	if len(f.bodies) != 3 || !strings.Contains(f.bodies[2], "fake-41-1") || !strings.Contains(f.bodies[2], "skipped") {
		t.Errorf("comment writes = %q, want start, completion and the receipt fake-41-1 (skipped)", f.bodies)
	}
	if strings.Contains(stderr, "fake-secret-value") {
		t.Error("the token reached stderr")
	}
}
