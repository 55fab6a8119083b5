package status

import "testing"

// IsOwnComment matches exactly the first-line markers Render and RenderReceipt write, and
// nothing else.
func TestIsOwnCommentFirstLineMarkerExact(t *testing.T) {
	st, err := Render(nil, Status{Agent: "triage-bot", State: Started, RunURL: "https://github.com/o/r/actions/runs/1"})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := RenderReceipt(validReceipt())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		body string
		want bool
	}{
		{"rendered status comment", st, true},
		{"rendered receipt", rc, true},
		{"status marker alone", Marker("a.b_c-1"), true},
		{"receipt marker alone", ReceiptMarker, true},
		{"receipt marker CRLF", ReceiptMarker + "\r\nbody", true},
		{"status marker CRLF", Marker("x") + "\r\nbody", true},
		{"empty", "", false},
		{"plain comment", "LGTM", false},
		{"marker on second line", "hi\n" + ReceiptMarker, false},
		{"status marker on second line", "hi\n" + Marker("x"), false},
		{"leading space", " " + ReceiptMarker, false},
		{"trailing text", ReceiptMarker + " x", false},
		{"trailing space", Marker("x") + " ", false},
		{"other receipt version", "<!-- forgectx:receipt v2 -->", false},
		{"upper case", "<!-- FORGECTX:receipt v1 -->", false},
		{"status marker invalid agent", "<!-- forgectx:status agent=a b -->", false},
		{"status marker empty agent", "<!-- forgectx:status agent= -->", false},
		{"status marker agent breakout", "<!-- forgectx:status agent=x --><!-- -->", false},
		{"BOM before marker", "\ufeff" + ReceiptMarker, false},
		{"bare CR line end", ReceiptMarker + "\rmore", false},
		{"prefix only", "<!-- forgectx:", false},
	} {
		if got := IsOwnComment(tc.body); got != tc.want {
			t.Errorf("%s: IsOwnComment(%q) = %v, want %v", tc.name, tc.body, got, tc.want)
		}
	}
}

func FuzzIsOwnComment(f *testing.F) {
	f.Add(ReceiptMarker + "\nx")
	f.Add(Marker("a") + "\n")
	f.Add("x")
	f.Fuzz(func(t *testing.T, body string) {
		if IsOwnComment(body) {
			// A match implies the body parses as either kind's first line.
			if _, err := ParseReceipt(body); err == errNotReceipt {
				first := body
				if i := indexNL(body); i >= 0 {
					first = body[:i]
				}
				if len(first) > 0 && first[len(first)-1] == '\r' {
					first = first[:len(first)-1]
				}
				if !markerLine.MatchString(first) {
					t.Fatalf("IsOwnComment(%q) true but no marker on the first line", body)
				}
			}
		}
	})
}

func indexNL(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return i
		}
	}
	return -1
}
