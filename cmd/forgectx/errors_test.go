package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each bad input's error names the field and the rule: a wrong-typed acquisition member names
// the member path, a state directory that is a regular file says so (not "symlink"), an
// --owner-pid past any process ID is refused like a negative one.
func TestErrorsNameTheFieldAndTheRule(t *testing.T) {
	dir := t.TempDir()
	profile := filepath.Join(dir, "profile.json")
	if err := os.WriteFile(profile, []byte(`{"entity_kind":"work_item","included_sources":["comments","entity"],"record_selection":"oldest","check_log_selection":"none","bounds":{"max_records_per_source":5,"max_source_bytes":4096,"max_record_bytes":1024,"max_log_bytes":1024,"max_metadata_string_bytes":64,"max_labels":5}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	regular := filepath.Join(dir, "regular")
	if err := os.WriteFile(regular, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	snap := []string{"snapshot", "--from-acquisition", "-", "--profile", profile, "--category", "observation", "--out", filepath.Join(dir, "out")}
	for _, tc := range []struct {
		name, stdin string
		args        []string
		code        int
		want, not   string
	}{
		{"acquisition_version a string", `{"acquisition_version":"1"}`, snap, exitFailed, "acquisition: acquisition_version: json: cannot unmarshal string", ""},
		{"source.forge a number", `{"acquisition_version":1,"source":{"forge":5}}`, snap, exitFailed, "acquisition: source.forge: json: cannot unmarshal number", ""},
		{"entity.number a string", `{"acquisition_version":1,"entity":{"number":"7"}}`, snap, exitFailed, "acquisition: entity.number:", ""},
		{"state dir a regular file", "", []string{"stage", "scavenge", "--state-dir", regular}, exitFailed, "must be a real directory, not a regular file", "symlink"},
		{"owner-pid past any PID", "", []string{"stage", "create", "--from", dir, "--state-dir", dir, "--owner-pid", "99999999999"}, exitUsage, "--owner-pid: must be a process ID, 1 to 4194304", ""},
		{"owner-pid negative", "", []string{"stage", "create", "--from", dir, "--state-dir", dir, "--owner-pid", "-1"}, exitUsage, "--owner-pid: must be a process ID, 1 to 4194304", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, nil, tc.stdin, tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) || (tc.not != "" && strings.Contains(errOut, tc.not)) {
				t.Errorf("exit %d, stderr %q; want exit %d with %q", code, errOut, tc.code, tc.want)
			}
		})
	}
}
