package prescript

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// StartError is a script or program that could not be started at all. Reason says why in
// words a CI user can act on — "was not found on PATH", "is not executable", "its interpreter
// /bin/bash is missing" — built from the harness's own argv[0] and file metadata only, never
// from the program's output, so it is safe for a status comment.
type StartError struct {
	Program string // argv[0] as the harness wrote it
	Reason  string
	Err     error
}

func (e *StartError) Error() string { return "start " + filepath.Base(e.Program) + ": " + e.Reason }
func (e *StartError) Unwrap() error { return e.Err }

// DescribeStart turns an exec start (or look-up) failure of argv0, with dir the process's
// working directory, into a StartError. The Go error alone says "no such file or directory"
// both for a missing program and for a missing #! interpreter, the most common first-run
// mistake in a minimal CI image, so the file is inspected to tell them apart.
func DescribeStart(argv0, dir string, err error) *StartError {
	se := &StartError{Program: argv0, Err: err}
	path := argv0
	if !strings.Contains(argv0, "/") {
		if errors.Is(err, exec.ErrNotFound) {
			se.Reason = fmt.Sprintf("%s was not found on PATH (install it in the job, or name it by path)", argv0)
			return se
		}
		if p, lerr := exec.LookPath(argv0); lerr == nil {
			path = p
		}
	} else if !filepath.IsAbs(path) && dir != "" {
		path = filepath.Join(dir, path)
	}
	fi, serr := os.Stat(path)
	switch {
	case serr != nil && errors.Is(serr, fs.ErrNotExist):
		se.Reason = fmt.Sprintf("%s does not exist (paths are relative to the job's working directory)", argv0)
	case serr != nil:
		se.Reason = fmt.Sprintf("%s cannot be inspected: %s", argv0, errText(serr))
	case fi.IsDir():
		se.Reason = fmt.Sprintf("%s is a directory", argv0)
	case errors.Is(err, fs.ErrPermission) || fi.Mode().Perm()&0o111 == 0:
		se.Reason = fmt.Sprintf("%s is not executable (chmod +x it, or run it through its interpreter, e.g. [\"bash\", %q])", argv0, argv0)
	case errors.Is(err, syscall.ENOEXEC):
		se.Reason = fmt.Sprintf("%s is not a program this system can run (no #! line?)", argv0)
	case errors.Is(err, fs.ErrNotExist):
		// The file exists and is executable, yet exec says ENOENT: its #! interpreter (or, for
		// a binary, its dynamic loader) is missing.
		if interp := shebang(path); interp != "" {
			se.Reason = fmt.Sprintf("%s: its interpreter %s is missing", argv0, interp)
		} else {
			se.Reason = fmt.Sprintf("%s: its dynamic loader or a library is missing (a static binary avoids this)", argv0)
		}
	default:
		se.Reason = fmt.Sprintf("%s could not be started: %s", argv0, errText(err))
	}
	return se
}

// shebang returns the interpreter named on path's #! line, "" when there is none.
func shebang(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	if !strings.HasPrefix(line, "#!") {
		return ""
	}
	fields := strings.Fields(strings.TrimPrefix(line, "#!"))
	if len(fields) == 0 {
		return ""
	}
	return fields[0]
}

// errText is the OS's reason without the path Go's error repeats.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err.Error()
	}
	return err.Error()
}
