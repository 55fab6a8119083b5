package prescript

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// MaxFileSize is the largest output file the protocol accepts ("Maximum file size is 1 MiB").
// Parse never reads more than MaxFileSize+1 bytes.
const MaxFileSize = 1 << 20

// Reserved keys of the protocol ("Reserved keys"). They are lowercase; a key differing only in
// case is a hard error.
const (
	KeySkipped = "skipped"
	KeyReason  = "reason"
)

// KV is one output assignment.
type KV struct {
	Key   string
	Value string
}

// File is a successfully parsed output file. Reserved keys are lifted out of Outputs.
type File struct {
	// SkippedSet reports whether a skipped= line was present; Skipped is its value. An absent
	// key means proceed.
	SkippedSet bool
	Skipped    bool
	// ReasonSet reports whether a reason= line was present (possibly with an empty value).
	ReasonSet bool
	Reason    string
	// Outputs holds every non-reserved key with its last assigned value, sorted by key.
	Outputs []KV
}

// Rule names one grammar rule or error-semantics row of the spec. Its string is the sentence
// an error message prints; it never contains a value from the file.
type Rule string

// The rules a ProtocolError can name. Line-level rules carry the 1-based line number; file-level
// rules (missing, too large, not a regular file, unreadable) carry line 0.
const (
	RuleNotKeyValue   Rule = "line is not key=value"
	RuleHeredoc       Rule = "heredoc form key<<DELIMITER is not supported: multiline values are not expressible in the pre-script output file"
	RuleKeyPattern    Rule = "key does not match ^[a-zA-Z_][a-zA-Z0-9_-]*$"
	RuleReservedCase  Rule = "key differs from a reserved key (skipped, reason) only by case; reserved keys are lowercase"
	RuleControlChar   Rule = "value contains a control character (U+0000-U+001F or U+007F)"
	RuleSkippedValue  Rule = "skipped must be true or false"
	RuleSkippedQuoted Rule = "skipped must be true or false; quoting is not supported"
	RuleSkippedEmpty  Rule = "skipped is present but empty; an absent key means proceed, an empty one is an error"
	RuleBOM           Rule = "line starts with a UTF-8 byte order mark (U+FEFF); write plain UTF-8 without one"
	RuleFileMissing   Rule = "output file is missing after the script ran (the script removed it)"
	RuleNotRegular    Rule = "output file is no longer a regular file after the script ran"
	RuleFileTooLarge  Rule = "output file is larger than 1 MiB"
	RuleFileUnread    Rule = "output file could not be read"
)

// ProtocolError is a hard error of the spec's "Error semantics" table: the output file broke
// the protocol and the run must fail closed. It names the line and the rule, never a value.
type ProtocolError struct {
	Line int // 1-based; 0 for a file-level rule
	Rule Rule
	Err  error // underlying I/O error for RuleFileUnread, else nil
}

func (e *ProtocolError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s line %d: %s", EnvOutput, e.Line, e.Rule)
	}
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", EnvOutput, e.Rule, e.Err)
	}
	return fmt.Sprintf("%s: %s", EnvOutput, e.Rule)
}

func (e *ProtocolError) Unwrap() error { return e.Err }

// Parse reads one pre-script output file and applies the v1 grammar. It reads at most
// MaxFileSize+1 bytes; a larger input is a RuleFileTooLarge error. Every error is a
// *ProtocolError naming the first offending line. Parse is pure: it never touches the
// filesystem.
func Parse(r io.Reader) (File, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return File{}, &ProtocolError{Rule: RuleFileUnread, Err: err}
	}
	if len(data) > MaxFileSize {
		return File{}, &ProtocolError{Rule: RuleFileTooLarge}
	}
	var f File
	outputs := map[string]string{}
	lineNo := 0
	for len(data) > 0 {
		lineNo++
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		if rule := parseLine(string(line), &f, outputs); rule != "" {
			return File{}, &ProtocolError{Line: lineNo, Rule: rule}
		}
	}
	f.Outputs = sortedKVs(outputs)
	return f, nil
}

