package bench

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKubemarkCommand(t *testing.T) {
	base := []string{"/bin/kubemark",
		"--morph=kubelet",
		"--name=node-3",
		"--kubeconfig=/kc",
		"--use-host-image-service=false",
		"--kubelet-port=0",
		"--kubelet-read-only-port=0",
		"--node-labels=" + NodeLabel + "=true",
	}
	for _, c := range []struct {
		name        string
		podsPerNode int
		extra       []string
		wantTail    []string
	}{
		{name: "within the default max-pods", podsPerNode: 110},
		{name: "more pods than the default max-pods", podsPerNode: 111, wantTail: []string{"--max-pods=111"}},
		{name: "max-pods given", podsPerNode: 500, extra: []string{"--max-pods", "200"}, wantTail: []string{"--max-pods", "200"}},
		{name: "max-pods given with =", podsPerNode: 500, extra: []string{"-max-pods=300"}, wantTail: []string{"-max-pods=300"}},
		{name: "other extra flags", podsPerNode: 1000, extra: []string{"--kube-api-qps=50"}, wantTail: []string{"--max-pods=1000", "--kube-api-qps=50"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := kubemarkCommand("/bin/kubemark", "/kc", "node-3", c.podsPerNode, c.extra)
			want := append(slices.Clone(base), c.wantTail...)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("command line (-want +got):\n%s", diff)
			}
		})
	}
	// Two nodes' command lines ask for no fixed port: every port flag is 0.
	for _, a := range kubemarkCommand("k", "kc", "n", 1, nil) {
		if strings.Contains(a, "port=") && !strings.HasSuffix(a, "=0") {
			t.Errorf("%s: a fixed port would stop a second hollow kubelet on the machine", a)
		}
	}
}

func TestCheckNodeIPSource(t *testing.T) {
	const v4Header = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
	const v6Default = "00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe800000000000000000000000000001 00000400 00000001 00000000 00000003 eth0\n"
	const v6LoOnly = "00000000000000000000000000000001 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000002 00000000 80200001 lo\n"
	for _, c := range []struct {
		name   string
		v4, v6 string
		ok     bool
	}{
		{name: "IPv4 default route", v4: v4Header + "eth0\t00000000\t0100000A\t0003\t0\t0\t0\t00000000\t0\t0\t0\n", ok: true},
		{name: "IPv4 default route down", v4: v4Header + "eth0\t00000000\t0100000A\t0002\t0\t0\t0\t00000000\t0\t0\t0\n"},
		{name: "IPv4 subnet route only", v4: v4Header + "eth0\t0000000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"},
		{name: "IPv6 default route", v4: v4Header, v6: v6Default, ok: true},
		{name: "loopback only", v4: v4Header, v6: v6LoOnly},
		{name: "empty tables", v4: v4Header},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkNodeIPSource(c.v4, c.v6)
			if c.ok != (err == nil) {
				t.Errorf("checkNodeIPSource = %v, want ok=%v", err, c.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "default route") {
				t.Errorf("error %q does not say what is missing", err)
			}
		})
	}
}

func TestKubemarkLeftovers(t *testing.T) {
	log := "I1126 03:43:00.320715   26603 hollow_kubelet.go:153] Using /tmp/hollow-kubelet.2966760838 as root dir for hollow-kubelet\nother line\n"
	owners := map[string]int{
		"/tmp/kubelet_remote_2.sock": 7,
		"/tmp/kubelet_remote_1.sock": 7,
		"/tmp/kubelet_remote_3.sock": 8,
	}
	got := kubemarkLeftovers(log, owners, 7)
	want := []string{"/tmp/hollow-kubelet.2966760838", "/tmp/kubelet_remote_1.sock", "/tmp/kubelet_remote_2.sock"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("leftovers (-want +got):\n%s", diff)
	}
	if got := kubemarkLeftovers("no root dir line\n", owners, 9); len(got) != 0 {
		t.Errorf("a process that logged no root dir and owns no socket leaves %v", got)
	}
}

// socketOwner finds the process that listens on a unix socket: here, this test.
func TestSocketOwner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Skipf("no unix socket here: %v", err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	pid, err := socketOwner(path)
	if err != nil || pid != os.Getpid() {
		t.Fatalf("socketOwner = %d, %v; want %d", pid, err, os.Getpid())
	}
	if _, err := socketOwner(filepath.Join(t.TempDir(), "none.sock")); err == nil {
		t.Error("socketOwner of a missing socket did not fail")
	}
}

func TestHasFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"--max-pods=5"}, true},
		{[]string{"-max-pods", "5"}, true},
		{[]string{"--max-pods-x=5"}, false},
		{[]string{"max-pods"}, false},
		{nil, false},
	} {
		if got := hasFlag(c.args, "max-pods"); got != c.want {
			t.Errorf("hasFlag(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}
