package bench

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeKubemarkEnv, set in the environment, makes the test binary act as a hollow kubelet
// (TestMain): it makes a root directory under the directory the variable names and logs
// it as kubemark does, listens on a fake runtime socket in /tmp as kubemark does, and
// waits to be killed, leaving both behind.
const fakeKubemarkEnv = "FLEET_BENCH_FAKE_KUBEMARK_ROOT"

func TestMain(m *testing.M) {
	if root := os.Getenv(fakeKubemarkEnv); root != "" {
		fakeKubemark(root)
		return
	}
	os.Exit(m.Run())
}

func fakeKubemark(root string) {
	dir, err := os.MkdirTemp(root, "hollow-kubelet.")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "I1126 hollow_kubelet.go:153] Using %s as root dir for hollow-kubelet\n", dir)
	l, err := net.Listen("unix", fmt.Sprintf("/tmp/kubelet_remote_%d.sock", time.Now().UnixNano()))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "listening %s; args %q\n", l.Addr(), os.Args[1:])
	for {
		c, err := l.Accept()
		if err != nil {
			os.Exit(1)
		}
		c.Close()
	}
}

// The launcher starts one process per node with its command line, and stop removes
// what each left behind once it is killed: its root directory and its socket.
func TestKubemarkLauncherStartsOnePerNodeAndCleansUp(t *testing.T) {
	if err := readNodeIPSource(); err != nil {
		t.Skipf("the launcher refuses this machine, as it should: %v", err)
	}
	root := t.TempDir()
	t.Setenv(fakeKubemarkEnv, root)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{cfg: Config{KubemarkBin: self, Kubeconfig: "/kc", Pods: 3, Progress: io.Discard}, tmp: t.TempDir()}
	nodes := []string{"n-0", "n-1"}
	p, err := r.startKubemark(1, nodes)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = p.stop()
		}
	}()
	if len(p.procs) != len(nodes) {
		t.Fatalf("%d processes for %d nodes", len(p.procs), len(nodes))
	}
	// Wait (bounded) until each logged its socket, then read its log.
	logs := make([]string, len(nodes))
	deadline := time.Now().Add(20 * time.Second)
	for i, c := range p.procs {
		for !strings.Contains(logs[i], "listening") {
			if err := p.alive(); err != nil {
				t.Fatal(err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s did not start within 20 s; log %q", c.name, logs[i])
			}
			time.Sleep(20 * time.Millisecond)
			b, _ := os.ReadFile(c.logPath)
			logs[i] = string(b)
		}
		if !strings.Contains(logs[i], `"--name=`+nodes[i]+`"`) || !strings.Contains(logs[i], `"--kubelet-port=0"`) {
			t.Errorf("%s was started with the wrong command line: %s", c.name, logs[i])
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "hollow-kubelet.*"))
	if len(dirs) != len(nodes) {
		t.Fatalf("root directories %v, want one per node", dirs)
	}
	stopped = true
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
	var socks []string
	for _, c := range p.procs {
		if len(c.leftovers) != 2 {
			t.Errorf("%s: leftovers %v, want its root directory and its socket", c.name, c.leftovers)
		}
		socks = append(socks, c.leftovers...)
	}
	for _, path := range append(dirs, socks...) {
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("%s is still there after stop (%v)", path, err)
		}
	}
}
