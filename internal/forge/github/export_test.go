package github

import "github.com/forgectx/forgectx/internal/forge"

// Exported for the external tests of this package only.

// Listings returns the dependency map. The fault-matrix test iterates its paged listings, so
// a listing added here is a listing tested.
func Listings() forge.Listings { return listings }
