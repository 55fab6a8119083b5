package stage

// SetAfterCopy installs the hook Seal runs once the host tree is copied to dir (the sandbox
// copy, or the bind mount's private copy), before it is made read-only and verified.
func (s *Stage) SetAfterCopy(f func(dir string)) { s.afterCopy = f }

// StateDirOf returns the stage's private state entry.
func (s *Stage) StateDirOf() string { return s.stateDir }
