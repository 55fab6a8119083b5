package status

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkRenderHostileDetail renders a status comment whose detail is a hostile 2 KiB
// diagnostic (markup, backtick runs, invisibles) — the largest detail forgectx run produces
// (the post-script's last stderr line is kept to 2 KiB, pre-script diagnostics to 1 KiB). The
// whole detail passes the filter before the 300-byte cap, so a secret cannot straddle a cut.
func BenchmarkRenderHostileDetail(b *testing.B) {
	detail := strings.Repeat("<!-- x --> @a [l](https://e) ``` \u200b\u3164 ", 2<<10/40)
	b.SetBytes(int64(len(detail)))
	for b.Loop() {
		if _, err := Render(nil, Status{Agent: "triage", State: Failure, RunURL: "https://github.com/o/r/actions/runs/1", Detail: detail}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseReceipt parses one receipt comment the way the agent_runs reader does for every
// receipt-marked comment of an entity.
func BenchmarkParseReceipt(b *testing.B) {
	r := validReceipt()
	r.ResultRecordKeys = nil
	for i := 0; i < 200; i++ {
		r.ResultRecordKeys = append(r.ResultRecordKeys, fmt.Sprintf("%064x", i))
	}
	body, err := RenderReceipt(r)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := ParseReceipt(body); err != nil {
			b.Fatal(err)
		}
	}
}
