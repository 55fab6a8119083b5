// Command mkcorpus writes the scale corpus of test/scale as files, so the forgectx CLI can be
// measured on it from outside (peak RSS with /usr/bin/time -v, see docs/snapshot.md "Scale"):
//
//	go run ./test/acqcorpus/mkcorpus -n 100000 -out DIR
//
// writes DIR/acquisition.json (acqcorpus.MakeBusy(n), the interchange form) and
// DIR/profile.json (acqcorpus.Profile(n)), the inputs of
//
//	forgectx snapshot --from-acquisition DIR/acquisition.json --profile DIR/profile.json --category observation --out TREE
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/test/acqcorpus"
)

func main() {
	n := flag.Int("n", 1000, "records")
	out := flag.String("out", "", "directory to write acquisition.json and profile.json into (created if missing)")
	flag.Parse()
	if *out == "" || *n < 1 {
		fmt.Fprintln(os.Stderr, "usage: mkcorpus -n RECORDS -out DIR")
		os.Exit(2)
	}
	if err := write(*n, *out); err != nil {
		fmt.Fprintln(os.Stderr, "mkcorpus:", err)
		os.Exit(1)
	}
}

func write(n int, out string) error {
	if err := os.MkdirAll(out, 0o700); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(out, "acquisition.json"))
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := acquisition.Write(w, acqcorpus.MakeBusy(n)); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	prof, err := json.MarshalIndent(acqcorpus.Profile(n), "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "profile.json"), append(prof, '\n'), 0o600)
}
