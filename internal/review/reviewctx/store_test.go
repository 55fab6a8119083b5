package reviewctx

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var storeNow = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func testStore(t *testing.T) *Store {
	t.Helper()
	h, err := NewHandle()
	if err != nil {
		t.Fatal(err)
	}
	pd := strings.Repeat("ab", 32)
	c := Content{Descriptor: "discussion 1", State: "open", Text: "hello\n"}
	d, err := c.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return &Store{
		SchemaVersion: StoreSchema, RunID: "run-1", Mode: ModeEnriched, PolicyDigest: pd,
		PolicySHA: strings.Repeat("1", 40), ReviewedHead: strings.Repeat("2", 40),
		CreatedAt: storeNow.Format(time.RFC3339), ExpiresAt: storeNow.Add(time.Hour).Format(time.RFC3339),
		Sources: []SourceState{{Source: SourceDiscussions, Completeness: Complete, Records: 1, Reasons: []string{}}},
		Records: []Record{{Handle: h, Source: SourceDiscussions, Mutable: true, Binding: Binding{
			RunID: "run-1", PolicyDigest: pd, CanonicalObject: "gitlab/discussion/x", ResourceClass: resourceDiscussion,
			Projections: Projections{Retrieve: []string{"descriptor", "state", "text"}, Model: []string{"descriptor", "text"}, Publish: []string{}, Retain: []string{}},
			Version:     "v1", Digest: d, ExpiresAt: storeNow.Add(time.Hour).Format(time.RFC3339),
		}, Content: c}},
	}
}

func TestHandleForm(t *testing.T) {
	h, err := NewHandle()
	if err != nil {
		t.Fatal(err)
	}
	h2, _ := NewHandle()
	if !ValidHandle(h) || len(h) != len(handlePrefix)+43 || h == h2 || strings.ContainsAny(h, "=+/") {
		t.Fatalf("handle %q", h)
	}
	for _, bad := range []string{"", "ctx1_", "ctx2_" + h[5:], h + "A", h[:len(h)-1], h[:len(h)-1] + "=", h[:len(h)-1] + "+"} {
		if ValidHandle(bad) {
			t.Errorf("accepted %q", bad)
		}
	}
}

func TestStoreCommitAndLookup(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ctx")
	s := testStore(t)
	id, err := CommitStore(dir, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		path string
		mode os.FileMode
	}{{dir, 0o700}, {filepath.Join(dir, storeFile), 0o600}} {
		fi, err := os.Lstat(p.path)
		if err != nil || fi.Mode().Perm() != p.mode {
			t.Fatalf("%s mode %v %v", p.path, fi.Mode(), err)
		}
	}
	got, err := LoadStore(dir, &id)
	if err != nil {
		t.Fatal(err)
	}
	h := s.Records[0].Handle
	r, err := got.Lookup(h, "run-1", s.PolicyDigest, storeNow)
	if err != nil || r.Content.Text != "hello\n" {
		t.Fatalf("lookup %v %v", r, err)
	}
	mv := r.ModelView()
	if _, ok := mv["state"]; ok || mv["text"] != "hello\n" || mv["descriptor"] != "discussion 1" {
		t.Fatalf("model view ignores projection: %v", mv)
	}
	other, _ := NewHandle()
	fails := []struct {
		rule        string
		handle, run string
		policy      string
		now         time.Time
	}{
		{"invalid handle fails", "ctx1_abc", "run-1", s.PolicyDigest, storeNow},
		{"wrong run fails", h, "run-2", s.PolicyDigest, storeNow},
		{"wrong policy fails", h, "run-1", strings.Repeat("cd", 32), storeNow},
		{"expired fails", h, "run-1", s.PolicyDigest, storeNow.Add(time.Hour)},
		{"non-minted handle fails", other, "run-1", s.PolicyDigest, storeNow},
	}
	for _, f := range fails {
		if _, err := got.Lookup(f.handle, f.run, f.policy, f.now); !errors.Is(err, ErrHandle) {
			t.Errorf("%s: %v", f.rule, err)
		}
	}
}

