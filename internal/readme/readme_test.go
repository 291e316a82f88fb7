// Package readme checks that every Go snippet of the repository's README.md and docs/*.md is
// code that compiles: each must appear, verbatim up to indentation and alignment, inside a test file
// of the repository (an Example or a helper it calls), where go vet and go test compile it.
package readme

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
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

// between returns each part of doc that follows start and ends where end (an index into
// what follows start, -1 when there is none) says.
func between(doc, start string, end func(string) int) []string {
	var out []string
	for rest := doc; ; {
		i := strings.Index(rest, start)
		if i < 0 {
			return out
		}
		rest = rest[i+len(start):]
		j := end(rest)
		if j < 0 {
			return out
		}
		out = append(out, rest[:j])
		rest = rest[j:]
	}
}

// snippets returns the bodies of a Markdown document's ```go blocks.
func snippets(doc string) []string {
	return between(doc, "```go\n", func(s string) int { return strings.Index(s, "```") })
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

// repoFiles returns the contents of the repository's files whose names end in suffix,
// by path from root, leaving out testdata and hidden directories.
func repoFiles(t *testing.T, root, suffix string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, suffix) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// documents returns the user documentation whose snippets and links are checked: the
// top-level README.md (which must have Go snippets) and docs/*.md, by path from root.
func documents(t *testing.T, root string) map[string]string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range append([]string{filepath.Join(root, "README.md")}, docs...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.ToSlash(rel)] = string(b)
	}
	return out
}

func TestREADMESnippetsAreCompiledCode(t *testing.T) {
	root := filepath.Join("..", "..")
	var sources []string
	for _, src := range repoFiles(t, root, "_test.go") {
		sources = append(sources, normalize(withoutOutput(src)))
	}
	docs := documents(t, root)
	if len(snippets(docs["README.md"])) == 0 {
		t.Fatal("no ```go blocks found in README.md")
	}
	for name, doc := range docs {
		for i, s := range snippets(doc) {
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
				t.Errorf("%s snippet %d (%q) is not in any test file: make it an Example", name, i+1, first)
			}
		}
	}
}

// links returns the targets of the Markdown links [text](target) in doc.
func links(doc string) []string {
	return between(doc, "](", func(s string) int { return strings.IndexAny(s, ") \n") })
}

// anchor is GitHub's anchor for a Markdown heading: lower case, punctuation but '-' and
// '_' dropped, spaces made '-'.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Every relative link of the repository's Markdown files names a file of the repository
// and, with a #fragment, one of its headings: the measurement reports moved out of the
// README (docs/) must stay reachable from it, and it and the examples' READMEs from them.
func TestDocumentLinksResolve(t *testing.T) {
	root := filepath.Join("..", "..")
	docs := documents(t, root)
	// The other Markdown files (the examples' READMEs, CONTRIBUTING.md, ...) link into
	// these and must resolve too.
	for name, doc := range repoFiles(t, root, ".md") {
		if _, ok := docs[name]; !ok {
			docs[name] = doc
		}
	}
	for _, want := range []string{"docs/performance.md", "docs/reliability.md"} {
		if _, ok := docs[want]; !ok {
			t.Errorf("%s is missing", want)
		}
		if !slices.Contains(links(docs["README.md"]), want) {
			t.Errorf("README.md does not link to %s", want)
		}
	}
	for name, doc := range docs {
		for _, l := range links(doc) {
			if strings.Contains(l, "://") || strings.HasPrefix(l, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(l, "#")
			target := filepath.Join(root, filepath.Dir(name), filepath.FromSlash(file))
			if file == "" {
				target = filepath.Join(root, name)
			}
			b, err := os.ReadFile(target)
			if err != nil {
				t.Errorf("%s links to %s: %v", name, l, err)
				continue
			}
			if frag == "" {
				continue
			}
			found := false
			for _, line := range strings.Split(string(b), "\n") {
				if h, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " "); ok && strings.HasPrefix(line, "#") && anchor(h) == frag {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("%s links to %s: no heading with anchor #%s", name, l, frag)
			}
		}
	}
}
