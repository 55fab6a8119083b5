// Package canon implements the byte-level rules of entity-context-snapshot v1 ("Canonical
// bytes", "Stable records and mutable state", "Ordering files and prompt assembly"): RFC 8785
// JSON, the nine-digit UTC timestamp form, record keys, order keys with the reserved entity
// key, and source.host normalisation.
//
// Everything here is pure and deterministic: the same input gives the same bytes on every
// machine. Forge adapters call Host and RecordKey; the assembler (internal/snapshot) calls the rest.
package canon

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gowebpki/jcs"
)

// JSON returns the RFC 8785 (JCS) bytes of v: UTF-8, no byte-order mark, no trailing newline,
// members in RFC 8785 order. v is first encoded with encoding/json (HTML escaping off); JCS then
// re-serialises strings and numbers canonically, so Go's own escaping choices never leak into
// the output. Integers beyond 2^53 are not representable in RFC 8785 and are rejected.
func JSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("canon: encode: %w", err)
	}
	return Transform(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// Transform canonicalises one JSON document to RFC 8785 bytes.
func Transform(doc []byte) ([]byte, error) {
	out, err := jcs.Transform(doc)
	if err != nil {
		return nil, fmt.Errorf("canon: RFC 8785: %w", err)
	}
	return out, nil
}

// String returns the RFC 8785 serialisation of one JSON string (the form record headers use).
func String(s string) (string, error) {
	b, err := JSON(s)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// SHA256Hex is the lowercase hexadecimal SHA-256 of b (record keys, manifest digests,
// collection_profile).
func SHA256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// IsLowerHex reports whether s is only lowercase hexadecimal digits (the form of every digest,
// record key, Git object ID and stage ID v1 handles; uppercase is not canonical and is
// refused, not folded). The empty string qualifies: callers check the length they require.
func IsLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// timestampLayout is the canonical v1 timestamp: UTC with exactly nine fractional digits.
const timestampLayout = "2006-01-02T15:04:05.000000000Z"

// errTimestamp is wrapped by every timestamp parsing failure.
var errTimestamp = errors.New("not an RFC 3339 timestamp")

// ParseTime parses any RFC 3339 date-time (any offset, zero to nine fractional digits, upper-
// or lowercase T and Z). More than nine fractional digits would lose precision and is
// rejected, as are leap seconds and years outside 0000–9999.
func ParseTime(s string) (time.Time, error) {
	if len(s) < len("2006-01-02T15:04:05Z") || len(s) > 64 {
		return time.Time{}, fmt.Errorf("%w: want YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)", errTimestamp)
	}
	u := []byte(s)
	if u[10] == 't' {
		u[10] = 'T'
	}
	if u[len(u)-1] == 'z' {
		u[len(u)-1] = 'Z'
	}
	if u[10] != 'T' {
		return time.Time{}, fmt.Errorf("%w: date and time must be separated by T", errTimestamp)
	}
	// Count fractional digits ourselves: time.Parse accepts more than nine and truncates.
	if len(u) > 19 && u[19] == '.' {
		n := 0
		for i := 20; i < len(u) && u[i] >= '0' && u[i] <= '9'; i++ {
			n++
		}
		if n == 0 || n > 9 {
			return time.Time{}, fmt.Errorf("%w: 1 to 9 fractional digits", errTimestamp)
		}
	}
	t, err := time.Parse(time.RFC3339Nano, string(u))
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: want YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)", errTimestamp)
	}
	t = t.UTC()
	if t.Year() < 0 || t.Year() > 9999 {
		return time.Time{}, fmt.Errorf("%w: year out of range", errTimestamp)
	}
	return t, nil
}

// Timestamp normalises any RFC 3339 date-time to the canonical v1 form
// YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ (UTC, nine fractional digits).
func Timestamp(s string) (string, error) {
	t, err := ParseTime(s)
	if err != nil {
		return "", err
	}
	return FormatTime(t), nil
}

// FormatTime renders t in the canonical v1 timestamp form.
func FormatTime(t time.Time) string { return t.UTC().Format(timestampLayout) }

// EntityOrderKey is the reserved order key of the entity-body record: it sorts before every
// real timestamp's order key.
const EntityOrderKey = "00000000T000000000000000Z"

