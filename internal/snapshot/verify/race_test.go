//go:build race

package verify

// raceEnabled: the race detector allocates on its own, so allocation counts mean nothing.
const raceEnabled = true
