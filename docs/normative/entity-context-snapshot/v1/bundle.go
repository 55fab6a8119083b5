// Package ecsv1 embeds the project's entity-context-snapshot v1 schema bundle (the published
// bundle plus the spec's newer rules; see README.md beside this file) so the binary validates
// every emitted document without reading the file system or the network. It lives in the
// bundle's own directory because go:embed cannot reach outside a package directory.
package ecsv1

import "embed"

// FS holds every *.schema.json file of the bundle at its top level.
//
//go:embed *.schema.json
var FS embed.FS
