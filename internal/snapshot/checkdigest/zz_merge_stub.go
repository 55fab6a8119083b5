// TEMPORARY: replaced at merge by the real digest.
package checkdigest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/forgectx/forgectx/internal/snapshot/verify"
)

// Check is one retained check whose log is in the tree, with the digest of that log.
type Check struct {
	Name, Conclusion, Path string
	Digest                 Digest
}

// Limits bounds a digest; the zero value is the defaults.
type Limits struct{}

// FromSnapshot returns one Check per retained check whose log is in the tree, in manifest
// order. This stand-in takes the last non-empty log line as the first error, category unknown.
func FromSnapshot(s *verify.Snapshot, lim Limits) ([]Check, error) {
	_ = lim
	var out []Check
	for _, r := range s.Manifest.Records {
		if r.Kind != "check" || r.LogPath == "" || r.MetadataPath == "" {
			continue
		}
		mb, err := s.ReadFile(r.MetadataPath)
		if err != nil {
			return nil, err
		}
		var md struct {
			Name       string `json:"name"`
			Conclusion string `json:"conclusion"`
		}
		if err := json.Unmarshal(mb, &md); err != nil {
			return nil, fmt.Errorf("checkdigest: %s: not a check metadata document", r.MetadataPath)
		}
		lb, err := s.ReadFile(r.LogPath)
		if err != nil {
			return nil, err
		}
		d := Digest{Format: "plain", Category: Unknown, Lines: []Line{}}
		lines := strings.Split(string(lb), "\n")
		for i := len(lines) - 1; i >= 0; i-- {
			if t := strings.TrimSpace(lines[i]); t != "" {
				d.FirstError = lines[i]
				d.Lines = []Line{{Number: i + 1, Text: lines[i], Key: true}}
				break
			}
		}
		out = append(out, Check{Name: md.Name, Conclusion: md.Conclusion, Path: r.LogPath, Digest: d})
	}
	return out, nil
}
