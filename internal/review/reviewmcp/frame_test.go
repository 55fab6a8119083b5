package reviewmcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/test/verifytest"
)

const (
	rawInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"%s","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	rawSummary = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ocr_toolkit_evidence","arguments":{"action":"summary"}}}`
)

// rawServe runs Serve and writes the frames one at a time, waiting for the answer of each
// but the last (so the order of events is deterministic); the last frame is followed by
// end of input once Serve has ended by itself or two seconds have passed. It returns every output line, the final usage and Serve's error.
func rawServe(t *testing.T, frames ...string) ([]string, Usage, error) {
	t.Helper()
	cfg := constrainedConfig(t, verifytest.Demo)
	cfg.UsagePath = filepath.Join(t.TempDir(), "usage.json")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := Serve(context.Background(), cfg, inR, outW)
		outW.Close()
		inR.Close()
		done <- err
	}()
	got := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			got <- sc.Text()
		}
		close(got)
	}()
	var lines []string
	for i, f := range frames {
		if _, err := io.WriteString(inW, f+"\n"); err != nil {
			break
		}
		if i == len(frames)-1 || !strings.Contains(f, `"id":`) {
			continue
		}
		select {
		case l := <-got:
			lines = append(lines, l)
		case <-time.After(10 * time.Second):
			t.Fatal("no answer")
		}
	}
	// let the last frame be handled (the session may end on its own) before ending input
	select {
	case err := <-done:
		done <- err
	case <-time.After(2 * time.Second):
	}
	inW.Close()
	for l := range got {
		lines = append(lines, l)
	}
	select {
	case err := <-done:
		u, uerr := ReadUsage(cfg.UsagePath)
		if uerr != nil {
			t.Fatal(uerr)
		}
		return lines, u, err
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not end")
	}
	return nil, Usage{}, nil
}

func initFrames(version string) []string {
	return strings.Split(strings.TrimSpace(fmt.Sprintf(rawInit, version)), "\n")
}

func sprintf(format string, a ...any) string { return strings.TrimSpace(fmt.Sprintf(format, a...)) }

// TestMCPBatchRefused: a JSON-RPC batch (legal in 2024-11-05 and 2025-03-26) ends the
// session with errFrame before any call in it runs, so no combined response (which the
// per-answer bound could not bound) is written; the frames before it are answered. Before
// the guard, a batch of 40 summary calls was answered with one ~55 KB frame, and a batch of
// large get calls with megabytes.
func TestMCPBatchRefused(t *testing.T) {
	for _, v := range []string{"2024-11-05", "2025-03-26", "2025-06-18"} {
		var batch []string
		for i := range 40 {
			batch = append(batch, sprintf(rawSummary, 10+i))
		}
		frames := append(initFrames(v), sprintf(rawSummary, 2), "  ["+strings.Join(batch, ",")+"]\n"+sprintf(rawSummary, 99))
		lines, u, err := rawServe(t, frames...)
		if !errors.Is(err, errFrame) || !strings.Contains(err.Error(), "batch") {
			t.Errorf("%s: Serve returned %v, want an ErrFrame batch refusal", v, err)
		}
		for _, l := range lines {
			if strings.HasPrefix(l, "[") || len(l) > maxMessage {
				t.Errorf("%s: a batch response was written (%d bytes)", v, len(l))
			}
		}
		if len(lines) != 2 || u.EvidenceSummary != 1 {
			t.Errorf("%s: %d responses, usage %+v: want initialize and the one call before the batch", v, len(lines), u)
		}
	}
}

// TestMCPFrameBoundExact: a frame of exactly maxMessage bytes is read; one byte more ends the
// session with errFrame even when pipelined right behind a small frame; a "[" or "}" inside
// a string does not confuse the frame scanner.
func TestMCPFrameBoundExact(t *testing.T) {
	pad := func(total int) string {
		head := `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"_meta":{"pad":"[}\"`
		tail := `"}}}`
		return head + strings.Repeat("x", total-len(head)-len(tail)) + tail
	}
	if len(pad(maxMessage)) != maxMessage {
		t.Fatal("fixture")
	}
	lines, _, err := rawServe(t, append(initFrames("2025-06-18"), pad(maxMessage), sprintf(rawSummary, 8))...)
	if err != nil || len(lines) < 2 || !strings.Contains(lines[1], `"id":7`) {
		t.Errorf("a %d-byte frame: %v, %d lines", maxMessage, err, len(lines))
	}
	lines, _, err = rawServe(t, append(initFrames("2025-06-18"), sprintf(rawSummary, 2), pad(maxMessage+1))...)
	if !errors.Is(err, errFrame) || !strings.Contains(err.Error(), "request bound") {
		t.Errorf("a %d-byte frame: %v", maxMessage+1, err)
	}
	if len(lines) != 2 {
		t.Errorf("%d responses, want initialize and the call before the oversized frame", len(lines))
	}
}

// TestMCPResponseFrameBound: a request whose ID (echoed in the response) would push the
// response frame over maxMessage gets no oversized response: the session ends with errFrame.
// Before frameWriter, a 65,000-byte ID made a 65,719-byte summary response.
func TestMCPResponseFrameBound(t *testing.T) {
	bigID := `"` + strings.Repeat("i", 65000) + `"`
	for name, frame := range map[string]string{
		"request id": `{"jsonrpc":"2.0","id":` + bigID + `,"method":"tools/call","params":{"name":"ocr_toolkit_evidence","arguments":{"action":"summary"}}}`,
	} {
		if len(frame) > maxMessage {
			t.Fatalf("%s: fixture %d bytes", name, len(frame))
		}
		lines, _, err := rawServe(t, append(initFrames("2025-06-18"), frame)...)
		for _, l := range lines {
			if len(l) > maxMessage {
				t.Errorf("%s: a %d-byte response frame was written", name, len(l))
			}
		}
		if !errors.Is(err, errFrame) || !strings.Contains(err.Error(), "response frame") {
			t.Errorf("%s: Serve returned %v", name, err)
		}
	}
}

// FuzzFrameGuard: for any string value, a stream of objects carrying it passes the guard
// byte for byte (strings holding brackets, braces, quotes and escapes do not confuse the
// scanner), and the same objects sent as a batch are refused.
func FuzzFrameGuard(f *testing.F) {
	f.Add(`plain`)
	f.Add(`[}{"\\\"]`)
	f.Add("\u2028\\u005b")
	f.Fuzz(func(t *testing.T, v string) {
		b, err := json.Marshal(map[string]string{"k": v})
		if err != nil || len(b) > maxMessage {
			return
		}
		stream := string(b) + "\n \r\n" + string(b) + "\t" + string(b)
		out, err := io.ReadAll(&frameGuard{r: strings.NewReader(stream)})
		if err != nil || string(out) != stream {
			t.Fatalf("guard altered or refused a valid stream: %v", err)
		}
		_, err = io.ReadAll(&frameGuard{r: strings.NewReader(string(b) + "\n[" + string(b) + "]")})
		if !errors.Is(err, errFrame) {
			t.Fatalf("batch passed: %v", err)
		}
	})
}
