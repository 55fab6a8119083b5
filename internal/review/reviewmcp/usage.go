package reviewmcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/forgectx/forgectx/internal/platform/safeout"
)

// usageSchema is the schema_version of the usage file.
const usageSchema = "forgectx.mcp-usage/v1"

// maxUsageBytes bounds the usage file read.
const maxUsageBytes = 4096

// Usage is the fixed set of tool-use counters the server records for receipt v8. A call is
// counted under its tool and action only when it succeeded; every call that was refused
// (unknown tool, invalid arguments, a rejected handle, an oversized answer) counts in
// Rejected instead. Context calls never count as evidence calls.
type Usage struct {
	SchemaVersion    string `json:"schema_version"`
	Mode             Mode   `json:"mode"`
	EvidenceSummary  int    `json:"evidence_summary"`
	EvidenceList     int    `json:"evidence_list"`
	EvidenceGet      int    `json:"evidence_get"`
	EvidenceSearch   int    `json:"evidence_search"`
	EvidenceCoverage int    `json:"evidence_coverage"`
	ContextList      int    `json:"context_list"`
	ContextGet       int    `json:"context_get"`
	Rejected         int    `json:"rejected"`
}

// SummaryCalled reports whether at least one successful ocr_toolkit_evidence(action=summary)
// call was made, which a review run requires.
func (u Usage) SummaryCalled() bool { return u.EvidenceSummary > 0 }

// errUsage wraps every usage-file read or write failure.
var errUsage = errors.New("reviewmcp: usage file")

// writeUsage replaces path atomically with u through internal/platform/safeout (a 0600 temporary file
// beside it, fsync, rename; a non-regular target refused), so a reader sees either the
// previous or the new counts.
func writeUsage(path string, u Usage) error {
	b, err := json.Marshal(u)
	if err != nil {
		return fmt.Errorf("%w: encode: %v", errUsage, err)
	}
	if err := safeout.WriteFile(path, append(b, '\n'), safeout.Options{Perm: 0o600}); err != nil {
		return fmt.Errorf("%w: write: %v", errUsage, err)
	}
	return nil
}

// ReadUsage reads a usage file strictly: a regular file (not a symlink) owned by this user
// with mode 0600, at most 4 KiB, exactly the Usage fields with this schema_version.
func ReadUsage(path string) (Usage, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return Usage{}, fmt.Errorf("%w: open: %v", errUsage, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Usage{}, fmt.Errorf("%w: stat: %v", errUsage, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.Mode().IsRegular():
		return Usage{}, fmt.Errorf("%w: not a regular file", errUsage)
	case !ok || int(st.Uid) != os.Getuid():
		return Usage{}, fmt.Errorf("%w: not owned by this user", errUsage)
	case fi.Mode().Perm() != 0o600:
		return Usage{}, fmt.Errorf("%w: mode %04o, must be 0600", errUsage, fi.Mode().Perm())
	}
	b, err := io.ReadAll(io.LimitReader(f, maxUsageBytes+1))
	if err != nil || len(b) > maxUsageBytes {
		return Usage{}, fmt.Errorf("%w: unreadable or over %d bytes", errUsage, maxUsageBytes)
	}
	var u Usage
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&u); err != nil {
		return Usage{}, fmt.Errorf("%w: decode: not a usage document", errUsage)
	}
	if dec.More() {
		return Usage{}, fmt.Errorf("%w: trailing data", errUsage)
	}
	if u.SchemaVersion != usageSchema {
		return Usage{}, fmt.Errorf("%w: schema_version: must be %s", errUsage, usageSchema)
	}
	if u.Mode != ModeConstrained && u.Mode != ModeEnriched {
		return Usage{}, fmt.Errorf("%w: mode: must be constrained or enriched", errUsage)
	}
	for _, n := range []int{u.EvidenceSummary, u.EvidenceList, u.EvidenceGet, u.EvidenceSearch, u.EvidenceCoverage, u.ContextList, u.ContextGet, u.Rejected} {
		if n < 0 {
			return Usage{}, fmt.Errorf("%w: a counter is negative", errUsage)
		}
	}
	if u.Mode == ModeConstrained && (u.ContextList != 0 || u.ContextGet != 0) {
		return Usage{}, fmt.Errorf("%w: context counters must be 0 in constrained mode", errUsage)
	}
	return u, nil
}
