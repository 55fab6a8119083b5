package gate

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"testing"

	"github.com/forgectx/forgectx/pkg/cirelay"
	"github.com/forgectx/forgectx/pkg/prescript"
	"github.com/forgectx/forgectx/test/prescripttest"
)

func TestWriteJSONExactBytes(t *testing.T) {
	var b bytes.Buffer
	d := prescript.Decision{Skipped: true, Reason: `<a> & "b"`, Outputs: []prescript.KV{{Key: "b", Value: "2"}, {Key: "A", Value: "1"}}}
	if err := WriteJSON(&b, d); err != nil {
		t.Fatal(err)
	}
	if want := `{"skipped":true,"reason":"<a> & \"b\"","outputs":{"A":"1","b":"2"}}` + "\n"; b.String() != want {
		t.Fatalf("%q, want %q", b.String(), want)
	}
	b.Reset()
	_ = WriteJSON(&b, prescript.NoPrescript())
	if want := `{"skipped":false,"reason":"","outputs":{}}` + "\n"; b.String() != want {
		t.Fatalf("%q, want %q", b.String(), want)
	}
}

// A decision that cannot be relayed fails the gate and prints nothing.
func TestRelayFailurePrintsNoDecision(t *testing.T) {
	var out bytes.Buffer
	getenv := func(k string) string {
		return map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": t.TempDir()}[k]
	}
	_, err := Run(context.Background(), Options{None: true, Relay: cirelay.Options{Getenv: getenv}, Decision: &out})
	var re *RelayError
	if !errors.As(err, &re) || out.Len() != 0 {
		t.Fatalf("err %v, printed %q", err, out.String())
	}
}

// With no RunDir the gate makes (and removes) its own; a hard failure is returned as is.
func TestRunDefaultsAndErrors(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	dir := t.TempDir()
	var out bytes.Buffer
	script := prescripttest.WriteScript(t, dir, "skip.sh", `echo skipped=true >> "$O"`)
	opts := Options{
		Prescript: prescript.Options{Command: prescripttest.Command(script), Env: prescripttest.Environ(prescripttest.Env(nil))},
		Relay:     cirelay.Options{Getenv: func(string) string { return "" }},
		Decision:  &out,
	}
	d, err := Run(context.Background(), opts)
	if err != nil || !d.Skipped || out.String() != `{"skipped":true,"reason":"","outputs":{}}`+"\n" {
		t.Fatalf("d %+v err %v out %q", d, err, out.String())
	}
	out.Reset()
	opts.Prescript.Command = prescripttest.Command(prescripttest.WriteScript(t, dir, "fail.sh", `exit 3`))
	_, err = Run(context.Background(), opts)
	var hf *prescript.HardFailure
	if !errors.As(err, &hf) || hf.ExitCode != 3 || out.Len() != 0 {
		t.Fatalf("err %v out %q", err, out.String())
	}
}
