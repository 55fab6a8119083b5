package run

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/forgectx/forgectx/pkg/prescript"
)

// EnvResultFile names the file the post-script may write the run's results into, for the
// receipt (docs/run.md, "Receipts"). Only the post-script receives it: it runs on the host and
// knows what was pushed; the agent does not.
const EnvResultFile = "FORGECTX_RESULT_FILE"

// Result-file keys.
const (
	ResultCommitKey = "resulting_commit_sha"
	ResultKeysKey   = "result_record_keys"
)

var recordKey = regexp.MustCompile(`^[0-9a-f]{64}$`)

// runResults is what the post-script reported.
type runResults struct {
	commit string
	keys   []string
}

// ResultError is a result file that cannot be used; the receipt then carries no results.
type ResultError struct {
	Rule string
}

func (e *ResultError) Error() string { return "result file: " + e.Rule }

// readResults parses the post-script's result file with the pre-script output grammar
// (key=value lines, # comments): resulting_commit_sha=<Git object ID> and
// result_record_keys=<record keys separated by spaces or commas>. A missing or empty file
// reports nothing. Any other key, a malformed value or a broken line is a *ResultError naming
// the rule, never the value.
func readResults(path string) (runResults, error) {
	var res runResults
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return res, nil
	}
	if err != nil {
		return res, &ResultError{Rule: "unreadable"}
	}
	if !st.Mode().IsRegular() {
		return res, &ResultError{Rule: "not a regular file"}
	}
	// Opened without following a symlink and without blocking on a FIFO swapped in after the
	// Lstat, then checked again on the open handle.
	f, err := openNoFollow(path)
	if err != nil {
		return res, &ResultError{Rule: "unreadable or not a regular file"}
	}
	defer f.Close()
	if fst, err := f.Stat(); err != nil || !fst.Mode().IsRegular() {
		return res, &ResultError{Rule: "not a regular file"}
	}
	pf, err := prescript.Parse(f)
	if err != nil {
		var pe *prescript.ProtocolError
		if errors.As(err, &pe) {
			return res, &ResultError{Rule: fmt.Sprintf("line %d: %s", pe.Line, pe.Rule)}
		}
		return res, &ResultError{Rule: "unreadable"}
	}
	if pf.SkippedSet || pf.ReasonSet {
		return res, &ResultError{Rule: "only resulting_commit_sha and result_record_keys may be set"}
	}
	for _, kv := range pf.Outputs {
		switch kv.Key {
		case ResultCommitKey:
			if kv.Value != "" && !gitOID.MatchString(kv.Value) {
				return runResults{}, &ResultError{Rule: ResultCommitKey + " must be a lowercase hex Git object ID"}
			}
			res.commit = kv.Value
		case ResultKeysKey:
			seen := map[string]bool{}
			for _, k := range strings.FieldsFunc(kv.Value, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' }) {
				if !recordKey.MatchString(k) {
					return runResults{}, &ResultError{Rule: ResultKeysKey + " must list lowercase hex SHA-256 record keys"}
				}
				if !seen[k] {
					seen[k] = true
					res.keys = append(res.keys, k)
				}
			}
			sort.Strings(res.keys)
		default:
			return runResults{}, &ResultError{Rule: "only resulting_commit_sha and result_record_keys may be set"}
		}
	}
	return res, nil
}
