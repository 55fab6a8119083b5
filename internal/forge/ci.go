package forge

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"time"

	"github.com/forgectx/forgectx/internal/platform/inputfile"

	"github.com/forgectx/forgectx/internal/snapshot/canon"
)

// MaxEventBytes bounds a CI event payload read for defaults (GitHub caps deliveries at 25 MB).
const MaxEventBytes = 32 << 20

var digits = regexp.MustCompile(`^[1-9][0-9]{0,19}$`)

// IsRunNumber reports whether s is a positive decimal CI run, job or attempt number.
func IsRunNumber(s string) bool { return digits.MatchString(s) }

// LocalReceiptID is the receipt id of a run outside CI (docs/run.md, "Receipts"):
// local-<start as an order key>-<pid>.
func LocalReceiptID(start time.Time) string {
	return fmt.Sprintf("local-%s-%d", canon.OrderKeyOf(start), os.Getpid())
}

// CIReceiptID is <prefix>-<run id>-<attempt> when runID is a run number (attempt defaults to
// 1), else "".
func CIReceiptID(prefix, runID, attempt string) string {
	if !IsRunNumber(runID) {
		return ""
	}
	if !IsRunNumber(attempt) {
		attempt = "1"
	}
	return prefix + "-" + runID + "-" + attempt
}

// ReadEvent reads a CI event payload file: a regular file (internal/platform/inputfile), read up to
// MaxEventBytes.
func ReadEvent(path string) ([]byte, error) {
	f, err := inputfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxEventBytes))
}

// FirstOf returns the first non-empty value.
func FirstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
