// Package readme holds no code: its test checks that every Go snippet of README.md is
// compiled by some test file of the repository.
package readme
