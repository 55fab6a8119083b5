package stage

// SetAfterVerify installs the hook Seal runs between verification and the copy.
func (s *Stage) SetAfterVerify(f func()) { s.afterVerify = f }

// CheckStatus exposes the /proc status parser.
func CheckStatus(pid int, status string) error { return checkStatus(pid, status) }

// StateDirOf returns the stage's private state entry.
func (s *Stage) StateDirOf() string { return s.stateDir }
