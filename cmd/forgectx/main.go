// Command forgectx hands Git-forge context to AI agents in CI.
//
// This package is wiring only: each command file parses its flags into an options struct and
// makes one call into internal/ (or the public pkg/prescript and pkg/cirelay). Commands register themselves with register() from an init function
// in their own file, so adding a command touches no shared list.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/platform/logging"
	"github.com/forgectx/forgectx/internal/platform/version"
)

// Exit codes shared by every command (documented per command in docs/exit-codes.md).
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

// env is what a command may touch: its streams, its environment and the logger. Tests build
// one with buffers instead of the process's own streams.
type env struct {
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	Getenv  func(string) string
	Environ func() []string
	Log     zerolog.Logger
}

// command is one `forgectx <name>` subcommand.
type command struct {
	Name    string
	Summary string // one line for `forgectx --help`
	// Run parses args (everything after the command name) and does the work. A *usageError
	// exits 2 with a hint; an *exitError exits with its code; any other error exits 1.
	Run func(ctx context.Context, e *env, args []string) error
}

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.Name]; dup {
		panic("forgectx: command registered twice: " + c.Name)
	}
	commands[c.Name] = c
}

// usageError is a bad invocation: exit 2 with a one-line hint.
type usageError struct{ msg string }

func (u *usageError) Error() string { return u.msg }

func usagef(format string, a ...any) error { return &usageError{msg: fmt.Sprintf(format, a...)} }

// exitError carries a specific exit code. Err, when non-nil, is printed once as
// "forgectx: <Err>"; a nil Err exits silently (the command already reported).
type exitError struct {
	Code int
	Err  error
}

func (x *exitError) Error() string {
	if x.Err == nil {
		return fmt.Sprintf("exit %d", x.Code)
	}
	return x.Err.Error()
}

func (x *exitError) Unwrap() error { return x.Err }

func main() {
	// Signals are taken before anything else: a SIGTERM or SIGINT at any point cancels the
	// command (watchSignals), and the exit code is then 1 (run).
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan struct{})
	go watchSignals(sigs, cancel, done, os.Stderr, signalGrace, os.Exit)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv, os.Environ)
	close(done)
	signal.Stop(sigs)
	os.Exit(code)
}

// run is main without the process: it parses the global flags, picks the command and maps its
// error to an exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string, environ func() []string) int {
	global := flag.NewFlagSet("forgectx", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	logFormat := global.String("log-format", "text", "log format: text or json")
	logLevel := global.String("log-level", "info", "log level: trace, debug, info, warn, error, disabled")
	help := global.Bool("help", false, "list the commands")
	global.BoolVar(help, "h", false, "list the commands")
	red := newRedactor(environ)
	if err := global.Parse(args); err != nil {
		fmt.Fprintf(stderr, "forgectx: %s\nRun 'forgectx --help' for usage.\n", red.String(err.Error()))
		return exitUsage
	}
	rest := global.Args()
	switch {
	case *help:
		printHelp(stdout)
		return exitOK
	case len(rest) == 0:
		// No command is a usage error: the command list goes to stderr so that stdout stays
		// empty for a caller that captures it.
		printHelp(stderr)
		return exitUsage
	case rest[0] == "help":
		switch {
		case len(rest) == 1:
			printHelp(stdout)
			return exitOK
		case len(rest) > 2:
			fmt.Fprintf(stderr, "forgectx help: takes at most one COMMAND\nRun 'forgectx --help' for usage.\n")
			return exitUsage
		}
		c, ok := commands[rest[1]]
		if !ok {
			fmt.Fprintf(stderr, "forgectx help: unknown command %s\nRun 'forgectx --help' for usage.\n", red.String(fmt.Sprintf("%q", rest[1])))
			return exitUsage
		}
		return run(ctx, []string{c.Name, "--help"}, stdin, stdout, stderr, getenv, environ)
	}
	c, ok := commands[rest[0]]
	if !ok {
		fmt.Fprintf(stderr, "forgectx: unknown command %s\nRun 'forgectx --help' for usage.\n", red.String(fmt.Sprintf("%q", rest[0])))
		return exitUsage
	}
	// Every log event passes the same redaction as the error line below.
	log, err := logging.New(redactingWriter{w: stderr, r: red}, *logFormat, *logLevel)
	if err != nil {
		fmt.Fprintf(stderr, "forgectx: %s\nRun 'forgectx --help' for usage.\n", red.String(err.Error()))
		return exitUsage
	}
	e := &env{Stdin: interruptible(ctx, stdin), Stdout: stdout, Stderr: stderr, Getenv: getenv, Environ: environ, Log: log}
	code := exitCode(redactingWriter{w: stderr, r: red}, c.Name, c.Run(ctx, e, rest[1:]))
	// A command interrupted by a signal never reports success, whatever it made of the
	// cancellation (distill's fail-safe {} included): the documented code is 1.
	if sig := interruptedBy(ctx); sig != nil && code == exitOK {
		fmt.Fprintf(stderr, "forgectx %s: interrupted by %s\n", c.Name, signalName(sig))
		code = exitFailed
	}
	return code
}

