//go:build !unix

package main

import "errors"

// reexec cannot execute the program again in the same process on this system.
func reexec(string) error { return errors.ErrUnsupported }
