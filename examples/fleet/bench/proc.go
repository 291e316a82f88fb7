package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of the CPU times in /proc/<pid>/stat: 100 on every
// Linux architecture Go supports (sysconf(_SC_CLK_TCK)).
const clockTicks = 100

// ProcStats is what /proc says about a process on this machine.
type ProcStats struct {
	// CPUSeconds is user + system time of the process and of its waited-for children
	// (utime+stime+cutime+cstime in /proc/<pid>/stat).
	CPUSeconds float64 `json:"cpuSeconds"`
	// PeakRSSBytes is the peak resident set size since the process started (VmHWM in
	// /proc/<pid>/status).
	PeakRSSBytes int64 `json:"peakRSSBytes"`
}

// readProcStats reads the CPU time and peak RSS of pid from /proc (Linux only).
func readProcStats(pid int) (ProcStats, error) {
	var st ProcStats
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return st, fmt.Errorf("reading CPU time of pid %d: %w", pid, err)
	}
	// The command name (field 2) is in parentheses and may contain spaces; the fields
	// after its closing parenthesis start with field 3 (state).
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return st, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 15 {
		return st, fmt.Errorf("short /proc/%d/stat", pid)
	}
	var ticks int64
	for _, idx := range []int{11, 12, 13, 14} { // utime, stime, cutime, cstime (fields 14-17)
		v, err := strconv.ParseInt(f[idx], 10, 64)
		if err != nil {
			return st, fmt.Errorf("/proc/%d/stat field %d: %w", pid, idx+3, err)
		}
		ticks += v
	}
	st.CPUSeconds = float64(ticks) / clockTicks

	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return st, fmt.Errorf("reading peak RSS of pid %d: %w", pid, err)
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			fs := strings.Fields(rest)
			if len(fs) >= 1 {
				kb, err := strconv.ParseInt(fs[0], 10, 64)
				if err != nil {
					return st, fmt.Errorf("/proc/%d/status VmHWM: %w", pid, err)
				}
				st.PeakRSSBytes = kb * 1024
			}
		}
	}
	return st, nil
}
