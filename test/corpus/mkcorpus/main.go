// Command mkcorpus writes one of the deterministic corpora of package corpus to stdout, for
// whole-process measurements (`forgectx filter < file`, other scanners on the same bytes):
//
//	go run ./test/corpus/mkcorpus -kind mixed -mib 50 -seed 1 -secrets planted.txt > corpus.txt
//
// -secrets writes every planted secret value, one per line (a private key's lines joined by
// "\n" escapes), so a scanner's recall can be counted.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/forgectx/forgectx/test/corpus"
)

func main() {
	kind := flag.String("kind", "mixed", "cilog, thread, mixed or hostile")
	mib := flag.Int("mib", 50, "size in MiB")
	seed := flag.Uint64("seed", 1, "generator seed")
	secrets := flag.String("secrets", "", "also write the planted secret values to this file, one per line")
	flag.Parse()
	makers := map[string]func(uint64, int) corpus.Corpus{
		"cilog": corpus.CILog, "thread": corpus.Thread, "mixed": corpus.Mixed, "hostile": corpus.Hostile,
	}
	mk, ok := makers[*kind]
	if !ok {
		fmt.Fprintf(os.Stderr, "mkcorpus: unknown -kind %q\n", *kind)
		os.Exit(2)
	}
	c := mk(*seed, *mib<<20)
	if _, err := os.Stdout.Write(c.Text); err != nil {
		fmt.Fprintln(os.Stderr, "mkcorpus:", err)
		os.Exit(1)
	}
	if *secrets != "" {
		var sb strings.Builder
		for _, s := range c.Secrets {
			sb.WriteString(strings.ReplaceAll(s.Value, "\n", `\n`) + "\n")
		}
		if err := os.WriteFile(*secrets, []byte(sb.String()), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, "mkcorpus:", err)
			os.Exit(1)
		}
	}
}
