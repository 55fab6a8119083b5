package acquisition

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// maxDocumentBytes bounds what Read accepts, so a hostile file cannot exhaust memory.
const maxDocumentBytes = 1 << 30

// Read decodes one acquisition document strictly: unknown fields, duplicated or non-lowercase
// member names (see CheckKeys), trailing data, a missing or unsupported acquisition_version are
// errors naming the field and the rule.
//
// It decodes in one pass: the top-level object is walked member by member and every list is
// decoded element by element, so the decoder's buffer holds one element at a time, and the
// version is checked on that same pass (an unsupported version stops the decode as soon as it
// is seen). When r can seek (an *os.File, a bytes or strings reader) the document is streamed:
// the decoder reads r through the member-name check (CheckKeys on the stream), so the document
// is never held whole besides what it decodes to; only when decoding fails is it read again,
// whole, to find the error a whole-document check reports (a version error outranks whatever
// this version's decoder tripped over, a member-name error a field the decoder could not
// match). Other readers (a pipe on stdin) are streamed the same way while a copy of what was
// read goes to an unlinked temporary file, which only a failed decode reads back; so memory
// holds one element at a time whatever the reader, the bound stops the read at
// maxDocumentBytes+1 bytes, and bytes that are not JSON fail at the first of them. When no
// temporary file can be made, the reader is read whole first. All ways give the same result
// and the same errors.
func Read(r io.Reader) (*Acquisition, error) {
	if rs, ok := r.(io.ReadSeeker); ok {
		if start, err := rs.Seek(0, io.SeekCurrent); err == nil {
			return readStream(rs, start)
		}
	}
	if spool, err := os.CreateTemp("", "forgectx-acquisition-*"); err == nil {
		_ = os.Remove(spool.Name())
		defer spool.Close()
		return readSpooled(r, spool)
	}
	data, err := readDocument(r)
	if err != nil {
		return nil, err
	}
	a, err := decodeDocument(bytes.NewReader(data))
	if err != nil {
		return nil, decodeFailure(data, err)
	}
	// Only now is the document known to be valid JSON, which CheckKeys relies on.
	if err := CheckKeys(data); err != nil {
		return nil, fmt.Errorf("acquisition: %w", err)
	}
	return a, nil
}

// decodeFailure is the error of a document that did not decode: a version error outranks
// whatever this version's decoder tripped over, and a member-name error outranks a field the
// decoder could not match (encoding/json matches names case-insensitively; the interchange
// does not).
func decodeFailure(data []byte, err error) error {
	if verr := probeVersion(data); verr != nil {
		return verr
	}
	if json.Valid(data) {
		if kerr := CheckKeys(data); kerr != nil {
			return fmt.Errorf("acquisition: %w", kerr)
		}
	}
	return err
}

// countingReader counts the bytes read and keeps the first read error other than EOF.
type countingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF && c.err == nil {
		c.err = err
	}
	return n, err
}

// readStream decodes the document from rs (positioned at start) without holding it whole. A
// regular file larger than the bound is refused before any read, and a syntax error is final
// at once (the document cannot be valid JSON, so no other error outranks it): only another
// decode error reads the document whole to rank it.
func readStream(rs io.ReadSeeker, start int64) (*Acquisition, error) {
	if st, ok := rs.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size()-start > maxDocumentBytes {
			return nil, fmt.Errorf("acquisition: document larger than %d bytes", maxDocumentBytes)
		}
	}
	return decodeBounded(rs, nil, func(_ *countingReader, err error) (*Acquisition, error) {
		// The error path only: read the document whole to rank the error as Read does.
		if _, serr := rs.Seek(start, io.SeekStart); serr != nil {
			return nil, fmt.Errorf("acquisition: read: %w", serr)
		}
		data, rerr := readDocument(rs)
		if rerr != nil {
			return nil, rerr
		}
		return nil, decodeFailure(data, err)
	})
}