// exitCode maps a command's error to its exit code and prints it once. stderr is the
// redacting writer of run: no token shape, secret variable value or control character of an
// error message reaches the terminal.
func exitCode(stderr io.Writer, name string, err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	var u *usageError
	if errors.As(err, &u) {
		fmt.Fprintf(stderr, "forgectx %s: %s\nRun 'forgectx %s --help' for usage.\n", name, u.msg, name)
		return exitUsage
	}
	var x *exitError
	if errors.As(err, &x) {
		if x.Err != nil {
			fmt.Fprintf(stderr, "forgectx: %v\n", x.Err)
		}
		return x.Code
	}
	fmt.Fprintf(stderr, "forgectx: %v\n", err)
	return exitFailed
}

func printHelp(w io.Writer) {
	fmt.Fprintf(w, "forgectx %s: hand Git-forge context to AI agents in CI.\n\n", version.String())
	fmt.Fprintln(w, "Usage: forgectx [--log-format text|json] [--log-level LEVEL] <command> [flags] [args]")
	fmt.Fprintln(w, "\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		fmt.Fprintf(w, "  %-*s  %s\n", width, n, commands[n].Summary)
	}
	fmt.Fprintln(w, "\nRun 'forgectx <command> --help' for a command's flags. Exit codes: 0 ok, 1 failure, 2 usage or configuration error.")
}

// newFlagSet returns a FlagSet for a command that prints its usage to stderr only when asked
// (--help) and leaves error reporting to exitCode, so a bad flag prints one line, not a page.
func newFlagSet(e *env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(e.Stderr, "Usage: forgectx %s\n", synopsis)
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprint(e.Stderr, "\nFlags:\n")
			fs.SetOutput(e.Stderr)
			fs.PrintDefaults()
			fs.SetOutput(io.Discard)
		}
	}
	return fs
}

// parseFlags parses args with fs, turning a flag error into a usage error and --help into
// flag.ErrHelp (exit 0 after printing the usage). FlagSet.Parse calls Usage on every error, not
// only on -help; the usage is therefore silenced during Parse and printed here for -help only,
// so that a bad flag prints the one-line hint of exitCode and not the whole flag list.
func parseFlags(fs *flag.FlagSet, args []string) error {
	usage := fs.Usage
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.Usage = usage
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			if usage != nil {
				usage()
			}
			return flag.ErrHelp
		}
		return usagef("%s", strings.TrimSpace(err.Error()))
	}
	return checkEnvNameFlags(fs)
}

// checkEnvNameFlags applies checkEnvName to every set flag of envNameFlags (each element of a
// repeatable one), so that no command reads a variable a malformed name would select.
func checkEnvNameFlags(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err != nil || !envNameFlags[f.Name] {
			return
		}
		vals := []string{f.Value.String()}
		if l, ok := f.Value.(*stringList); ok {
			vals = *l
		}
		for _, v := range vals {
			if err = checkEnvName(f.Name, v); err != nil {
				return
			}
		}
	})
	return err
}

// stringList is the one repeatable string flag type (--secret-env, --artifacts-dir, …).
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// inputErr is the usage error of an input file flag (internal/platform/inputfile): it names the flag, the
// path and the rule — missing, unreadable, or not a regular file and what it is instead.
func inputErr(flagName string, err error) error {
	if err == nil {
		return nil
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return usagef("%s %s: %v", flagName, pe.Path, pe.Err)
	}
	return usagef("%s: %v", flagName, err)
}
