package status

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
)

// ReceiptMarker is the first line of every receipt comment (docs/receipts.md).
const ReceiptMarker = "<!-- forgectx:receipt v1 -->"

// Receipt statuses (history/agent-runs.json runs[].status).
var receiptStatuses = map[string]bool{"success": true, "failure": true, "cancelled": true, "skipped": true, "timed_out": true}

// Receipt is the machine-readable block of a run receipt: the fields of one
// history/agent-runs.json run, with timestamps in the canonical v1 form. It is the one receipt
// type, acquisition.Receipt.
type Receipt = acquisition.Receipt

var (
	// receiptIDPattern is the intersection of structural_id and the GitHub node-id mapping, so
	// one receipt ID is valid on every forge.
	receiptIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_=-]{0,127}$`)
	hex64            = regexp.MustCompile(`^[0-9a-f]{64}$`)
	gitOID           = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)
	canonicalTS      = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{9}Z$`)
)

// validateReceipt checks every field against the agent-runs schema rules and the receipt ID
// rule, naming the field and the rule on failure. It sorts ResultRecordKeys (ASCII order).
func validateReceipt(r *Receipt) error {
	if !receiptIDPattern.MatchString(r.ID) {
		return fmt.Errorf("receipt: id: must match %s", receiptIDPattern)
	}
	if !agentPattern.MatchString(r.Agent) {
		return fmt.Errorf("receipt: agent: must match %s", agentPattern)
	}
	if !receiptStatuses[r.Status] {
		return fmt.Errorf("receipt: status: %q is not one of success, failure, cancelled, skipped, timed_out", r.Status)
	}
	if !hex64.MatchString(r.InputRevision) {
		return errors.New("receipt: input_revision: must be a lowercase hex SHA-256")
	}
	if r.InputHeadSHA != "" && !gitOID.MatchString(r.InputHeadSHA) {
		return errors.New("receipt: input_head_sha: must be a lowercase hex Git object ID")
	}
	if r.ResultingCommitSHA != "" && !gitOID.MatchString(r.ResultingCommitSHA) {
		return errors.New("receipt: resulting_commit_sha: must be a lowercase hex Git object ID")
	}
	if r.ResultRecordKeys == nil {
		r.ResultRecordKeys = []string{}
	}
	seen := map[string]bool{}
	for _, k := range r.ResultRecordKeys {
		if !hex64.MatchString(k) {
			return errors.New("receipt: result_record_keys: every key must be a lowercase hex SHA-256")
		}
		if seen[k] {
			return errors.New("receipt: result_record_keys: keys must be unique")
		}
		seen[k] = true
	}
	sort.Strings(r.ResultRecordKeys)
	if r.StartedAt != "" && !canonicalTS.MatchString(r.StartedAt) {
		return errors.New("receipt: started_at: must be a canonical v1 timestamp (UTC, nine fractional digits)")
	}
	if !canonicalTS.MatchString(r.CompletedAt) {
		return errors.New("receipt: completed_at: must be a canonical v1 timestamp (UTC, nine fractional digits)")
	}
	return nil
}

// RenderReceipt returns the body of a receipt comment: the marker, one human line and the
// receipt as RFC 8785 JSON in a fenced block. The comment is posted once and never edited.
func RenderReceipt(r Receipt) (string, error) {
	if err := validateReceipt(&r); err != nil {
		return "", err
	}
	js, err := canon.JSON(r)
	if err != nil {
		return "", fmt.Errorf("receipt: %w", err)
	}
	var b strings.Builder
	b.WriteString(ReceiptMarker)
	b.WriteString("\n")
	fmt.Fprintf(&b, "🧾 forgectx run receipt: agent `%s`, status `%s`. This comment is a permanent record and is never edited.\n\n", r.Agent, r.Status)
	b.WriteString("```json\n")
	b.Write(js)
	b.WriteString("\n```\n")
	return b.String(), nil
}

// errNotReceipt is returned by ParseReceipt for a body that does not start with ReceiptMarker.
var errNotReceipt = errors.New("receipt: not a forgectx receipt")

// maxReceiptBytes bounds the receipt bodies ParseReceipt reads.
const maxReceiptBytes = 64 << 10

// ParseReceipt reads a receipt comment body back. It accepts exactly the layout RenderReceipt
// writes (marker on the first line, one fenced json block) with strict JSON (no unknown
// fields, and the block byte-identical to the canonical RFC 8785 form of what it decodes to)
// and validates every field. Whether the receipt is trusted (authored by the
// registered bot identity) is the caller's decision.
func ParseReceipt(body string) (Receipt, error) {
	var r Receipt
	if len(body) > maxReceiptBytes {
		return r, fmt.Errorf("receipt: body larger than %d bytes", maxReceiptBytes)
	}
	first, rest, _ := strings.Cut(body, "\n")
	if strings.TrimSuffix(first, "\r") != ReceiptMarker {
		return r, errNotReceipt
	}
	rest = strings.ReplaceAll(rest, "\r\n", "\n")
	start := strings.Index(rest, "\n```json\n")
	if start < 0 {
		return r, errors.New("receipt: no ```json block")
	}
	block := rest[start+len("\n```json\n"):]
	end := strings.Index(block, "\n```")
	if end < 0 {
		return r, errors.New("receipt: unterminated ```json block")
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(block[:end])))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Receipt{}, fmt.Errorf("receipt: json block: %w", err)
	}
	if dec.More() {
		return Receipt{}, errors.New("receipt: json block: trailing data")
	}
	if err := validateReceipt(&r); err != nil {
		return Receipt{}, err
	}
	// The block must be exactly the RFC 8785 bytes RenderReceipt writes: encoding/json keeps
	// the last of duplicated members and matches member names case-insensitively, so a block
	// like {"status":"failure","Status":"success"} would otherwise mean something other than
	// what a reader of the comment sees.
	js, err := canon.JSON(r)
	if err != nil || !bytes.Equal(js, []byte(block[:end])) {
		return Receipt{}, errors.New("receipt: json block: not the canonical RFC 8785 form (duplicated, re-cased or reordered members, whitespace, unsorted result_record_keys)")
	}
	return r, nil
}
