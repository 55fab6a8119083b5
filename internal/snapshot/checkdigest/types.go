// Package checkdigest derives, from a failed check's verified and filtered log bytes, the few
// lines that say what failed: the job and step (from the forge's section markers), the error
// lines with a little context and their line numbers in the log file, and a category from a
// closed set (docs/check-digest.md).
//
// A digest is a pure function of the log bytes it is given (and the limits): nothing the
// snapshot's filter removed can come back, and the same log always gives the same digest, so a
// prompt block built from it is cache-stable.
package checkdigest

// Category is what kind of failure a log shows; the set is closed and documented.
type Category string

// The categories, in the order the documentation lists them (docs/check-digest.md).
const (
	// catCompile: the code did not build (a compiler or type checker error, a failed image build).
	catCompile Category = "compile"
	// catTest: the code built and a test failed.
	catTest Category = "test"
	// catLint: a linter or formatter check failed.
	catLint Category = "lint"
	// catDependency: a dependency could not be resolved, downloaded or verified.
	catDependency Category = "dependency"
	// catTimeout: a deadline ended the job or the test run.
	catTimeout Category = "timeout"
	// catCancelled: the run was cancelled (a user, a newer push, the forge).
	catCancelled Category = "cancelled"
	// catInfrastructure: the runner, the machine or the network failed, not the code.
	catInfrastructure Category = "infrastructure"
	// catUnknown: no specific rule matched; generic error lines may still be kept.
	catUnknown Category = "unknown"
)

// Line is one line of the log kept in a digest.
type Line struct {
	Number int    `json:"line"` // 1-based line number in the tree's log file
	Text   string `json:"text"` // the line without timestamp prefix or ANSI escapes
	Key    bool   `json:"key"`  // an error line (false: context around one)
}

// Digest is what failed in one check's log.
type Digest struct {
	Format     string   `json:"format"`                // github-actions, gitlab, forgejo or plain
	Job        string   `json:"job,omitempty"`         // from the log's own markers, when present
	Step       string   `json:"step,omitempty"`        // the section the first error line is in
	Category   Category `json:"category"`              // from the classifier's rule table
	Rule       string   `json:"rule,omitempty"`        // id of the rule that decided the category
	Lines      []Line   `json:"lines"`                 // in log order; never nil
	FirstError string   `json:"first_error,omitempty"` // the first key line's text
	// OmittedLines counts key lines the bounds left out (a visible marker says so).
	OmittedLines int `json:"omitted_lines"`
}

// categories is the closed set, in the documented order.
func categories() []Category {
	return []Category{catCompile, catTest, catLint, catDependency, catTimeout, catCancelled, catInfrastructure, catUnknown}
}
