package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseRefusesBadInput: every bad command line is a usage error naming the flag,
// found before anything is read or written.
func TestParseRefusesBadInput(t *testing.T) {
	ok := []string{"-git", ".", "-rev", "HEAD", "-module", "example.com/m", "-version", "v0.1.0", "-proxy", "p"}
	with := func(flag, v string) []string {
		out := append([]string(nil), ok...)
		for i := range out {
			if out[i] == flag {
				out[i+1] = v
				return out
			}
		}
		return append(out, flag, v)
	}
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{with("-git", ""), "-git"},
		{with("-rev", ""), "-rev"},
		{with("-module", ""), "-module"},
		{with("-proxy", ""), "-proxy"},
		{with("-version", "0.1.0"), "-version"},
		{with("-version", "v0.1"), "-version"},
		{with("-module", "Example..com"), "-module"},
		{with("-subdir", "../x"), "-subdir"},
		{with("-subdir", "/abs"), "-subdir"},
		{with("-subdir", "a//b"), "-subdir"},
		{append(append([]string(nil), ok...), "extra"), "unexpected"},
		{with("-nosuchflag", "x"), "nosuchflag"},
	} {
		_, err := parse(tc.argv, io.Discard)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parse(%q) = %v, want a usage error naming %s", tc.argv, err, tc.want)
		}
	}
	if _, err := parse(with("-subdir", "a/b"), io.Discard); err != nil {
		t.Errorf("parse of a good command line: %v", err)
	}
}

// TestAddToListOnce: a version is listed once however often it is added, after the ones
// already there.
func TestAddToListOnce(t *testing.T) {
	file := filepath.Join(t.TempDir(), "list")
	for _, v := range []string{"v0.1.0", "v0.2.0", "v0.1.0"} {
		if err := addToList(file, v); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), "v0.1.0\nv0.2.0\n"; got != want {
		t.Errorf("list = %q, want %q", got, want)
	}
}
