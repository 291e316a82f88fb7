package bench

import (
	"fmt"
	"os"
	"slices"
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
	// /proc/<pid>/status). For several processes, the sum of their peaks.
	PeakRSSBytes int64 `json:"peakRSSBytes"`
	// PrivateBytes is the memory no other process maps (Private_Clean + Private_Dirty in
	// /proc/<pid>/smaps_rollup) when it was read; for several processes, their sum. Unlike
	// RSS it does not count the pages of the binary that several processes of one
	// program share, so it is what each more process costs.
	PrivateBytes int64 `json:"privateBytes"`
	// Processes is how many processes were summed.
	Processes int `json:"processes"`
}

// add adds o's figures to st.
func (st *ProcStats) add(o ProcStats) {
	st.CPUSeconds += o.CPUSeconds
	st.PeakRSSBytes += o.PeakRSSBytes
	st.PrivateBytes += o.PrivateBytes
	st.Processes += o.Processes
}

// readProcStatsSum reads every pid and returns the sum of their figures.
func readProcStatsSum(pids []int) (ProcStats, error) {
	var sum ProcStats
	for _, pid := range pids {
		st, err := readProcStats(pid)
		if err != nil {
			return ProcStats{}, err
		}
		sum.add(st)
	}
	return sum, nil
}

// readProcStats reads the CPU time, peak RSS and private memory of pid from /proc
// (Linux only).
func readProcStats(pid int) (ProcStats, error) {
	st := ProcStats{Processes: 1}
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
	hwm, err := kbFields(string(status), "VmHWM")
	if err != nil {
		return st, fmt.Errorf("/proc/%d/status: %w", pid, err)
	}
	st.PeakRSSBytes = hwm["VmHWM"]

	rollup, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return st, fmt.Errorf("reading private memory of pid %d: %w", pid, err)
	}
	priv, err := kbFields(string(rollup), "Private_Clean", "Private_Dirty")
	if err != nil {
		return st, fmt.Errorf("/proc/%d/smaps_rollup: %w", pid, err)
	}
	st.PrivateBytes = priv["Private_Clean"] + priv["Private_Dirty"]
	return st, nil
}

// kbFields reads the "Name:   123 kB" lines of text (the format of /proc/<pid>/status
// and smaps_rollup) for names, in bytes; a name missing from text is an error.
func kbFields(text string, names ...string) (map[string]int64, error) {
	out := map[string]int64{}
	for line := range strings.SplitSeq(text, "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || !slices.Contains(names, name) {
			continue
		}
		fs := strings.Fields(rest)
		if len(fs) != 2 || fs[1] != "kB" {
			return nil, fmt.Errorf("%s: want \"N kB\", got %q", name, strings.TrimSpace(rest))
		}
		kb, err := strconv.ParseInt(fs[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[name] = kb * 1024
	}
	for _, n := range names {
		if _, ok := out[n]; !ok {
			return nil, fmt.Errorf("no %s", n)
		}
	}
	return out, nil
}