// trimWS trims the insignificant whitespace around keys and values: spaces and tabs only. Other
// control characters (notably a trailing \r from CRLF line endings) are not whitespace here;
// inside a value they are the smuggling risk the spec rejects.
func trimWS(s string) string { return strings.Trim(s, " \t") }

// bom is U+FEFF in UTF-8. It is not whitespace for the grammar, so a line starting with it
// fails the key pattern (or, before a #, is not a comment); it gets its own rule so that the
// message says what an editor or a PowerShell redirect silently added.
const bom = "\ufeff"

func parseLine(raw string, f *File, outputs map[string]string) Rule {
	line := trimWS(raw)
	if strings.HasPrefix(line, bom) {
		return RuleBOM
	}
	if line == "" || line[0] == '#' {
		return ""
	}
	eq := strings.IndexByte(line, '=')
	if hd := strings.Index(line, "<<"); hd >= 0 && (eq < 0 || hd < eq) {
		return RuleHeredoc
	}
	if eq < 0 {
		return RuleNotKeyValue
	}
	key, value := trimWS(line[:eq]), trimWS(line[eq+1:])
	if !ValidKey(key) {
		return RuleKeyPattern
	}
	if key != KeySkipped && key != KeyReason && (strings.EqualFold(key, KeySkipped) || strings.EqualFold(key, KeyReason)) {
		return RuleReservedCase
	}
	if hasControl(value) {
		return RuleControlChar
	}
	switch key {
	case KeySkipped:
		switch value {
		case "true":
			f.SkippedSet, f.Skipped = true, true
		case "false":
			f.SkippedSet, f.Skipped = true, false
		case "":
			return RuleSkippedEmpty
		default:
			if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') {
				return RuleSkippedQuoted
			}
			return RuleSkippedValue
		}
	case KeyReason:
		f.ReasonSet, f.Reason = true, value
	default:
		outputs[key] = value
	}
	return ""
}

// ValidKey reports whether k matches ^[a-zA-Z_][a-zA-Z0-9_-]*$, the protocol's key grammar
// (also what the CI relay checks before writing a key out).
func ValidKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// hasControl reports whether s contains U+0000–U+001F or U+007F. Those are single bytes in
// UTF-8 and never occur inside a multi-byte sequence, so a byte scan is exact.
func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}

func sortedKVs(m map[string]string) []KV {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]KV, len(keys))
	for i, k := range keys {
		out[i] = KV{Key: k, Value: m[k]}
	}
	return out
}

// Format renders f in the canonical v1 form: skipped, reason, then Outputs in order, one
// key=value line each. Parse(Format(f)) yields f for every File that Parse accepted; Format
// refuses a File that the grammar cannot express (used by the fuzz target to prove that).
func (f File) Format() ([]byte, error) {
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	if f.SkippedSet {
		fmt.Fprintf(w, "%s=%t\n", KeySkipped, f.Skipped)
	}
	if f.ReasonSet {
		if err := formattable(f.Reason); err != nil {
			return nil, fmt.Errorf("reason: %w", err)
		}
		fmt.Fprintf(w, "%s=%s\n", KeyReason, f.Reason)
	}
	for i, kv := range f.Outputs {
		if !ValidKey(kv.Key) || strings.EqualFold(kv.Key, KeySkipped) || strings.EqualFold(kv.Key, KeyReason) {
			return nil, fmt.Errorf("output %d: key is not a valid non-reserved key", i)
		}
		if err := formattable(kv.Value); err != nil {
			return nil, fmt.Errorf("output %d: %w", i, err)
		}
		fmt.Fprintf(w, "%s=%s\n", kv.Key, kv.Value)
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func formattable(v string) error {
	if hasControl(v) {
		return errors.New(string(RuleControlChar))
	}
	if trimWS(v) != v {
		return errors.New("value has surrounding whitespace, which the grammar drops")
	}
	return nil
}
