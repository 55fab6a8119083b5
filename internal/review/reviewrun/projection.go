package reviewrun

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/forgectx/forgectx/internal/review/reviewpub"
	"github.com/forgectx/forgectx/internal/review/reviewresult"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
)

// ProjectionSchema is the file the run writes over the engine's raw result: the safe
// publication projection plus receipt v8. Posting reads only this file, back through
// ParseProjection.
const ProjectionSchema = "forgectx.review-projection/v1"

// Projection is the posting boundary: the DLP-projected result (reviewpub's private-retention
// projection: every publication sink passed every detector, private metadata sanitized), the
// DLP signal counts and the receipt.
type Projection struct {
	SchemaVersion string               `json:"schema_version"`
	Result        *reviewresult.Result `json:"result"`
	Signal        reviewpub.Signal     `json:"dlp_signal"`
	Receipt       *Receipt             `json:"receipt"`
}

// ErrProjection wraps every failure of the raw result read, the replacement or the read-back.
var ErrProjection = errors.New("reviewrun: result projection failed")

// fileID is the identity of the raw result file the engine wrote, fixed when it is first
// opened: the replacement must replace exactly that file.
type fileID struct {
	dev, ino uint64
	size     int64
}

// readRawResult opens the engine's result file without following a symlink, requires a
// regular single-link file of owner (the engine's UID) within the format's bound, and returns its bytes and
// identity.
func readRawResult(path string, owner int) ([]byte, fileID, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fileID{}, fmt.Errorf("%w: result file: %v", ErrProjection, errors.Unwrap(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fileID{}, fmt.Errorf("%w: result file: stat", ErrProjection)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.Mode().IsRegular():
		return nil, fileID{}, fmt.Errorf("%w: result file: not a regular file", ErrProjection)
	case !ok || int(st.Uid) != owner || st.Nlink != 1:
		return nil, fileID{}, fmt.Errorf("%w: result file: must be the engine's, with one link", ErrProjection)
	case fi.Size() > reviewresult.MaxFileBytes:
		return nil, fileID{}, fmt.Errorf("%w: result file: over %d bytes", ErrProjection, reviewresult.MaxFileBytes)
	}
	b, err := io.ReadAll(io.LimitReader(f, reviewresult.MaxFileBytes+1))
	if err != nil || int64(len(b)) != fi.Size() {
		return nil, fileID{}, fmt.Errorf("%w: result file: changed while read", ErrProjection)
	}
	return b, fileID{dev: uint64(st.Dev), ino: st.Ino, size: fi.Size()}, nil
}

// replaceChecked atomically replaces path with data — a fresh O_EXCL 0600 file in the same
// directory, fsynced — only if path is still the file identified by want (same device, inode
// and size: nobody swapped or rewrote the raw result since it was validated), then fsyncs the
// directory. One replacement attaches the projection and the receipt together.
func replaceChecked(path string, want fileID, data []byte) error {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return fmt.Errorf("%w: %v", ErrProjection, err)
	}
	dir := filepath.Dir(path)
	tmp := filepath.Join(dir, ".projection-"+hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("%w: create: %v", ErrProjection, errors.Unwrap(err))
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = checkSame(path, want)
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("%w: replace: %w", ErrProjection, werr)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

var errReplaced = errors.New("the raw result file was replaced or rewritten after validation")

func checkSame(path string, want fileID) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return errReplaced
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || !fi.Mode().IsRegular() || uint64(st.Dev) != want.dev || st.Ino != want.ino || fi.Size() != want.size {
		return errReplaced
	}
	return nil
}

// encodeProjection validates the receipt and returns the projection's canonical bytes.
func encodeProjection(p *Projection) ([]byte, error) {
	if p.Receipt == nil || p.Result == nil {
		return nil, fmt.Errorf("%w: result and receipt are required", ErrProjection)
	}
	if err := p.Receipt.Validate(); err != nil {
		return nil, err
	}
	if _, err := reviewresult.Encode(p.Result); err != nil {
		return nil, fmt.Errorf("%w: projected result: %w", ErrProjection, err)
	}
	b, err := canon.JSON(p)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProjection, err)
	}
	return b, nil
}

// ParseProjection reads a projection back strictly: unknown fields fail, the result passes
// the result format's own decoder, the receipt ParseReceipt.
func ParseProjection(b []byte) (*Projection, error) {
	var raw struct {
		SchemaVersion string          `json:"schema_version"`
		Result        json.RawMessage `json:"result"`
		Signal        json.RawMessage `json:"dlp_signal"`
		Receipt       json.RawMessage `json:"receipt"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil || dec.More() {
		return nil, fmt.Errorf("%w: not a projection document", ErrProjection)
	}
	if raw.SchemaVersion != ProjectionSchema {
		return nil, fmt.Errorf("%w: schema_version: must be %s", ErrProjection, ProjectionSchema)
	}
	res, err := reviewresult.Decode(raw.Result)
	if err != nil {
		return nil, fmt.Errorf("%w: result: %w", ErrProjection, err)
	}
	rc, err := ParseReceipt(raw.Receipt)
	if err != nil {
		return nil, err
	}
	var sig reviewpub.Signal
	sd := json.NewDecoder(bytes.NewReader(raw.Signal))
	sd.DisallowUnknownFields()
	if err := sd.Decode(&sig); err != nil || sig.SchemaVersion != reviewpub.SignalSchema || string(sig.Result) != rc.PublicationDLP.Result {
		return nil, fmt.Errorf("%w: dlp_signal", ErrProjection)
	}
	return &Projection{SchemaVersion: raw.SchemaVersion, Result: res, Signal: sig, Receipt: rc}, nil
}
