package reviewrun

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStripGitConfig(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"[remote \"origin\"]\n\turl = https://gitlab-ci-token:glcbt-abc@gitlab.example/a/b.git\n", "[remote \"origin\"]\n\turl = https://gitlab.example/a/b.git\n"},
		{"\tpushurl = ssh://git@host/x\n", "\tpushurl = ssh://host/x\n"},
		{"[url \"https://u:p@h/\"]\n\tinsteadOf = https://h/\n", "[url \"https://h/\"]\n\tinsteadOf = https://h/\n"},
		{"[http \"https://h/\"]\n\textraHeader = AUTHORIZATION: basic abc\n[core]\n", "[http \"https://h/\"]\n[core]\n"},
		{"[core]\n\tbare = false\n\turl = https://h/x\n", "[core]\n\tbare = false\n\turl = https://h/x\n"},
	} {
		got, changed := stripGitConfig([]byte(tc.in))
		if string(got) != tc.want || changed != (tc.in != tc.want) {
			t.Errorf("stripGitConfig(%q) = %q, %v; want %q", tc.in, got, changed, tc.want)
		}
	}
}

func TestGitConfigPathWorktree(t *testing.T) {
	dir, common := t.TempDir(), t.TempDir()
	gd := filepath.Join(common, "worktrees", "w")
	if err := os.MkdirAll(gd, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(gd, "commondir"), []byte("../..\n"), 0o600)
	os.WriteFile(filepath.Join(dir, ".git"), []byte("gitdir: "+gd+"\n"), 0o600)
	if got, want := gitConfigPath(dir), filepath.Join(common, "config"); got != want {
		t.Fatalf("gitConfigPath = %q, want %q", got, want)
	}
	if got := gitConfigPath(t.TempDir()); got != "" {
		t.Fatalf("no repository: %q", got)
	}
}

// A withheld value outside a URL cannot be stripped: refused, the file untouched.
func TestStripCheckoutRefusesUnstrippable(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, ".git"), 0o755)
	cfg := "[remote \"origin\"]\n\turl = https://gitlab-ci-token:glcbt-job-token-1234@h/x.git\n[note]\n\tv = glcbt-job-token-1234\n"
	p := filepath.Join(dir, ".git", "config")
	os.WriteFile(p, []byte(cfg), 0o644)
	if _, err := stripCheckout(dir, []string{"glcbt-job-token-1234"}); !errors.Is(err, ErrCheckoutCredential) {
		t.Fatalf("err %v, want ErrCheckoutCredential", err)
	}
	if b, _ := os.ReadFile(p); string(b) != cfg {
		t.Fatal("the configuration changed")
	}
	os.WriteFile(p, []byte(strings.Split(cfg, "[note]")[0]), 0o644)
	g, err := stripCheckout(dir, []string{"glcbt-job-token-1234"})
	if err != nil || g == nil {
		t.Fatalf("strippable: %v %v", g, err)
	}
	if b, _ := os.ReadFile(p); strings.Contains(string(b), "glcbt") {
		t.Fatal("not stripped")
	}
	if err := g.restore(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != strings.Split(cfg, "[note]")[0] {
		t.Fatal("not restored")
	}
}