// readSpooled decodes the document from the unseekable r in one pass, copying what it reads to
// spool: a syntax error is final at once (the whole document cannot be valid JSON, so no other
// error outranks it); any other decode error reads the rest of r, still bounded, into spool and
// ranks the error from there as readStream does.
func readSpooled(r io.Reader, spool *os.File) (*Acquisition, error) {
	return decodeBounded(r, spool, func(cr *countingReader, err error) (*Acquisition, error) {
		if _, cerr := io.Copy(spool, cr); cerr != nil {
			return nil, fmt.Errorf("acquisition: read: %w", cerr)
		}
		if cr.n > maxDocumentBytes {
			return nil, fmt.Errorf("acquisition: document larger than %d bytes", maxDocumentBytes)
		}
		if _, serr := spool.Seek(0, io.SeekStart); serr != nil {
			return nil, fmt.Errorf("acquisition: read: %w", serr)
		}
		return readStream(spool, 0)
	})
}

// decodeBounded decodes one document from r, bounded to maxDocumentBytes, copying what it
// reads to spool when spool is not nil. The outcome is ranked the same way for every caller:
// a read error, then a document too large, then a syntax error (final: no other error
// outranks it), then any other decode error, which rank ranks from the whole document, then a
// duplicate or otherwise refused key.
func decodeBounded(r io.Reader, spool io.Writer, rank func(cr *countingReader, err error) (*Acquisition, error)) (*Acquisition, error) {
	var keys keyScanner
	cr := &countingReader{r: io.LimitReader(r, maxDocumentBytes+1)}
	var src io.Reader = io.TeeReader(cr, &keys)
	if spool != nil {
		src = io.TeeReader(src, spool)
	}
	a, err := decodeDocument(src)
	var syntax *json.SyntaxError
	switch {
	case cr.err != nil:
		return nil, fmt.Errorf("acquisition: read: %w", cr.err)
	case cr.n > maxDocumentBytes:
		return nil, fmt.Errorf("acquisition: document larger than %d bytes", maxDocumentBytes)
	case err != nil && errors.As(err, &syntax):
		return nil, err
	case err != nil:
		return rank(cr, err)
	case keys.err != nil:
		return nil, fmt.Errorf("acquisition: %w", keys.err)
	}
	return a, nil
}

// readDocument reads at most maxDocumentBytes (one more byte detects a larger document).
func readDocument(r io.Reader) ([]byte, error) {
	size := int64(bytes.MinRead)
	if st, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
			size = min(fi.Size(), maxDocumentBytes) + 1
		}
	}
	buf := make([]byte, 0, size)
	lr := io.LimitReader(r, maxDocumentBytes+1)
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
	if len(buf) > maxDocumentBytes {
		return nil, fmt.Errorf("acquisition: document larger than %d bytes", maxDocumentBytes)
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

// memberErr names the member (and the field inside it) of a wrong-typed value: encoding/json
// names only the Go field, or nothing for a top-level value.
func memberErr(member string, err error) error {
	var te *json.UnmarshalTypeError
	if err == nil || !errors.As(err, &te) {
		return err
	}
	path := member
	if te.Field != "" {
		path += "." + te.Field
	}
	return fmt.Errorf("%s: %w", path, err)
}

// decodeDocument is the strict single-pass decode of the document r holds; it reads r to its
// end (the trailing-data check).
func decodeDocument(r io.Reader) (*Acquisition, error) {
	dec := json.NewDecoder(r)
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
			err = memberErr(name, dec.Decode(&version))
			if err == nil {
				if verr := versionError(version); verr != nil {
					return nil, verr
				}
			}
		case "source":
			err = memberErr(name, dec.Decode(&a.Source))
		case "entity":
			err = memberErr(name, dec.Decode(&a.Entity))
		case "outcomes":
			err = memberErr(name, dec.Decode(&a.Outcomes))
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
	if trailing, err := nonSpaceAfter(io.MultiReader(dec.Buffered(), r)); err != nil || trailing {
		return nil, errors.New("acquisition: trailing data after the document")
	}
	if err := versionError(version); err != nil {
		return nil, err
	}
	a.Version = *version
	return &a, nil
}

// nonSpaceAfter reads r to its end and reports whether it holds anything but JSON whitespace.
func nonSpaceAfter(r io.Reader) (bool, error) {
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		if len(bytes.TrimLeft(buf[:n], " \t\r\n")) > 0 {
			return true, nil
		}
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
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
