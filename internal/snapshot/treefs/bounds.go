package treefs

import "fmt"

// Tree bounds: the one definition of what an entity-context-snapshot tree may hold, shared by
// the producer (internal/snapshot checks a profile against them before fetching and the assembled
// tree before it is written) and the consumer (internal/snapshot/verify refuses a tree beyond them). The
// spec sets no tree-size limit of its own; these exist so that a hostile tree cannot exhaust a
// consumer's memory, and they are the same numbers on both sides so that the assembler never
// writes a tree its own consumer refuses.
const (
	// MaxFiles bounds the regular files of a tree, index.json included.
	MaxFiles = 1 << 20
	// MaxIndexBytes bounds the root index.json: it lists every file and record (about 800
	// bytes per record), so it is the one file that grows with the tree.
	MaxIndexBytes = 256 << 20
	// MaxFileBytes bounds every other file. Record bodies and logs are bounded by the profile
	// (MaxBodyBytes below keeps a bounded body and its header within this).
	MaxFileBytes = 64 << 20
	// MaxTotalBytes bounds the sum of all file sizes.
	MaxTotalBytes = 1 << 30

	// FixedFiles are the files every tree has whatever the profile: index.json, the eight
	// singletons (collection, entity metadata, relations, history, two state documents, two
	// views) and the entity-body record.
	FixedFiles = 10
	// FilesPerRecordSlot is the most files one max_records_per_source slot of every source
	// can add: a comment record (and, with reviews selected, the thread it starts — a thread
	// is emitted only with a retained comment), a review record and its view, a check's
	// metadata and its log.
	FilesPerRecordSlot = 6
	// MaxRecordsPerSource is the largest max_records_per_source whose worst case fits
	// MaxFiles. Threads sharing comments could still exceed it; the assembler checks the
	// actual tree (CheckTree) before returning it.
	MaxRecordsPerSource = (MaxFiles - FixedFiles) / FilesPerRecordSlot
	// MaxBodyBytes is the largest max_record_bytes / max_log_bytes: half of MaxFileBytes
	// leaves ample room for a record's four header lines.
	MaxBodyBytes = MaxFileBytes / 2
)

// BoundsError is a tree beyond the bounds. Rule is the consumer's violation code for it
// (too_many_files or file_too_large), so producer and consumer name the same rule.
type BoundsError struct {
	Rule   string
	Detail string
}

func (e *BoundsError) Error() string { return e.Rule + ": " + e.Detail }

// Rule codes of BoundsError (the same as internal/snapshot/verify's RuleTooManyFiles and RuleFileTooLarge).
const (
	RuleTooManyFiles = "too_many_files"
	RuleFileTooLarge = "file_too_large"
)

// CheckTree checks a tree held in memory against the bounds: n files besides index.json,
// file(i) giving the path and size of each, and the index's size (0 while it is not built
// yet). It names the first bound exceeded, never content.
func CheckTree(n int, file func(i int) (path string, size int), indexBytes int) error {
	if n+1 > MaxFiles {
		return &BoundsError{Rule: RuleTooManyFiles, Detail: fmt.Sprintf("the tree has %d files; the bound is %d", n+1, MaxFiles)}
	}
	if indexBytes > MaxIndexBytes {
		return &BoundsError{Rule: RuleFileTooLarge, Detail: fmt.Sprintf("index.json is %d bytes; the bound is %d", indexBytes, MaxIndexBytes)}
	}
	total := int64(indexBytes)
	for i := 0; i < n; i++ {
		p, size := file(i)
		if size > MaxFileBytes {
			return &BoundsError{Rule: RuleFileTooLarge, Detail: fmt.Sprintf("%s is %d bytes; the bound is %d", p, size, MaxFileBytes)}
		}
		total += int64(size)
	}
	if total > MaxTotalBytes {
		return &BoundsError{Rule: RuleFileTooLarge, Detail: fmt.Sprintf("the tree is %d bytes; the bound is %d", total, MaxTotalBytes)}
	}
	return nil
}
