package acquisition

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
)

// MaxDocumentBytes bounds what Read accepts, so a hostile file cannot exhaust memory.
const MaxDocumentBytes = 1 << 30

// Read decodes one acquisition document strictly: unknown fields, duplicated or non-lowercase
// member names (see CheckKeys), trailing data, a missing or unsupported acquisition_version are
// errors naming the field and the rule.
//
// It decodes in one pass: the top-level object is walked member by member and every list is
// decoded element by element, so the decoder's buffer holds one element at a time rather than
// a second copy of the document, and the version is checked on that same pass (an unsupported
// version stops the decode as soon as it is seen). Only when decoding fails is the version
// probed again, so that a document of another version is reported as such rather than by the
// first field this version does not know. The input buffer is sized from the file when r can
// report its size (an *os.File).
func Read(r io.Reader) (*Acquisition, error) {
	data, err := readDocument(r)
	if err != nil {
		return nil, err
	}
	a, err := decodeDocument(data)
	if err != nil {
		// The error path only: a version error outranks whatever this version's decoder
		// tripped over, and a member-name error outranks a field the decoder could not
		// match (encoding/json matches names case-insensitively; the interchange does not).
		if verr := probeVersion(data); verr != nil {
			return nil, verr
		}
		if json.Valid(data) {
			if kerr := CheckKeys(data); kerr != nil {
				return nil, fmt.Errorf("acquisition: %w", kerr)
			}
		}
		return nil, err
	}
	// Only now is the document known to be valid JSON, which CheckKeys relies on.
	if err := CheckKeys(data); err != nil {
		return nil, fmt.Errorf("acquisition: %w", err)
	}
	return a, nil
}

// readDocument reads at most MaxDocumentBytes (one more byte detects a larger document).
func readDocument(r io.Reader) ([]byte, error) {
	size := int64(bytes.MinRead)
	if st, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
			size = min(fi.Size(), MaxDocumentBytes) + 1
		}
	}
	buf := make([]byte, 0, size)
	lr := io.LimitReader(r, MaxDocumentBytes+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("acquisition: read: %w", err)
		}
	}
	if len(buf) > MaxDocumentBytes {
		return nil, fmt.Errorf("acquisition: document larger than %d bytes", MaxDocumentBytes)
	}
	return buf, nil
}

func versionError(v *int) error {
	if v == nil {
		return errors.New("acquisition: acquisition_version: required")
	}
	if *v != Version {
		return fmt.Errorf("acquisition: acquisition_version: %d is not supported (this build reads %d)", *v, Version)
	}
	return nil
}

// probeVersion reports a missing or unsupported acquisition_version of a document that did not
// decode (nil when the version is fine or the document is not an object at all).
func probeVersion(data []byte) error {
	var probe struct {
		Version *int `json:"acquisition_version"`
	}
	if json.Unmarshal(data, &probe) != nil {
		return nil
	}
	return versionError(probe.Version)
}

// decodeDocument is the strict single-pass decode.
func decodeDocument(data []byte) (*Acquisition, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		if err == nil {
			err = errors.New("the document must be a JSON object")
		}
		return nil, fmt.Errorf("acquisition: not a JSON object: %w", err)
	}
	var a Acquisition
	var version *int
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("acquisition: %w", err)
		}
		name, _ := tok.(string)
		switch name {
		case "acquisition_version":
			version = nil
			err = dec.Decode(&version)
			if err == nil {
				if verr := versionError(version); verr != nil {
					return nil, verr
				}
			}
		case "source":
			err = dec.Decode(&a.Source)
		case "entity":
			err = dec.Decode(&a.Entity)
		case "outcomes":
			err = dec.Decode(&a.Outcomes)
		case "comments":
			a.Comments, err = decodeList[Comment](dec, name)
		case "reviews":
			a.Reviews, err = decodeList[Review](dec, name)
		case "threads":
			a.Threads, err = decodeList[Thread](dec, name)
		case "checks":
			a.Checks, err = decodeList[Check](dec, name)
		case "agent_runs":
			a.AgentRuns, err = decodeList[AgentRun](dec, name)
		case "actors":
			a.Actors, err = decodeList[Actor](dec, name)
		default:
			// The same words encoding/json's DisallowUnknownFields uses.
			return nil, fmt.Errorf("acquisition: json: unknown field %q", name)
		}
		if err != nil {
			return nil, fmt.Errorf("acquisition: %w", err)
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("acquisition: %w", err)
	}
	if len(bytes.TrimSpace(data[dec.InputOffset():])) > 0 {
		return nil, errors.New("acquisition: trailing data after the document")
	}
	if err := versionError(version); err != nil {
		return nil, err
	}
	a.Version = *version
	return &a, nil
}

// decodeList decodes a JSON array (or null, which leaves the list nil as encoding/json would)
// one element at a time.
func decodeList[T any](dec *json.Decoder, name string) ([]T, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok == nil {
		return nil, nil
	}
	if tok != json.Delim('[') {
		return nil, fmt.Errorf("%s: must be an array", name)
	}
	out := []T{}
	for dec.More() {
		var v T
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", name, len(out), err)
		}
		out = append(out, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return out, nil
}

// Write encodes a as indented JSON (the interchange form; not canonical bytes).
func Write(w io.Writer, a *Acquisition) error {
	if a.Version == 0 {
		a.Version = Version
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(a)
}
