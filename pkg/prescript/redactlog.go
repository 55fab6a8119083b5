package prescript

import (
	"bytes"
	"io"
	"sync"
)

// MaxLogLine bounds a buffered job-log line in RedactingLog; a longer line is redacted and
// written in pieces.
const MaxLogLine = 64 << 10

// RedactingLog copies a process's stream to the job log line by line through the redaction
// pass (literal run credentials plus the shared secret-pattern scanner), so a script that
// prints a token or a registered secret does not put it in the log. Run uses one per stream
// for the live log; `forgectx run` wraps its agent and post-script streams the same way.
// Writes never fail: the job log is best effort and must not break the process.
type RedactingLog struct {
	mu  sync.Mutex
	to  io.Writer
	r   Redactor
	buf []byte
}

// NewRedactingLog returns a RedactingLog writing to to (nil discards).
func NewRedactingLog(to io.Writer, r Redactor) *RedactingLog {
	return &RedactingLog{to: to, r: r}
}

// Write buffers p and emits every complete line, redacted.
func (l *RedactingLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		l.emit(l.buf[:i+1])
		l.buf = l.buf[i+1:]
	}
	if len(l.buf) > MaxLogLine {
		l.emit(l.buf)
		l.buf = nil
	}
	return len(p), nil
}

// Flush writes a final unterminated line.
func (l *RedactingLog) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.emit(l.buf)
	l.buf = nil
}

func (l *RedactingLog) emit(b []byte) {
	if l.to == nil || len(b) == 0 {
		return
	}
	// This runs on exec's copying goroutine, where a panic would kill forgectx before any
	// cleanup: a line the redaction pass cannot handle is withheld instead (fail closed).
	defer func() {
		if recover() != nil {
			_, _ = io.WriteString(l.to, "[forgectx: line withheld: redaction failed]\n")
		}
	}()
	s := string(b)
	if l.r != nil {
		s, _ = l.r.Redact(s)
	}
	_, _ = io.WriteString(l.to, s)
}

// writer is l as the destination of a stream copy, or nil when l discards.
func (l *RedactingLog) writer() io.Writer {
	if l.to == nil {
		return nil
	}
	return l
}
