package distill

import (
	"os"
	"strings"
	"testing"
)

// BenchmarkExcerpt measures one distillation per event type over the vendored corpus (the first
// example of each type) and a 50 KB comment, the case the text cap exists for.
func BenchmarkExcerpt(b *testing.B) {
	corpus := githubCorpus(b)
	for _, ev := range []string{"issue_comment", "pull_request_review_comment", "pull_request", "check_run"} {
		payload, err := os.ReadFile(corpus[ev][0])
		if err != nil {
			b.Fatal(err)
		}
		b.Run(ev, func(b *testing.B) {
			b.SetBytes(int64(len(payload)))
			for i := 0; i < b.N; i++ {
				Excerpt(gitHub, ev, payload, Options{})
			}
		})
	}
	big := []byte(`{"action":"created","comment":{"body":"` + strings.Repeat("log line 42: error\\n", 2700) +
		`","html_url":"https://github.com/o/r/issues/1#issuecomment-2","user":{"login":"a"}}}`)
	b.Run("issue_comment_50KB_body", func(b *testing.B) {
		b.SetBytes(int64(len(big)))
		for i := 0; i < b.N; i++ {
			Excerpt(gitHub, "issue_comment", big, Options{})
		}
	})
}
