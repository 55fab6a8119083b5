package reviewrun

import (
	"bytes"
	"testing"
)

// FuzzParseReceipt: a receipt read back from a note is untrusted. ParseReceipt never panics,
// and whatever it accepts is valid and re-encodes to the same canonical bytes it would write.
func FuzzParseReceipt(f *testing.F) {
	b, _ := protectedReceipt().Marshal()
	f.Add(b)
	f.Add([]byte(`{"schema_version":"ocr.review-receipt/v7"}`))
	f.Add([]byte(`{"schema_version":"ocr.review-receipt/v8","sources":[]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := ParseReceipt(in)
		if err != nil {
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("accepted an invalid receipt: %v", err)
		}
		out, err := r.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseReceipt(out)
		if err != nil {
			t.Fatalf("its own encoding is rejected: %v", err)
		}
		if b2, _ := again.Marshal(); !bytes.Equal(out, b2) {
			t.Fatal("encoding is not stable")
		}
	})
}

// FuzzReceiptFromBody: any note body; never a panic, and an accepted block is valid.
func FuzzReceiptFromBody(f *testing.F) {
	blk, _ := ReceiptBlock(protectedReceipt())
	f.Add("summary\n" + blk + "\n")
	f.Add("<!-- ocr.review-receipt/v8 {} -->")
	f.Add("<!-- ocr.review-receipt/v8")
	f.Fuzz(func(t *testing.T, body string) {
		r, err := ReceiptFromBody(body)
		if err == nil && r.Validate() != nil {
			t.Fatal("accepted an invalid receipt")
		}
	})
}

// FuzzParseProjection: the posting boundary's read-back never panics.
func FuzzParseProjection(f *testing.F) {
	f.Add([]byte(`{"schema_version":"forgectx.review-projection/v1","result":{},"dlp_signal":{},"receipt":{}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		p, err := ParseProjection(in)
		if err == nil && (p.Receipt == nil || p.Result == nil || p.Receipt.Validate() != nil) {
			t.Fatal("accepted an incomplete projection")
		}
	})
}