// OrderKey returns the filename order key YYYYMMDDTHHMMSSnnnnnnnnnZ of an RFC 3339 timestamp
// (normalised to UTC first).
func OrderKey(ts string) (string, error) {
	t, err := ParseTime(ts)
	if err != nil {
		return "", err
	}
	return OrderKeyOf(t), nil
}

// OrderKeyOf returns the order key of t.
func OrderKeyOf(t time.Time) string { return t.UTC().Format("20060102T150405") + fraction(t) }

// fraction renders the nine nanosecond digits and the Z.
func fraction(t time.Time) string {
	s := strconv.Itoa(t.Nanosecond())
	return strings.Repeat("0", 9-len(s)) + s + "Z"
}

// Record kinds used in key derivation.
const (
	KindEntity  = "entity"
	KindComment = "comment"
	KindReview  = "review"
	KindCheck   = "check"
	KindThread  = "thread"
)

// RecordKey is the lowercase hexadecimal SHA-256 of the four UTF-8 strings
// "<forge>://<host>", repositoryID, kind and id joined by single U+0000 bytes (no trailing
// U+0000). The inputs must already be canonical (see Host); RecordKey does not validate them.
func RecordKey(forge, host, repositoryID, kind, id string) string {
	h := sha256.New()
	h.Write([]byte(forge))
	h.Write([]byte("://"))
	h.Write([]byte(host))
	h.Write([]byte{0})
	h.Write([]byte(repositoryID))
	h.Write([]byte{0})
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write([]byte(id))
	return hex.EncodeToString(h.Sum(nil))
}

// errHost is wrapped by every source.host normalisation failure.
var errHost = errors.New("invalid source.host")

// Host normalises a forge location to source.host. It accepts either a URL with an http or
// https scheme (any path, query and userinfo are dropped; an explicit :443 is the default
// port and is omitted; a plain http URL without a port is served on :80, which is kept) or a bare host[:port], which must already be canonical apart from
// letter case: a bare ":443" is rejected because the default port is always omitted, so a
// value carrying it is not a v1 host. The result is the lowercase DNS name, with ":<port>"
// appended only for a port from 1 through 65535 other than 443. IP literals in brackets,
// empty labels and characters outside [a-z0-9.-] are rejected.
func Host(s string) (string, error) {
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			return "", fmt.Errorf("%w: not a parseable URL", errHost)
		}
		if u.Scheme != "https" && u.Scheme != "http" {
			return "", fmt.Errorf("%w: scheme must be https or http", errHost)
		}
		name, port := u.Hostname(), u.Port()
		if strings.Contains(u.Host, "[") {
			return "", fmt.Errorf("%w: IP-literal hosts are not v1 hosts", errHost)
		}
		if port == "" && u.Scheme == "http" {
			port = "80" // the port actually served is not the HTTPS default
		}
		if port == "443" {
			port = ""
		}
		return hostPort(name, port)
	}
	name, port := s, ""
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		name, port = s[:i], s[i+1:]
		if port == "" {
			return "", fmt.Errorf("%w: empty port", errHost)
		}
		if port == "443" {
			return "", fmt.Errorf("%w: the default port 443 must be omitted", errHost)
		}
	}
	return hostPort(name, port)
}

func hostPort(name, port string) (string, error) {
	name = strings.ToLower(name)
	if name == "" || len(name) > 253 {
		return "", fmt.Errorf("%w: empty or over-long host name", errHost)
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 {
			return "", fmt.Errorf("%w: empty or over-long DNS label", errHost)
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return "", fmt.Errorf("%w: host names use only a-z, 0-9, '-' and '.'", errHost)
			}
		}
	}
	if port == "" {
		return name, nil
	}
	if port[0] == '0' || len(port) > 5 {
		return "", fmt.Errorf("%w: port must be 1-65535 without leading zeroes", errHost)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
		return "", fmt.Errorf("%w: port must be 1-65535 without leading zeroes", errHost)
	}
	if n == 443 {
		return name, nil
	}
	return net.JoinHostPort(name, port), nil
}

// IsCanonicalHost reports whether h is already a canonical source.host value.
func IsCanonicalHost(h string) bool {
	if strings.Contains(h, "://") {
		return false
	}
	n, err := Host(h)
	return err == nil && n == h
}
