package acquisition

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Read is strict: unknown fields, trailing data and unsupported versions name the field and
// the rule.
func TestReadRejectsWhatTheInterchangeDoesNotAllow(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`{}`, "acquisition_version: required"},
		{`{"acquisition_version":2}`, "acquisition_version: 2 is not supported"},
		{`{"acquisition_version":1,"extra":1}`, `unknown field "extra"`},
		{`{"acquisition_version":1} {}`, "trailing data"},
		{`[1]`, "not a JSON object"},
		{`{"acquisition_version":1,"source":{"forge":"github","forge":"gitlab"}}`, `member "forge" at byte 52: duplicated`},
		{`{"acquisition_version":1,"source":{"forge":"github","FORGE":"gitlab"}}`, "must be lowercase"},
		{`{"acquisition_version":1,"source":{"\u0066orge":"github","forge":"gitlab"}}`, `member "forge"`},
		{`{"acquisition_version":1,"source":{"Forge":"github"}}`, "must be lowercase"},
		{`{"acquisition_version":1,"acquisition_version":1}`, "duplicated"},
		{`{"acquisition_version":1,"comments":[{"id":"a","body":"{\"id\":1,\"id\":2}"},{"id":"b"}]}`, ""},
		{`{"acquisition_version":1,"checks":[{"log":{"outcome":"fetched","content_base64":"!!"}}]}`, "illegal base64"},
	} {
		_, err := Read(strings.NewReader(tc.doc))
		if tc.want == "" {
			if err != nil {
				t.Errorf("Read(%s) = %v, want no error (member names inside string values are content)", tc.doc, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Read(%s) = %v, want %q", tc.doc, err, tc.want)
		}
	}
}

// The interchange round-trips: Write then Read gives the same model.
func TestWriteReadRoundTrip(t *testing.T) {
	for _, name := range fixtureNames(t) {
		b, _ := os.ReadFile(name)
		a, err := Read(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var buf bytes.Buffer
		if err := Write(&buf, a); err != nil {
			t.Fatal(err)
		}
		c, err := Read(&buf)
		if err != nil {
			t.Fatal(err)
		}
		var b1, b2 bytes.Buffer
		Write(&b1, a)
		Write(&b2, c)
		if !bytes.Equal(b1.Bytes(), b2.Bytes()) {
			t.Fatalf("%s: round trip changed the document", name)
		}
	}
}

func fixtureNames(t testing.TB) []string {
	m, err := filepath.Glob("../../../test/fixtures/acquisition/*/acquisition.json")
	if err != nil || len(m) == 0 {
		t.Fatalf("no acquisition fixtures: %v", err)
	}
	return m
}

// FuzzRead: the reader of untrusted acquisition files never panics, and whatever it accepts
// writes and reads back to the same document.
func FuzzRead(f *testing.F) {
	for _, name := range fixtureNames(f) {
		b, _ := os.ReadFile(name)
		f.Add(b)
	}
	f.Add([]byte(`{"acquisition_version":1}`))
	f.Add([]byte(`{"acquisition_version":1,"entity":{"author":{"id":null,"login":null}},"outcomes":{"comments":[{"code":"fetch_failed","count":1}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		var b1 bytes.Buffer
		if err := Write(&b1, a); err != nil {
			t.Fatalf("Write of an accepted document failed: %v", err)
		}
		c, err := Read(bytes.NewReader(b1.Bytes()))
		if err != nil {
			t.Fatalf("re-read of a written document failed: %v", err)
		}
		var b2 bytes.Buffer
		Write(&b2, c)
		if !bytes.Equal(b1.Bytes(), b2.Bytes()) {
			t.Fatal("write/read is not stable")
		}
	})
}

// The single-pass decoder decodes exactly what a whole-document strict decode does, for every
// fixture (lists, nulls, nested objects, base64 logs).
func TestReadEqualsWholeDocumentDecode(t *testing.T) {
	docs := []string{`{"acquisition_version":1,"comments":null,"source":{"forge":"github"}}`}
	for _, name := range fixtureNames(t) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	for i, doc := range docs {
		got, err := Read(strings.NewReader(doc))
		if err != nil {
			t.Fatalf("doc %d: %v", i, err)
		}
		dec := json.NewDecoder(strings.NewReader(doc))
		dec.DisallowUnknownFields()
		var want Acquisition
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("doc %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, &want) {
			t.Fatalf("doc %d: single-pass decode differs from the whole-document decode", i)
		}
	}
	if _, err := Read(strings.NewReader(`{"acquisition_version":null}`)); err == nil || !strings.Contains(err.Error(), "acquisition_version: required") {
		t.Fatalf("null version: %v", err)
	}
	if _, err := Read(strings.NewReader(`{"acquisition_version":1,"comments":[{"id":"a","nope":1}],"acquisition_version":2}`)); err == nil || !strings.Contains(err.Error(), "2 is not supported") {
		t.Fatalf("a later unsupported version must outrank the unknown field: %v", err)
	}
	if _, err := Read(strings.NewReader(`{"acquisition_version":1} ]`)); err == nil || !strings.Contains(err.Error(), "trailing data") {
		t.Fatalf("trailing bracket: %v", err)
	}
}

// onlyReader hides a reader's Seek and Stat, so Read takes its read-whole path.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// Streaming (a seekable reader) and reading whole (any other reader) decode to the same value
// and fail with the same error, for valid documents and for each kind of bad one.
func TestReadStreamedEqualsReadWhole(t *testing.T) {
	docs := []string{
		`{}`, `{"acquisition_version":2}`, `{"acquisition_version":1,"extra":1}`, `{"acquisition_version":1} {}`,
		`{"acquisition_version":1}  ` + "\n", `[1]`, `{"acquisition_version":1,"source":{"forge":"github","forge":"gitlab"}}`,
		`{"acquisition_version":1,"source":{"\u0066orge":"github","forge":"gitlab"}}`, `{"acquisition_version":1,"Source":{}}`,
		`{"acquisition_version":1,"comments":[{"id":"a","body":"{\"id\":1,\"id\":2}"},{"id":"b"}]}`,
		`{"acquisition_version":1,"comments":[{"id":"a","nope":1}],"acquisition_version":2}`, `{"acquisition_version":1,"comments":[`,
		`{"acquisition_version":1,"comments":[{"id":"a"}],"comments":[]}`,
	}
	for _, name := range fixtureNames(t) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	for i, doc := range docs {
		streamed, serr := Read(strings.NewReader(doc))
		whole, werr := Read(onlyReader{strings.NewReader(doc)})
		if fmt.Sprint(serr) != fmt.Sprint(werr) {
			t.Fatalf("doc %d: streamed error %v, whole error %v", i, serr, werr)
		}
		if !reflect.DeepEqual(streamed, whole) {
			t.Fatalf("doc %d: streamed and whole decodes differ", i)
		}
	}
}

// The streaming member-name check gives CheckKeys' verdict wherever the document is split
// (a name, an escape or a string value cut across two writes).
func TestKeyScannerAnySplit(t *testing.T) {
	for _, doc := range []string{
		`{"acquisition_version":1,"source":{"forge":"github","forge":"gitlab"}}`,
		`{"a":{"b\u0062":1,"bb":2}}`, `{"a":"x\"y","a":1}`, `{"ok":[{"k":"\\"},{"k":"v"}],"Z":1}`, `{"a":1,"b":[1,{"c":2}],"d":"e"}`,
	} {
		want := fmt.Sprint(CheckKeys([]byte(doc)))
		for cut := 0; cut <= len(doc); cut++ {
			var k keyScanner
			k.Write([]byte(doc[:cut]))
			k.Write([]byte(doc[cut:]))
			if got := fmt.Sprint(k.err); got != want {
				t.Fatalf("%s cut at %d: %s, want %s", doc, cut, got, want)
			}
		}
	}
}

// Long lists decode to exactly what the whole-document decode gives, and the first bad
// element in document order is the one reported, whatever comes after it (a later syntax
// error, another unknown field).
func TestListDecodeKeepsOrderAndFirstError(t *testing.T) {
	const k = 512 // a list long enough that its bad elements sit far apart
	comments := func(n int, bad map[int]string) string {
		var b strings.Builder
		b.WriteString(`{"acquisition_version":1,"comments":[`)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			if s, ok := bad[i]; ok {
				b.WriteString(s)
				continue
			}
			fmt.Fprintf(&b, `{"id":"%d","created_at":"2026-01-01T00:00:00Z","body":"c%d"}`, i+1, i)
		}
		b.WriteString(`]}`)
		return b.String()
	}
	n := 3*k + 7
	doc := comments(n, nil)
	got, err := Read(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.DisallowUnknownFields()
	var want Acquisition
	if err := dec.Decode(&want); err != nil {
		t.Fatal(err)
	}
	if len(got.Comments) != n || !reflect.DeepEqual(got, &want) {
		t.Fatalf("the element-by-element decode of %d comments differs from the whole-document decode", n)
	}
	for _, c := range []struct {
		bad  map[int]string
		want string
	}{
		// a type error outranks a later syntax error
		{map[int]string{k + 3: `{"id":7}`, 2*k + 1: `{"id":}`}, fmt.Sprintf("comments[%d]: json: cannot unmarshal number", k+3)},
		// an unknown field outranks a later one
		{map[int]string{k - 1: `{"id":"x","nope":1}`, k: `{"id":"y","nope":1}`}, fmt.Sprintf("comments[%d]: json: unknown field \"nope\"", k-1)},
		// a syntax error with no earlier bad element is reported at its own index
		{map[int]string{2*k + 1: `{"id":}`}, fmt.Sprintf("comments[%d]: invalid character", 2*k+1)},
	} {
		for _, r := range []func(string) io.Reader{
			func(s string) io.Reader { return strings.NewReader(s) },
			func(s string) io.Reader { return onlyReader{strings.NewReader(s)} },
		} {
			_, err := Read(r(comments(n, c.bad)))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want an error containing %q, got %v", c.want, err)
			}
		}
	}
}
