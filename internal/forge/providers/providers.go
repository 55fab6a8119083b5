// Package providers is the registration list of the forge registry (docs/architecture.md,
// "Package map": internal/forge owns the provider contract and registry). It is the only package
// that imports the forge adapters; importing it registers every forge of this build.
//
// Adding a forge is one new package under internal/forge/<name> exporting a forge.Provider and
// one line below (docs/forges.md, "Adding a forge").
package providers

import (
	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/forgejo"
	"github.com/forgectx/forgectx/internal/forge/github"
	"github.com/forgectx/forgectx/internal/forge/gitlab"
)

// The order is detection order: Forgejo runners also set GITHUB_ACTIONS=true, so Forgejo
// comes before GitHub.
func init() {
	forge.Register(forgejo.Provider())
	forge.Register(gitlab.Provider())
	forge.Register(github.Provider())
}
