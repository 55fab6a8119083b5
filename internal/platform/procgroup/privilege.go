package procgroup

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The one check that a child holds no privilege. Its messages keep the "stage:" prefix they
// had when the sealed snapshot's package owned the check: logs and statuses stay byte-identical.

// Capability bits that override file permission checks or ownership, or let a process undo a
// read-only mount: with any of them an agent could write the sandbox copy.
var writeOverridingCaps = []struct {
	bit  uint
	name string
}{
	{0, "CAP_CHOWN"},
	{1, "CAP_DAC_OVERRIDE"},
	{3, "CAP_FOWNER"},
	{9, "CAP_LINUX_IMMUTABLE"},
	{21, "CAP_SYS_ADMIN"},
}

// AgentCapabilityError: a process that must run as the unprivileged agent holds a
// write-overriding capability or runs as root.
type AgentCapabilityError struct {
	PID    int
	Reason string
}

func (e *AgentCapabilityError) Error() string {
	return fmt.Sprintf("stage: agent process %d is not unprivileged: %s", e.PID, e.Reason)
}

// CheckProcess reads /proc/<pid>/status and fails unless the process runs with a non-zero
// real, effective, saved and filesystem UID and holds none of CAP_CHOWN, CAP_DAC_OVERRIDE,
// CAP_FOWNER, CAP_LINUX_IMMUTABLE or CAP_SYS_ADMIN in its effective, permitted or ambient sets.
// Run applies it to a Spec.Unprivileged child right after the start: the agent of
// `forgectx run` and the engine of `review-context run`.
func CheckProcess(pid int) error {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return &AgentCapabilityError{PID: pid, Reason: "its /proc status cannot be read"}
	}
	return checkStatus(pid, string(b))
}

func checkStatus(pid int, status string) error {
	seen := map[string]bool{}
	for _, line := range strings.Split(status, "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		switch key {
		case "Uid":
			seen[key] = true
			for _, f := range strings.Fields(val) {
				if f == "0" {
					return &AgentCapabilityError{PID: pid, Reason: "it runs with UID 0"}
				}
			}
		case "CapEff", "CapPrm", "CapAmb":
			seen[key] = true
			mask, err := strconv.ParseUint(val, 16, 64)
			if err != nil {
				return &AgentCapabilityError{PID: pid, Reason: key + " is unreadable"}
			}
			for _, c := range writeOverridingCaps {
				if mask&(1<<c.bit) != 0 {
					return &AgentCapabilityError{PID: pid, Reason: fmt.Sprintf("%s holds %s", key, c.name)}
				}
			}
		}
	}
	for _, k := range []string{"Uid", "CapEff", "CapPrm", "CapAmb"} {
		if !seen[k] {
			return &AgentCapabilityError{PID: pid, Reason: "its /proc status has no " + k + " line"}
		}
	}
	return nil
}

// CheckExecutable fails when the agent binary could regain privileges at exec: a
// set-user-ID or set-group-ID bit, or file capabilities (the security.capability attribute).
// An unprivileged UID loses every capability at execve unless the file grants them back.
func CheckExecutable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("stage: agent executable: %w", err)
	}
	if fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
		return &AgentCapabilityError{Reason: path + " is set-user-ID or set-group-ID"}
	}
	n, err := getxattr(path, "security.capability")
	if err == nil && n > 0 {
		return &AgentCapabilityError{Reason: path + " carries file capabilities"}
	}
	return nil
}
