// Package prescript implements the pre-script output protocol v1 (docs/prescript.md,
// "Protocol summary"; docs/contracts.md): prepare the output file, run the script with its
// streams teed to the job log, apply the exit-code table, parse the file, and build hard-failure
// diagnostics. The CI relay of the decision lives in pkg/cirelay.
//
// # API
//
//	d, err := prescript.Run(ctx, prescript.Options{
//		RunDir:  runDir,                     // must exist; the output file is created inside
//		Command: []string{"bash", script},   // argv
//		Env:     os.Environ(),               // FULLSEND_PRESCRIPT_OUTPUT is added/replaced
//		Stdout:  jobLog, Stderr: jobLog,     // live copies of the script's streams
//	})
//
// Run returns a Decision (Skipped, Reason, Outputs sorted by key, Basis) for exit 0 and exit
// 78, or an error:
//
//   - *HardFailure: the script exited non-zero other than 78, died by a signal, or timed out.
//     Diagnostic is one line of at most MaxTextBytes (1024) bytes chosen by the spec's
//     preference order and redacted;
//   - *ProtocolError: after exit 0, the output file broke the grammar or an "Error semantics"
//     row (Line is 1-based, 0 for file-level rules; Rule is the rule's sentence). Its message
//     never contains a value from the file;
//   - any other error: the script could not be prepared or started.
//
// NoPrescript is the decision for a harness with no pre-script (proceed). Parse is the pure
// grammar (used by the fuzz target); File.Format re-serialises an accepted file canonically.
//
// # Behaviour the spec leaves open, decided here
//
//   - Whitespace around keys and values means spaces and tabs. A CR (a CRLF line ending
//     included) is a control character and therefore an error inside a value.
//   - skipped="true" or skipped='true' is reported with RuleSkippedQuoted; quotes around other
//     values are kept as part of the value.
//   - A UTF-8 byte order mark (U+FEFF) is not whitespace: a line that starts with one (the
//     file's first, or one a second writer appended) is a hard error, RuleBOM, rather than
//     being stripped. The grammar would reject it anyway (key pattern, or a "comment" whose first
//     non-whitespace character is not #); the dedicated rule names the cause.
//   - Only spaces and tabs are whitespace: a vertical tab, form feed or U+00A0 is not, so it
//     fails the key pattern, the skipped value or the control-character rule.
//   - Comment lines are ignored whole: a CR or any other byte after the # is no error.
//   - After Lstat the file is opened without following a symlink and without blocking on a
//     FIFO, and checked again, so a background child cannot swap the path mid-read.
//   - Exit 78 with a broken output file (any ProtocolError) discards the whole file: the
//     reason and outputs come from nowhere else than stdout. A present but empty reason= also
//     falls back to the stdout line.
//   - A line is "non-empty" when it still has text after control characters and surrounding
//     blanks are removed. Lines split on LF only.
//   - Several error annotations are joined with " | " (AnnotationSeparator) in the spec's
//     order; annotations with an empty message are ignored. Messages are unescaped like the
//     runner does (%25, %0D, %0A) before control characters are stripped.
//   - Captured text goes: strip control characters → redact → cap at 1024 bytes on a UTF-8
//     boundary. Redaction comes before the cap so a secret is never cut into an unrecognisable
//     prefix; the capture keeps the first 1024+512 bytes of each line (more when a literal
//     secret is longer) for that reason.
//   - Memory is bounded per stream by that window: the current line's prefix, the last
//     non-empty line and at most one window of annotations (later ones are counted, not kept).
//   - A script that printed nothing gets the diagnostic "exited with code N and printed
//     nothing"; a timeout is reported as "timed out after D", followed by the captured
//     diagnostic when there is one. On timeout or cancellation the script's whole process
//     group is killed (Unix).
//   - The output file replaced by a directory, a symlink or a FIFO is a hard error
//     (RuleNotRegular), like a missing one.
//   - The script's stdin is /dev/null; its streams are closed DefaultWaitDelay after it exits
//     even if a background child still holds them.
package prescript
