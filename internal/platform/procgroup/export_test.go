package procgroup

// CheckStatus exposes the /proc status parser.
func CheckStatus(pid int, status string) error { return checkStatus(pid, status) }
