package reviewrun

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Spec "attach receipt v8 through one inode-checked atomic replacement": the replacement
// happens only over the very file that was read and validated.
func TestReplaceCheckedInode(t *testing.T) {
	write := func(t *testing.T, p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("same file is replaced", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "result.json")
		write(t, p, `{"raw":1}`)
		_, id, err := readRawResult(p, os.Getuid())
		if err != nil {
			t.Fatal(err)
		}
		if err := replaceChecked(p, id, []byte(`{"projected":1}`)); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(p); string(b) != `{"projected":1}` {
			t.Fatalf("got %s", b)
		}
		fi, _ := os.Stat(p)
		if fi.Mode().Perm() != 0o600 {
			t.Fatalf("mode %o", fi.Mode().Perm())
		}
	})
	for name, swap := range map[string]func(t *testing.T, p string){
		"swapped for another inode": func(t *testing.T, p string) {
			q := p + ".new"
			write(t, q, `{"raw":1}`)
			if err := os.Rename(q, p); err != nil {
				t.Fatal(err)
			}
		},
		"rewritten in place": func(t *testing.T, p string) { write(t, p, `{"raw":1,"more":true}`) },
		"removed":            func(t *testing.T, p string) { os.Remove(p) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "result.json")
			write(t, p, `{"raw":1}`)
			_, id, err := readRawResult(p, os.Getuid())
			if err != nil {
				t.Fatal(err)
			}
			swap(t, p)
			if err := replaceChecked(p, id, []byte(`{}`)); !errors.Is(err, errReplaced) {
				t.Fatalf("got %v, want errReplaced", err)
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if e.Name() != "result.json" {
					t.Errorf("temporary file left: %s", e.Name())
				}
			}
		})
	}
	t.Run("symlink and hard link refused", func(t *testing.T) {
		dir := t.TempDir()
		real := filepath.Join(dir, "real.json")
		write(t, real, `{}`)
		link := filepath.Join(dir, "result.json")
		if err := os.Symlink(real, link); err != nil {
			t.Fatal(err)
		}
		if _, _, err := readRawResult(link, os.Getuid()); !errors.Is(err, ErrProjection) {
			t.Fatalf("symlink: %v", err)
		}
		hard := filepath.Join(dir, "hard.json")
		if err := os.Link(real, hard); err != nil {
			t.Fatal(err)
		}
		if _, _, err := readRawResult(hard, os.Getuid()); !errors.Is(err, ErrProjection) {
			t.Fatalf("hard link: %v", err)
		}
	})
}

// The engine's environment: generated names only, plus allowed harness names whose values
// carry no withheld value.
func TestEngineEnvWithholdsCredentials(t *testing.T) {
	s := &session{home: "/h", tmp: "/t", out: "/o", rules: "/r"}
	h := harnessWith([]string{"SAFE", "COPY", "GITLAB_TOKEN", "DEPLOY_KEY"}, []string{"DEPLOY_KEY"})
	env := engineEnv([]string{"SAFE=ok", "COPY=x-glpat-abcdefghijklmnop", "MY_TOKEN_VAR=glpat-abcdefghijklmnop",
		"GITLAB_TOKEN=other-token", "DEPLOY_KEY=hunter22", "UNLISTED=1"}, h, "MY_TOKEN_VAR", s, "/h/.config/forgectx/mcp.json")
	want := []string{EnvMCPConfig + "=/h/.config/forgectx/mcp.json", EnvResultFile + "=/o/result.json", EnvRules + "=/r", "HOME=/h", "LANG=C.UTF-8",
		"PATH=/usr/bin:/bin", "SAFE=ok", "TMPDIR=/t"}
	if len(env) != len(want) {
		t.Fatalf("env %v, want %v", env, want)
	}
	for i := range want {
		if env[i] != want[i] {
			t.Fatalf("env %v, want %v", env, want)
		}
	}
}
