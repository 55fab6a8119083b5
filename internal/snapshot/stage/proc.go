package stage

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// processIdentity returns the kernel start time (clock ticks since boot, /proc/<pid>/stat
// field 22) of pid and the boot ID. Together with the PID they identify a process across PID
// reuse and reboots. Zero values mean unavailable (non-Linux).
func processIdentity(pid int) (uint64, string) {
	return startTicks(pid), bootID()
}

func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func startTicks(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) is in parentheses and may contain spaces: split after the
	// last ')'. Field 3 is then the first token; start time is field 22.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 20 {
		return 0
	}
	v, err := strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return 0
	}
	return v
}

// ownerAlive reports whether the process recorded in a state file is still running: same PID,
// same kernel start time, same boot. Without /proc it falls back to kill(pid, 0).
func ownerAlive(st stateFile) bool {
	if st.OwnerPID <= 0 {
		return false
	}
	if st.BootID != "" {
		if cur := bootID(); cur != "" && cur != st.BootID {
			return false // rebooted since: every process of that boot is gone
		}
	}
	if st.OwnerStart != 0 {
		if _, err := os.Stat("/proc/self/stat"); err == nil {
			return startTicks(st.OwnerPID) == st.OwnerStart
		}
	}
	err := syscall.Kill(st.OwnerPID, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

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

// CheckAgentProcess reads /proc/<pid>/status and fails unless the process runs with a non-zero
// real, effective, saved and filesystem UID and holds none of CAP_CHOWN, CAP_DAC_OVERRIDE,
// CAP_FOWNER, CAP_LINUX_IMMUTABLE or CAP_SYS_ADMIN in its effective, permitted or ambient sets.
// `forgectx run` calls it on the launched agent before handing it any input; a failure
// aborts the run.
func CheckAgentProcess(pid int) error {
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

// CheckAgentExecutable fails when the agent binary could regain privileges at exec: a
// set-user-ID or set-group-ID bit, or file capabilities (the security.capability attribute).
// An unprivileged UID loses every capability at execve unless the file grants them back.
func CheckAgentExecutable(path string) error {
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
