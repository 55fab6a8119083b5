package treefs

import (
	"errors"
	"testing"
)

// CheckTree enforces each bound exactly at its limit: the limit passes, one more fails with
// the consumer's rule code.
func TestCheckTreeBounds(t *testing.T) {
	sized := func(sizes ...int) func(int) (string, int) {
		return func(i int) (string, int) {
			if i < len(sizes) {
				return "records/x.md", sizes[i]
			}
			return "records/y.md", 1
		}
	}
	full := func(int) (string, int) { return "checks/x/log.txt", MaxFileBytes }
	for _, tc := range []struct {
		name  string
		n     int
		file  func(int) (string, int)
		index int
		rule  string
	}{
		{"files at the bound", MaxFiles - 1, sized(), 10, ""},
		{"one file too many", MaxFiles, sized(), 10, RuleTooManyFiles},
		{"index at the bound", 1, sized(), MaxIndexBytes, ""},
		{"index over the bound", 1, sized(), MaxIndexBytes + 1, RuleFileTooLarge},
		{"file at the bound", 1, sized(MaxFileBytes), 10, ""},
		{"file over the bound", 2, sized(1, MaxFileBytes+1), 10, RuleFileTooLarge},
		{"tree at the total bound", MaxTotalBytes / MaxFileBytes, full, 0, ""},
		{"tree over the total bound", MaxTotalBytes / MaxFileBytes, full, 1, RuleFileTooLarge},
	} {
		err := CheckTree(tc.n, tc.file, tc.index)
		var be *BoundsError
		switch {
		case tc.rule == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.rule != "" && (!errors.As(err, &be) || be.Rule != tc.rule):
			t.Errorf("%s: %v, want %s", tc.name, err, tc.rule)
		}
	}
}
