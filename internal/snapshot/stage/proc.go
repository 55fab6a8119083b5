package stage

import (
	"bytes"
	"errors"
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
