package status

import (
	"strings"
	"testing"
)

func validReceipt() Receipt {
	return Receipt{
		ID:               "gha-123456789-1",
		Agent:            "triage",
		Status:           "success",
		InputRevision:    strings.Repeat("a", 64),
		InputHeadSHA:     strings.Repeat("b", 40),
		ResultRecordKeys: []string{strings.Repeat("d", 64), strings.Repeat("c", 64)},
		StartedAt:        "2026-11-30T06:00:00.000000000Z",
		CompletedAt:      "2026-11-30T06:05:00.123456789Z",
	}
}

func TestReceiptRoundTripExactBytes(t *testing.T) {
	body, err := RenderReceipt(validReceipt())
	if err != nil {
		t.Fatal(err)
	}
	want := ReceiptMarker + "\n" +
		"🧾 forgectx run receipt: agent `triage`, status `success`. This comment is a permanent record and is never edited.\n\n" +
		"```json\n" +
		`{"agent":"triage","completed_at":"2026-11-30T06:05:00.123456789Z","id":"gha-123456789-1","input_head_sha":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb","input_revision":"` + strings.Repeat("a", 64) +
		`","result_record_keys":["` + strings.Repeat("c", 64) + `","` + strings.Repeat("d", 64) + `"],"started_at":"2026-11-30T06:00:00.000000000Z","status":"success"}` +
		"\n```\n"
	if body != want {
		t.Fatalf("got\n%s\nwant\n%s", body, want)
	}
	got, err := ParseReceipt(body)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := RenderReceipt(got)
	if again != body {
		t.Errorf("render(parse(render(r))) differs")
	}
}

func TestReceiptValidationNamesTheField(t *testing.T) {
	cases := map[string]func(*Receipt){
		"id":                   func(r *Receipt) { r.ID = "has.dot" },
		"agent":                func(r *Receipt) { r.Agent = "" },
		"status":               func(r *Receipt) { r.Status = "done" },
		"input_revision":       func(r *Receipt) { r.InputRevision = "ABC" },
		"input_head_sha":       func(r *Receipt) { r.InputHeadSHA = "xyz" },
		"resulting_commit_sha": func(r *Receipt) { r.ResultingCommitSHA = strings.Repeat("A", 40) },
		"result_record_keys":   func(r *Receipt) { r.ResultRecordKeys = []string{"k"} },
		"started_at":           func(r *Receipt) { r.StartedAt = "2026-11-30T06:00:00Z" },
		"completed_at":         func(r *Receipt) { r.CompletedAt = "" },
	}
	for field, mutate := range cases {
		r := validReceipt()
		mutate(&r)
		if _, err := RenderReceipt(r); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: error %v does not name the field", field, err)
		}
	}
	r := validReceipt()
	r.ResultRecordKeys = []string{strings.Repeat("c", 64), strings.Repeat("c", 64)}
	if _, err := RenderReceipt(r); err == nil || !strings.Contains(err.Error(), "unique") {
		t.Errorf("duplicate result keys accepted: %v", err)
	}
}

func TestParseReceiptRejectsForgeries(t *testing.T) {
	good, _ := RenderReceipt(validReceipt())
	cases := map[string]string{
		"not first line":       "hi\n" + good,
		"unknown field":        strings.Replace(good, `{"agent"`, `{"extra":1,"agent"`, 1),
		"no block":             ReceiptMarker + "\nnothing",
		"unterminated":         strings.TrimSuffix(good, "```\n"),
		"invalid content":      strings.Replace(good, `"success"`, `"won"`, 1),
		"trailing data":        strings.Replace(good, "}\n```", "}{}\n```", 1),
		"duplicated member":    strings.Replace(good, `"status":"success"`, `"status":"failure","status":"success"`, 1),
		"re-cased member":      strings.Replace(good, `"status":"success"`, `"Status":"success"`, 1),
		"whitespace":           strings.Replace(good, `{"agent"`, `{ "agent"`, 1),
		"reordered members":    strings.Replace(strings.Replace(good, `"agent":"triage",`, ``, 1), `"status"`, `"agent":"triage","status"`, 1),
		"unsorted result keys": strings.Replace(good, `"`+strings.Repeat("c", 64)+`","`+strings.Repeat("d", 64)+`"`, `"`+strings.Repeat("d", 64)+`","`+strings.Repeat("c", 64)+`"`, 1),
	}
	for name, body := range cases {
		if body == good {
			t.Fatalf("%s: test premise: the forgery equals the genuine receipt", name)
		}
		if _, err := ParseReceipt(body); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := ParseReceipt("plain comment"); err != errNotReceipt {
		t.Errorf("plain comment: %v, want ErrNotReceipt", err)
	}
}

func FuzzParseReceipt(f *testing.F) {
	good, _ := RenderReceipt(validReceipt())
	f.Add(good)
	f.Add(ReceiptMarker + "\n```json\n{}\n```")
	f.Fuzz(func(t *testing.T, body string) {
		r, err := ParseReceipt(body)
		if err != nil {
			return
		}
		// Every accepted receipt re-renders and parses to the same value.
		again, err := RenderReceipt(r)
		if err != nil {
			t.Fatalf("accepted receipt does not render: %v", err)
		}
		r2, err := ParseReceipt(again)
		if err != nil || r2.ID != r.ID || r2.InputRevision != r.InputRevision {
			t.Fatalf("round trip changed the receipt: %v", err)
		}
	})
}