func TestStoreHostileReadBack(t *testing.T) {
	cases := []struct {
		rule   string
		attack func(t *testing.T, dir string)
		useID  bool
	}{
		{"symlinked store file aborts", func(t *testing.T, dir string) {
			f := filepath.Join(dir, storeFile)
			b, _ := os.ReadFile(f)
			elsewhere := filepath.Join(t.TempDir(), "x")
			os.WriteFile(elsewhere, b, 0o600)
			os.Remove(f)
			if err := os.Symlink(elsewhere, f); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"hardlinked store file aborts", func(t *testing.T, dir string) {
			if err := os.Link(filepath.Join(dir, storeFile), filepath.Join(dir, "second")); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"replaced store file aborts", func(t *testing.T, dir string) {
			f := filepath.Join(dir, storeFile)
			b, _ := os.ReadFile(f)
			os.WriteFile(f+".new", b, 0o600)
			if err := os.Rename(f+".new", f); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"rewritten store content aborts", func(t *testing.T, dir string) {
			f := filepath.Join(dir, storeFile)
			b, _ := os.ReadFile(f)
			b[len(b)-2] = ' '
			os.WriteFile(f, b, 0o600)
		}, true},
		{"group-readable store file aborts", func(t *testing.T, dir string) {
			os.Chmod(filepath.Join(dir, storeFile), 0o640)
		}, false},
		{"world-readable store directory aborts", func(t *testing.T, dir string) {
			os.Chmod(dir, 0o755)
		}, false},
		{"symlinked store directory aborts", func(t *testing.T, dir string) {
			real := dir + ".real"
			os.Rename(dir, real)
			os.Symlink(real, dir)
		}, false},
		{"unknown field aborts", func(t *testing.T, dir string) {
			f := filepath.Join(dir, storeFile)
			b, _ := os.ReadFile(f)
			os.WriteFile(f, []byte(strings.Replace(string(b), `{"admitted_mutable"`, `{"a":1,"admitted_mutable"`, 1)), 0o600)
		}, false},
		{"non-canonical bytes abort", func(t *testing.T, dir string) {
			f := filepath.Join(dir, storeFile)
			b, _ := os.ReadFile(f)
			os.WriteFile(f, append(b, '\n'), 0o600)
		}, false},
		{"tampered record text aborts (digest)", func(t *testing.T, dir string) {
			f := filepath.Join(dir, storeFile)
			b, _ := os.ReadFile(f)
			os.WriteFile(f, []byte(strings.Replace(string(b), `hello\n`, `HELLO\n`, 1)), 0o600)
		}, false},
		{"wrong schema aborts", func(t *testing.T, dir string) {
			f := filepath.Join(dir, storeFile)
			b, _ := os.ReadFile(f)
			os.WriteFile(f, []byte(strings.Replace(string(b), StoreSchema, "ocr.context-store/v1", 1)), 0o600)
		}, false},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ctx")
			id, err := CommitStore(dir, testStore(t))
			if err != nil {
				t.Fatal(err)
			}
			c.attack(t, dir)
			var want *StoreIdentity
			if c.useID {
				want = &id
			}
			if _, err := LoadStore(dir, want); !errors.Is(err, errStore) {
				t.Fatalf("attack not detected: %v", err)
			}
		})
	}
}

func TestStoreBoundsRejectedAtCommit(t *testing.T) {
	cases := []struct {
		rule string
		f    func(s *Store)
	}{
		{"expiry beyond 24h rejected", func(s *Store) { s.ExpiresAt = storeNow.Add(25 * time.Hour).Format(time.RFC3339) }},
		{"more than 128 records rejected", func(s *Store) {
			for len(s.Records) <= maxStoreRecords {
				r := s.Records[0]
				r.Handle, _ = NewHandle()
				s.Records = append(s.Records, r)
			}
		}},
		{"duplicate handle rejected", func(s *Store) { s.Records = append(s.Records, s.Records[0]) }},
		{"record bound to another run rejected", func(s *Store) { s.Records[0].Binding.RunID = "other" }},
		{"record digest mismatch rejected", func(s *Store) { s.Records[0].Content.Text = "changed" }},
		{"over 4 MB rejected", func(s *Store) {
			s.Records[0].Content.Text = strings.Repeat("x", maxStoreBytes)
			s.Records[0].Binding.Digest, _ = s.Records[0].Content.Digest()
		}},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			s := testStore(t)
			c.f(s)
			if _, err := CommitStore(filepath.Join(t.TempDir(), "ctx"), s); !errors.Is(err, errStore) {
				t.Fatalf("accepted: %v", err)
			}
		})
	}
}
