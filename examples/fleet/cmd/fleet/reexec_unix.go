//go:build unix

package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
)

// reexec executes the program again in this process (execve), with its arguments and
// environment, GODEBUG set to godebug. It returns only when it cannot.
func reexec(godebug string) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the program's executable: %w", err)
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GODEBUG=") })
	return syscall.Exec(exe, os.Args, append(env, "GODEBUG="+godebug))
}
