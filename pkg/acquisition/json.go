package acquisition

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// MaxDocumentBytes bounds what Read accepts, so a hostile file cannot exhaust memory.
const MaxDocumentBytes = 1 << 30

// Read decodes one acquisition document strictly: unknown fields, duplicated or non-lowercase
// member names (see CheckKeys), trailing data, a missing or unsupported acquisition_version are
// errors naming the field and the rule.
func Read(r io.Reader) (*Acquisition, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxDocumentBytes+1))
	if err != nil {
		return nil, fmt.Errorf("acquisition: read: %w", err)
	}
	if len(data) > MaxDocumentBytes {
		return nil, fmt.Errorf("acquisition: document larger than %d bytes", MaxDocumentBytes)
	}
	var probe struct {
		Version *int `json:"acquisition_version"`
	}
	pdec := json.NewDecoder(bytes.NewReader(data))
	if err := pdec.Decode(&probe); err != nil {
		return nil, fmt.Errorf("acquisition: not a JSON object: %w", err)
	}
	if len(bytes.TrimSpace(data[pdec.InputOffset():])) > 0 {
		return nil, errors.New("acquisition: trailing data after the document")
	}
	if probe.Version == nil {
		return nil, errors.New("acquisition: acquisition_version: required")
	}
	if *probe.Version != Version {
		return nil, fmt.Errorf("acquisition: acquisition_version: %d is not supported (this build reads %d)", *probe.Version, Version)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var a Acquisition
	if err := dec.Decode(&a); err != nil {
		return nil, fmt.Errorf("acquisition: %w", err)
	}
	if dec.More() {
		return nil, errors.New("acquisition: trailing data after the document")
	}
	// Only now is the document known to be valid JSON, which CheckKeys relies on.
	if err := CheckKeys(data); err != nil {
		return nil, fmt.Errorf("acquisition: %w", err)
	}
	return &a, nil
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
