package reviewctx

import (
	"errors"
	"fmt"
)

// Environment variable names of the closed selectors (wire names, byte-exact).
const (
	EnvMode           = "OCR_REVIEW_CONTEXT_MODE"
	EnvProtectionMode = "OCR_GITLAB_TARGET_PROTECTION_MODE"
	EnvAdaptersJSON   = "OCR_REVIEW_CONTEXT_ADAPTERS_JSON"
)

// Mode is the OCR_REVIEW_CONTEXT_MODE selector.
type Mode string

// Modes. The empty value means ModeOff.
const (
	ModeOff      Mode = "off"
	ModeMetadata Mode = "metadata"
	ModeEnriched Mode = "enriched"
)

// ProtectionMode is the OCR_GITLAB_TARGET_PROTECTION_MODE selector.
type ProtectionMode string

// Protection modes. Unset means protectionRequired; there is no spelling of "required" in the
// environment, so only the exact value "unprotected" is accepted when the variable is set.
const (
	protectionRequired    ProtectionMode = "required"
	protectionUnprotected ProtectionMode = "unprotected"
)

// ErrSelector is wrapped by every selector rejection (exit 2 at the CLI).
var ErrSelector = errors.New("reviewctx: invalid selector")

// ErrUnprotectedTarget is the rejection of an unprotected target branch under the required
// protection mode, before any review.
var ErrUnprotectedTarget = errors.New("reviewctx: target branch is not protected (set OCR_GITLAB_TARGET_PROTECTION_MODE=unprotected to opt in to the constrained lifecycle)")

// ErrConstrained wraps every request the constrained (unprotected-target) lifecycle refuses.
var ErrConstrained = errors.New("reviewctx: refused by the constrained unprotected-target lifecycle")

// ParseMode reads OCR_REVIEW_CONTEXT_MODE: empty or off, metadata, enriched. Anything else —
// including other spellings or surrounding space — fails closed before any request.
func ParseMode(v string) (Mode, error) {
	switch v {
	case "", string(ModeOff):
		return ModeOff, nil
	case string(ModeMetadata):
		return ModeMetadata, nil
	case string(ModeEnriched):
		return ModeEnriched, nil
	}
	return "", fmt.Errorf("%w: %s: value not one of \"\", off, metadata, enriched", ErrSelector, EnvMode)
}

// ParseProtectionMode reads OCR_GITLAB_TARGET_PROTECTION_MODE: unset (present false) is
// required; the exact value unprotected opts in; anything else, the empty string included,
// fails closed.
func ParseProtectionMode(v string, present bool) (ProtectionMode, error) {
	if !present {
		return protectionRequired, nil
	}
	if v == string(protectionUnprotected) {
		return protectionUnprotected, nil
	}
	return "", fmt.Errorf("%w: %s: when set, the only accepted value is unprotected", ErrSelector, EnvProtectionMode)
}

// Lifecycle is the decided run shape.
type Lifecycle struct {
	Mode Mode
	// Protected is what GitLab reported for the target branch (never inferred).
	Protected bool
	// Constrained is the unprotected-target lifecycle: context off or bounded untrusted
	// metadata only, no policy, no store, no adapters, no discussions/remediation/CI, no
	// external MCP, and accepted decisions plus structured project guidance omitted.
	Constrained bool
}

// UsesPolicy reports whether the run loads the protected policy (enriched on a protected
// target only).
func (l Lifecycle) UsesPolicy() bool { return !l.Constrained && l.Mode == ModeEnriched }

// Decide combines the selectors with the protection state GitLab reported. adaptersSet is
// whether OCR_REVIEW_CONTEXT_ADAPTERS_JSON is present in the environment (any value, "[]"
// included, is an adapter setting).
func Decide(mode Mode, prot ProtectionMode, targetProtected, adaptersSet bool) (Lifecycle, error) {
	if targetProtected {
		return Lifecycle{Mode: mode, Protected: true}, nil
	}
	if prot != protectionUnprotected {
		return Lifecycle{}, ErrUnprotectedTarget
	}
	if mode == ModeEnriched {
		return Lifecycle{}, fmt.Errorf("%w: %s=enriched needs a protected target", ErrConstrained, EnvMode)
	}
	if adaptersSet {
		return Lifecycle{}, fmt.Errorf("%w: %s must be unset for an unprotected target", ErrConstrained, EnvAdaptersJSON)
	}
	return Lifecycle{Mode: mode, Protected: false, Constrained: true}, nil
}
