package main

import (
	"strings"
)

// Keeping the Go runtime's monitor thread awake (--sysmon-awake).
//
// The runtime's monitor thread, sysmon, parks whenever no goroutine runs, and the next
// system call any goroutine makes wakes it (runtime/proc.go: entersyscall wakes it with
// a futex); once awake it polls every 20 µs and takes the P away from a system call that
// spans two polls (retake), which resets the 20 µs, until nothing runs again. An agent
// that waits on the API server between a few thousand small messages a second goes idle
// and busy again for nearly each of them. On 2 cores that cycle was a fifth of the
// agent's CPU while 10,000 pods were deleted: the monitor's thread used 67 of the
// process's 334 clock ticks over 20 s (/proc/PID/task/TID/stat), in some 650 nanosleeps,
// 330 futex calls and 70 sched_yields a second (strace -c on that thread), and waking it
// was another 5% of the CPU profile (runtime.entersyscallWakeSysmon).
//
// One setting of the runtime keeps sysmon from parking: GODEBUG=schedtrace=N
// (runtime/proc.go, sysmon: "sysmon should not enter deep sleep if schedtrace is
// enabled"). It then polls every 20 µs while it finds work, and backs off to one poll
// every 10 ms while it finds none: some 100 wake-ups a second when the agent is idle.
// N is the period of the scheduler trace sysmon prints, in milliseconds; at its largest,
// 2^31-1 (24.8 days), the trace never prints unless the machine has been up that long
// (the period counts from boot, CLOCK_MONOTONIC), and then one line every 24.8 days.
// The runtime reads the setting only at startup, so the program executes itself again
// with it (reexec, same process ID, arguments and environment).

// schedtraceNever is the GODEBUG setting that keeps sysmon awake (see above).
const schedtraceNever = "schedtrace=2147483647"

// sysmonGODEBUG returns the GODEBUG to execute the program again with (godebug, the
// current one, plus schedtraceNever), and whether to: not when godebug sets schedtrace
// already, as the program executed again does, or a user who wants the scheduler trace
// (or schedtrace=0, Go's default).
func sysmonGODEBUG(godebug string) (string, bool) {
	for _, kv := range strings.Split(godebug, ",") {
		if k, _, ok := strings.Cut(kv, "="); ok && strings.TrimSpace(k) == "schedtrace" {
			return "", false
		}
	}
	if strings.TrimSpace(godebug) == "" {
		return schedtraceNever, true
	}
	return godebug + "," + schedtraceNever, true
}
