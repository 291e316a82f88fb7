// Command releasetool adds one module version, as it is at a git revision, to a module
// proxy laid out on disk (GOPROXY=file://DIR): DIR/<escaped module path>/@v/ gets the
// version's .zip, .mod and .info, and the version is added to list. release.sh uses it to
// compute the go.sum entries of a release commit, and internal/releasecheck/run.sh to
// serve the tagged modules to `go install` and `go get` as the public proxy would.
//
//	releasetool -git REPO -rev REV -subdir DIR -module PATH -version V -proxy PROXYDIR
//
// The zip is made by golang.org/x/mod/zip.CreateFromVCS, from the files git has at REV
// (what the go command's own VCS fetch zips), so the hash the go command computes from
// it is the hash a user of the published module gets.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "releasetool:", err)
		var ue usageError
		if errors.As(err, &ue) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// usageError is a bad command line, refused before anything is read or written.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// args are the command line's settings.
type args struct {
	repo, rev, subdir, modPath, version, proxy string
}

func parse(argv []string, stderr io.Writer) (args, error) {
	var a args
	fs := flag.NewFlagSet("releasetool", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&a.repo, "git", "", "git work tree or repository holding the module (required)")
	fs.StringVar(&a.rev, "rev", "", "git revision to zip (required)")
	fs.StringVar(&a.subdir, "subdir", "", "the module's directory in the repository; empty for the root")
	fs.StringVar(&a.modPath, "module", "", "the module path (required)")
	fs.StringVar(&a.version, "version", "", "the version to publish, a canonical semantic version (required)")
	fs.StringVar(&a.proxy, "proxy", "", "the proxy directory to add to (required)")
	if err := fs.Parse(argv); err != nil {
		return a, usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return a, usageError{fmt.Sprintf("unexpected arguments: %q", fs.Args())}
	}
	for _, f := range []struct{ name, v string }{{"git", a.repo}, {"rev", a.rev}, {"module", a.modPath}, {"version", a.version}, {"proxy", a.proxy}} {
		if f.v == "" {
			return a, usageError{"-" + f.name + " is required"}
		}
	}
	if semver.Canonical(a.version) != a.version {
		return a, usageError{fmt.Sprintf("-version %q: not a canonical semantic version (vMAJOR.MINOR.PATCH)", a.version)}
	}
	if err := module.Check(a.modPath, a.version); err != nil {
		return a, usageError{fmt.Sprintf("-module, -version: %v", err)}
	}
	if a.subdir != "" && (path.IsAbs(a.subdir) || path.Clean(a.subdir) != a.subdir || strings.HasPrefix(a.subdir, "..")) {
		return a, usageError{fmt.Sprintf("-subdir %q: want a clean relative path", a.subdir)}
	}
	return a, nil
}

func run(argv []string, stderr io.Writer) error {
	a, err := parse(argv, stderr)
	if err != nil {
		return err
	}
	escaped, err := module.EscapePath(a.modPath)
	if err != nil {
		return fmt.Errorf("-module: %w", err)
	}
	dir := filepath.Join(a.proxy, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	goMod := "go.mod"
	if a.subdir != "" {
		goMod = a.subdir + "/go.mod"
	}
	mod, err := git(a.repo, "show", a.rev+":"+goMod)
	if err != nil {
		return fmt.Errorf("%s at %s: %w", goMod, a.rev, err)
	}
	when, err := git(a.repo, "log", "-1", "--format=%cI", a.rev)
	if err != nil {
		return fmt.Errorf("time of %s: %w", a.rev, err)
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(string(when)))
	if err != nil {
		return fmt.Errorf("time of %s: %w", a.rev, err)
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{a.version, t.UTC()})
	if err != nil {
		return err
	}
	var zip bytes.Buffer
	m := module.Version{Path: a.modPath, Version: a.version}
	if err := modzip.CreateFromVCS(&zip, m, a.repo, a.rev, a.subdir); err != nil {
		return fmt.Errorf("zip of %s: %w", m, err)
	}
	for name, b := range map[string][]byte{".zip": zip.Bytes(), ".mod": mod, ".info": info} {
		if err := os.WriteFile(filepath.Join(dir, a.version+name), b, 0o644); err != nil {
			return err
		}
	}
	return addToList(filepath.Join(dir, "list"), a.version)
}

// addToList adds version to the proxy's list file of the module, once.
func addToList(file, version string) error {
	b, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	versions := strings.Fields(string(b))
	if !slices.Contains(versions, version) {
		versions = append(versions, version)
	}
	return os.WriteFile(file, []byte(strings.Join(versions, "\n")+"\n"), 0o644)
}

// git runs git in repo and returns its standard output.
func git(repo string, argv ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-C", repo}, argv...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
