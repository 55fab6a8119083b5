package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/forgectx/forgectx/internal/platform/inputfile"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/platform/safeout"
)

// filterOptions are the flags of `forgectx filter`.
type filterOptions struct {
	Role           string
	MaxBytes       int
	MaxSourceBytes int
	SecretEnv      []string
	Report         string
}

// filterReport is the JSON report: filter_version, status, findings (never source text), and
// the gap code when the input was rejected.
type filterReport struct {
	FilterVersion string           `json:"filter_version"`
	Status        filter.Status    `json:"status"`
	Findings      []filter.Finding `json:"findings"`
	Gap           string           `json:"gap,omitempty"`
}

func init() {
	register(&command{
		Name:    "filter",
		Summary: "run the v1 filter pipeline over stdin (Unicode safety, redaction, injection floor, bounds)",
		Run: func(ctx context.Context, e *env, args []string) error {
			fs := newFlagSet(e, "filter", "filter [--role body|log|display] [--max-bytes N] [--max-source-bytes N] [--secret-env NAME]... [--report FILE] < input > output")
			var o filterOptions
			var names stringList
			fs.StringVar(&o.Role, "role", "body", "bounding rule: body or log (single trailing LF) or display (no LF added)")
			fs.IntVar(&o.MaxBytes, "max-bytes", 0, "emitted byte bound, LF included for body/log (0 = unbounded)")
			fs.IntVar(&o.MaxSourceBytes, "max-source-bytes", 0, "reject input larger than this before decoding, as source_too_large (0 = unbounded)")
			fs.Var(&names, "secret-env", "also redact the value of this environment variable (repeatable); secret-looking names are always registered")
			fs.StringVar(&o.Report, "report", "", "write the JSON report to FILE (default: stderr, one line)")
			if err := parseFlags(fs, args); err != nil {
				return err
			}
			if fs.NArg() > 0 {
				return usagef("takes no arguments (input is read from stdin)")
			}
			switch filter.Role(o.Role) {
			case filter.RoleBody, filter.RoleLog, filter.RoleDisplay:
			default:
				return usagef("--role %q: must be body, log or display", o.Role)
			}
			if o.MaxBytes < 0 || o.MaxSourceBytes < 0 {
				return usagef("--max-bytes and --max-source-bytes must be >= 0")
			}
			// /dev/stdout, /dev/stderr or a FIFO are fine report targets: written through.
			if err := checkOutputFile("--report", o.Report, safeout.Options{Stream: true}); err != nil {
				return err
			}
			o.SecretEnv = names
			return runFilter(ctx, e, o)
		},
	})
}

// maxFilterInput is the ceiling of an unbounded filter's stdin (1 GiB, the acquisition
// document bound).
var maxFilterInput int64 = 1 << 30 // a variable only so that a test can lower it

// runFilter reads stdin (at most max-source-bytes+1 bytes when bounded), applies the pipeline,
// writes the emitted bytes to stdout and the report. Exit 0 for every status; an aborted
// pipeline is an error (exit 1).
func runFilter(ctx context.Context, e *env, o filterOptions) error {
	// Unbounded (--max-source-bytes 0) still has a ceiling: the read fails at
	// maxFilterInput+1 bytes, naming it, instead of growing with an endless stdin.
	in := io.Reader(inputfile.NewReader(e.Stdin, "stdin", maxFilterInput))
	if o.MaxSourceBytes > 0 {
		// one byte over the bound is enough to know it is too large; never read the rest
		in = io.LimitReader(e.Stdin, int64(o.MaxSourceBytes)+1)
	}
	src, err := readInput(e.Stdin, in, o.MaxSourceBytes)
	if err != nil {
		return fmt.Errorf("filter: reading stdin: %w", err)
	}
	var environ []string
	if e.Environ != nil {
		environ = e.Environ()
	}
	p := filter.New(filter.SecretEnvValues(environ, o.SecretEnv))
	res, err := p.Apply(ctx, src, filter.Options{Role: filter.Role(o.Role), MaxBytes: o.MaxBytes, MaxSourceBytes: o.MaxSourceBytes})
	if err != nil {
		return err // "filter: pipeline aborted: …" (filter.ErrAborted), never any source text
	}
	if _, err := e.Stdout.Write(res.Output); err != nil {
		return fmt.Errorf("filter: writing stdout: %w", err)
	}
	rep := filterReport{FilterVersion: filter.Version, Status: res.Status, Findings: res.Findings, Gap: res.Gap}
	if rep.Findings == nil {
		rep.Findings = []filter.Finding{}
	}
	line, err := json.Marshal(rep)
	if err != nil {
		return fmt.Errorf("filter: encoding report: %w", err)
	}
	line = append(line, '\n')
	if o.Report == "" {
		_, err = e.Stderr.Write(line)
	} else {
		err = safeout.WriteFile(o.Report, line, safeout.Options{Stream: true})
	}
	if err != nil {
		return fmt.Errorf("filter: writing report: %w", err)
	}
	e.Log.Debug().Str("status", string(res.Status)).Int("findings", len(res.Findings)).
		Int("bytes_in", len(src)).Int("bytes_out", len(res.Output)).Msg("filter applied")
	return nil
}

// readInput reads all of in. When stdin is a regular file (input redirected from a file) its
// size is known, so the buffer is allocated once at that size instead of growing by repeated
// copies: peak memory stays near the input's size plus the pipeline's own copies.
func readInput(stdin, in io.Reader, maxSource int) ([]byte, error) {
	f, ok := stdin.(*os.File)
	if !ok {
		return readChunks(in)
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() <= 0 {
		return readChunks(in)
	}
	size := st.Size()
	if maxSource > 0 && size > int64(maxSource)+1 {
		size = int64(maxSource) + 1
	}
	buf := make([]byte, size+1) // one byte more than the file: a file that grew is read on
	n, err := io.ReadFull(in, buf)
	switch {
	case err == io.ErrUnexpectedEOF || err == io.EOF:
		return buf[:n], nil
	case err != nil:
		return nil, err
	}
	rest, err := io.ReadAll(in) // the file grew while being read (or a bound cut it)
	return append(buf, rest...), err
}

// readChunks reads in (a pipe: size unknown) in 1 MiB chunks and joins them into one buffer
// of exactly the input's size, instead of growing one buffer by repeated reallocation (which
// leaves up to twice the input in garbage at its peak).
func readChunks(in io.Reader) ([]byte, error) {
	const chunk = 1 << 20
	var chunks [][]byte
	total := 0
	for {
		b := make([]byte, chunk)
		n, err := io.ReadFull(in, b)
		if n > 0 {
			chunks = append(chunks, b[:n])
			total += n
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	out := make([]byte, 0, total)
	for k, c := range chunks {
		out = append(out, c...)
		chunks[k] = nil
	}
	if total >= 16<<20 {
		// Hand the chunks back to the OS before the pipeline makes its own copy: 1 MiB spans
		// cannot serve the pipeline's one large allocation, so without this they stay
		// resident next to it. The heap holds only pointer-free byte slices: the collection
		// is cheap, and the peak stays near twice the input instead of three times.
		debug.FreeOSMemory()
	}
	return out, nil
}
