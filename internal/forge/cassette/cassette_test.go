package cassette

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

const secret = "ghp_SECRETSECRETSECRET0123456789abcdef"

// recordRun records a small run through a Recorder against a local server and returns the
// cassette directory and the bodies the caller saw.
func recordRun(t *testing.T) (string, []string) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		switch {
		case r.URL.Path == "/graphql":
			b, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"data":{"echo":%t}}`, strings.Contains(string(b), "second"))
		case r.URL.Path == "/flaky":
			if i == 2 {
				w.WriteHeader(http.StatusBadGateway)
				return
			}
			fmt.Fprint(w, `{"ok":true}`)
		case r.URL.Path == "/binary":
			w.Write([]byte{0xff, 0xfe, 0x00, 0x01})
		default:
			w.Header().Set("Set-Cookie", "session="+secret)
			w.Header().Set("X-GitHub-SSO", "required; url=https://github.com/orgs/o/sso?authorization_request=SSOREQUEST")
			w.Header().Set("Link", `<http://`+r.Host+`/text?page=2&t=`+secret+`>; rel="next"`)
			w.Header().Set("X-Echo", r.Header.Get("Authorization"))
			fmt.Fprintf(w, "plain text with token %s inside", secret)
		}
	}))
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "cas")
	rec, err := NewRecorder(dir, nil, RecorderOptions{Meta: Meta{Forge: "github", APIURL: srv.URL}, Secrets: []string{secret}})
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: rec}
	var got []string
	do := func(method, path, body string) {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, _ := http.NewRequest(method, srv.URL+path, rd)
		req.Header.Set("Authorization", "Bearer "+secret)
		req.Header.Set("Accept", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got = append(got, fmt.Sprintf("%d %s", resp.StatusCode, b))
	}
	do("GET", "/flaky?per_page=100&page=1", "")                            // 1: ok
	do("GET", "/flaky?page=1&per_page=100", "")                            // 2: 502 (same key: query order differs)
	do("GET", "/flaky?per_page=100&page=1", "")                            // 3: ok
	do("GET", "/text?access_token="+secret, "")                            // credential query param
	do("POST", "/graphql", `{"query":"first"}`)                            // body-keyed
	do("POST", "/graphql", `{"query":  "second"}`)                         // body-keyed
	do("GET", "/binary", "")                                               // base64 body
	do("POST", "/graphql", `{"query":"x","variables":{"t":"`+secret+`"}}`) // secret in a request body
	return dir, got
}

