package verify

import (
	"encoding/json"
	"reflect"
	"testing"
	"unsafe"

	"github.com/forgectx/forgectx/test/verifytest"
)

// splitSeeds are documents on which the in-place split must equal encoding/json: whitespace
// everywhere, escaped and non-ASCII names, a repeated member, nested arrays and strings with
// brackets and escaped quotes, scalars of every kind, and documents that are not objects.
var splitSeeds = []string{
	`{}`, ` { } `, `[]`, `null`, `1`, `"x"`, `{"a":1`, `{"a":1}x`, "\t{\n\"a\" : [ 1 , {\"b\":\"]\\\"}\"} ] ,\r\"c\":null }\n",
	`{"files":[],"records":[]}`, `{"files":[ ],"records":[{"a":[[],{}]} , 2,"s" ,true,false,null,-1.5e3]}`,
	`{"files":null,"records":[]}`, `{"files":{},"records":"[]"}`, `{"a":1,"a":2}`, `{"\u0066iles":[1],"files":[2]}`,
	`{"FILES":[1]}`, `{"é":1}`, "{\"\xff\":1}", `{"a":"\\","b":"\\\\\"","c":[]}`, `{"gaps":[],"entity":{"id":"x","id":"y"}}`,
}

// FuzzSplitIndex: splitTop and splitArray give exactly what json.Unmarshal into
// map[string]json.RawMessage and []json.RawMessage gives (the same members and items, the same
// verdict on what is an object or an array), and when splitTop calls a document plain,
// decoding it in parts gives exactly the Manifest (or the failure) of decoding it whole.
func FuzzSplitIndex(f *testing.F) {
	for _, s := range splitSeeds {
		f.Add([]byte(s))
	}
	f.Add(verifytest.Files(f, verifytest.Demo)["index.json"])
	f.Fuzz(func(t *testing.T, doc []byte) {
		var want map[string]json.RawMessage
		wantOK := json.Unmarshal(doc, &want) == nil && want != nil
		got, plain, ok := splitTop(doc)
		if ok != wantOK {
			t.Fatalf("splitTop ok %v, encoding/json %v: %q", ok, wantOK, doc)
		}
		if !ok {
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("splitTop %q, encoding/json %q", got, want)
		}
		for k, v := range got {
			var items []json.RawMessage
			itemsOK := json.Unmarshal(v, &items) == nil && items != nil
			gotItems, ok := splitArray(v)
			if ok != itemsOK || ok && !reflect.DeepEqual(gotItems, items) {
				t.Fatalf("member %q: splitArray %q (%v), encoding/json %q (%v)", k, gotItems, ok, items, itemsOK)
			}
		}
		parts, split := splitIndex(got)
		if !split || !plain {
			return
		}
		var whole Manifest
		wholeErr := json.Unmarshal(doc, &whole)
		m, err := decodeManifest(parts)
		if (err == nil) != (wholeErr == nil) {
			t.Fatalf("decodeManifest error %v, whole %v: %q", err, wholeErr, doc)
		}
		if err == nil && !reflect.DeepEqual(*m, whole) {
			t.Fatalf("decodeManifest %+v, whole %+v", *m, whole)
		}
	})
}

// The split keeps no copy of the index: every member value and array item aliases the bytes
// read from disk (what makes one scan of a 77 MB index enough).
func TestSplitIndexAliasesTheIndexBytes(t *testing.T) {
	idx := verifytest.Files(t, verifytest.Demo)["index.json"]
	top, plain, ok := splitTop(idx)
	if !ok || !plain {
		t.Fatalf("the demo index does not split plainly (ok %v, plain %v)", ok, plain)
	}
	parts, split := splitIndex(top)
	if !split || len(parts.files) == 0 || len(parts.records) == 0 {
		t.Fatalf("split %v, %d files, %d records", split, len(parts.files), len(parts.records))
	}
	within := func(b []byte) bool {
		return len(b) > 0 && uintptrOf(b) >= uintptrOf(idx) && uintptrOf(b)+uintptr(len(b)) <= uintptrOf(idx)+uintptr(len(idx))
	}
	for k, v := range top {
		if !within(v) {
			t.Errorf("member %s is a copy, not a sub-slice of the index", k)
		}
	}
	for _, it := range append(append([]json.RawMessage(nil), parts.files...), parts.records...) {
		if !within(it) {
			t.Fatalf("item %.40s is a copy, not a sub-slice of the index", it)
		}
	}
}

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
