// Package readme checks that every Go snippet of the repository's README.md is code that
// compiles: each must appear, verbatim up to indentation and alignment, inside a test file
// of the repository (an Example or a helper it calls), where go vet and go test compile it.
package readme

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// normalize drops blank lines and collapses the whitespace of each line, so that a snippet
// matches its source whatever the indentation depth and gofmt's alignment.
func normalize(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			out = append(out, strings.Join(f, " "))
		}
	}
	return strings.Join(out, "\n")
}

// snippets returns the bodies of the README's ```go blocks.
func snippets(readme string) []string {
	var out []string
	for rest := readme; ; {
		i := strings.Index(rest, "```go\n")
		if i < 0 {
			return out
		}
		rest = rest[i+len("```go\n"):]
		j := strings.Index(rest, "```")
		if j < 0 {
			return out
		}
		out = append(out, rest[:j])
		rest = rest[j:]
	}
}

// withoutOutput drops "// Output:" lines, which Examples have and the README does not.
func withoutOutput(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "// Output:" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestREADMESnippetsAreCompiledCode(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var sources []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, "_test.go") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sources = append(sources, normalize(withoutOutput(string(b))))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	all := snippets(string(readme))
	if len(all) == 0 {
		t.Fatal("no ```go blocks found in README.md")
	}
	for i, s := range all {
		want := normalize(s)
		// A whole program is checked by its imports and its main's body.
		if strings.HasPrefix(want, "package main") {
			if k := strings.Index(want, "func main() {\n"); k >= 0 {
				want = strings.TrimSuffix(want[k+len("func main() {\n"):], "\n}")
			}
		}
		found := false
		for _, src := range sources {
			if strings.Contains(src, want) {
				found = true
				break
			}
		}
		if !found {
			first, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
			t.Errorf("README snippet %d (%q) is not in any test file: make it an Example", i+1, first)
		}
	}
}