func TestRecorderStripsCredentialsBeforeDisk(t *testing.T) {
	dir, _ := recordRun(t)
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, bad := range []string{secret, "Authorization", "Set-Cookie", "session=", "SSOREQUEST", "X-Github-Sso"} {
			if strings.Contains(string(b), bad) {
				t.Errorf("%s contains %q", filepath.Base(p), bad)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Interactions) != 8 {
		t.Fatalf("recorded %d interactions, want 8", len(c.Interactions))
	}
	if l := c.Interactions[3].Response.Header.Get("Link"); !strings.Contains(l, "t="+Redacted) || !strings.Contains(l, `rel="next"`) {
		t.Errorf("Link header not kept with the token redacted: %q", l)
	}
	if !strings.Contains(c.Interactions[3].Request.URL, "access_token="+Redacted) {
		t.Errorf("credential query parameter not redacted: %s", c.Interactions[3].Request.URL)
	}
	if c.Meta.Forge != "github" || c.Meta.Version != Version {
		t.Errorf("meta = %+v", c.Meta)
	}
	if c.Interactions[6].Response.Body.Base64 == "" {
		t.Errorf("binary body not stored as base64: %+v", c.Interactions[6].Response.Body)
	}
	if len(c.Interactions[0].Response.Body.JSON) == 0 {
		t.Errorf("JSON body not embedded as JSON")
	}
}

func TestReplayServesRecordedResponsesInOrderPerKey(t *testing.T) {
	dir, live := recordRun(t)
	c, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	rp, err := NewReplayer(c)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: rp}
	get := func(method, url, body string) string {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, _ := http.NewRequest(method, url, rd)
		resp, err := client.Do(req)
		if err != nil {
			return "error: " + err.Error()
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return fmt.Sprintf("%d %s", resp.StatusCode, b)
	}
	// Another host than the recorded one: the host is not part of the match.
	base := "https://replay.invalid"
	if got := get("POST", base+"/graphql", `{"query":"second"}`); got != live[5] {
		t.Errorf("graphql second = %q, want %q (body-keyed, whitespace-insensitive)", got, live[5])
	}
	if got := get("POST", base+"/graphql", `{"query":"first"}`); got != live[4] {
		t.Errorf("graphql first = %q, want %q", got, live[4])
	}
	for i, want := range []string{live[0], live[1], live[2]} {
		if got := get("GET", base+"/flaky?page=1&per_page=100", ""); got != want {
			t.Errorf("repeat %d = %q, want %q (FIFO per key)", i, got, want)
		}
	}
	if got := get("GET", base+"/flaky?page=1&per_page=100", ""); !strings.Contains(got, ErrNotRecorded.Error()) {
		t.Errorf("exhausted key = %q, want ErrNotRecorded", got)
	}
	if got := get("GET", base+"/binary", ""); got != live[6] {
		t.Errorf("binary = %q, want %q", got, live[6])
	}
	un := rp.Unused()
	if len(un) != 2 {
		t.Errorf("Unused = %q, want the /text and the secret graphql exchanges", un)
	}
}

func TestReplayReturnsRecordedTransportErrors(t *testing.T) {
	dir := t.TempDir()
	err := Write(dir, &Cassette{Interactions: []Interaction{
		{Request: Request{Method: "GET", URL: "https://x/a"}, Error: "context deadline exceeded (Client.Timeout exceeded)"},
		{Request: Request{Method: "GET", URL: "https://x/a"}, Response: &Response{Status: 200, Body: NewBody([]byte(`{"a":1}`))}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	rp, _ := NewReplayer(c)
	req, _ := http.NewRequest("GET", "http://other/a", nil)
	_, err = rp.RoundTrip(req)
	var re *replayedError
	if !errors.As(err, &re) || !re.Timeout() {
		t.Fatalf("first replay: err = %v, want a timeout ReplayedError", err)
	}
	resp, err := rp.RoundTrip(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("second replay: %v %v", resp, err)
	}
}

func TestLoadRejectsMalformedCassettes(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"missing header": {"interactions/000001-GET.json": `{"request":{"method":"GET","url":"/"},"response":{"status":200}}`},
		"bad version":    {"cassette.json": `{"cassette_version":9}`},
		"unknown field":  {"cassette.json": `{"cassette_version":1}`, "interactions/000001-GET.json": `{"request":{"method":"GET","url":"/"},"response":{"status":200},"extra":1}`},
		"no response":    {"cassette.json": `{"cassette_version":1}`, "interactions/000001-GET.json": `{"request":{"method":"GET","url":"/"}}`},
		"no method":      {"cassette.json": `{"cassette_version":1}`, "interactions/000001-GET.json": `{"request":{"url":"/"},"response":{"status":200}}`},
		"truncated JSON": {"cassette.json": `{"cassette_version":1}`, "interactions/000001-GET.json": `{"request":`},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for p, content := range files {
				os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
				os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644)
			}
			if _, err := Load(dir); err == nil {
				t.Fatal("Load accepted a malformed cassette")
			}
		})
	}
}

func TestRecorderRefusesNonEmptyDirectory(t *testing.T) {
	dir := t.TempDir()
	if _, err := NewRecorder(dir, nil, RecorderOptions{}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "interactions", "000001-GET.json"), []byte(`{}`), 0o644)
	if _, err := NewRecorder(dir, nil, RecorderOptions{}); err == nil {
		t.Fatal("recorder appended to an existing cassette")
	}
}

func TestKeyIgnoresHostAndQueryOrder(t *testing.T) {
	a, _ := Key("get", "https://a.example/x?b=2&a=1", nil)
	b, _ := Key("GET", "http://127.0.0.1:9/x?a=1&b=2", nil)
	if a != b {
		t.Errorf("%q != %q", a, b)
	}
	c, _ := Key("POST", "https://a/graphql", []byte(`{"q": 1}`))
	d, _ := Key("POST", "https://a/graphql", []byte(`{"q":2}`))
	if c == d {
		t.Errorf("different bodies share a key")
	}
}

// FuzzLoadInteraction feeds arbitrary interaction files to the decoder and the replayer: they
// must never panic.
func FuzzLoadInteraction(f *testing.F) {
	f.Add([]byte(`{"request":{"method":"GET","url":"/x?a=1"},"response":{"status":200,"body":{"json":{"a":1}}}}`))
	f.Add([]byte(`{"request":{"method":"GET","url":"/"},"response":{"status":200,"body":{"base64":"!!"}}}`))
	f.Add([]byte(`{"request":{"method":"POST","url":"%zz"},"error":"x"}`))
	f.Add([]byte(`{"request":{"method":"GET","url":"/x?a=1"},"response":{"status":200,"body":{"text":"t"},"body_truncated":true}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := decodeInteraction(data)
		if err != nil {
			return
		}
		rp, err := NewReplayer(&Cassette{Meta: Meta{Version: Version}, Interactions: []Interaction{in}})
		if err != nil {
			return
		}
		req, _ := http.NewRequest("GET", "http://h/x?a=1", nil)
		if resp, err := rp.RoundTrip(req); err == nil {
			io.ReadAll(resp.Body)
		}
	})
}
