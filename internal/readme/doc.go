// Package readme holds no code: its tests check that every Go snippet of README.md and
// docs/*.md is compiled by some test file of the repository, and that their relative
// links resolve.
package readme
