package bench

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// kubemarkDefaultMaxPods is the hollow kubelet's --max-pods default (maxPods in
// k8s.io/kubernetes@v1.37.0/cmd/kubemark/app/hollow_node.go), the kubelet's own default.
const kubemarkDefaultMaxPods = 110

// kubemarkCommand is the command line of the hollow kubelet named node, against
// kubeconfig, for a run that binds podsPerNode pods to each node; extra
// (Config.AgentArgs) goes last, and a --max-pods in it wins.
//
// What stops several hollow kubelets from sharing one machine, and what each flag does
// about it (k8s.io/kubernetes@v1.37.0):
//
//   - The kubelet server is always on (EnableServer = true in GetHollowKubeletConfig,
//     pkg/kubemark/hollow_kubelet.go) at 0.0.0.0:10250 by default, and
//     ListenAndServeKubeletServer (pkg/kubelet/server/server.go) calls os.Exit(1) when it
//     cannot listen: the second hollow kubelet on the default port exits. --kubelet-port=0
//     has each one listen on a port the kernel picks.
//   - The read-only server (10255 by default) is started by startKubelet
//     (cmd/kubelet/app/server.go) only for a port > 0: --kubelet-read-only-port=0 turns
//     it off.
//   - The healthz port (10248) is served by the kubelet command's run
//     (cmd/kubelet/app/server.go), which the hollow node does not call (it calls
//     RunKubelet): nothing to do.
//   - --use-host-image-service=false: the default true dials containerd's socket
//     (ImageServiceEndpoint in GetHollowKubeletConfig), absent where no containerd runs;
//     false uses the fake runtime's image service.
//   - --node-labels marks the node with NodeLabel, so that the bench's cleanup deletes it
//     and its lease after the run, as it does the nodes it creates itself.
//   - --max-pods: the hollow kubelet admits 110 pods by default (kubemarkDefaultMaxPods)
//     and rejects the rest as OutOfpods (pkg/kubelet/lifecycle/predicate.go), so a run
//     with more pods per node raises it to podsPerNode.
//
// The root directory (/tmp/hollow-kubelet.*, made under a hard-coded /tmp by
// test/utils.MakeTempDirOrDie) and the fake runtime's socket
// (/tmp/kubelet_remote_<random>.sock, k8s.io/cri-client/pkg/fake/endpoint.go) differ per
// process; both are left behind when the process is killed (the hollow node handles no
// signal, so its deferred fakeRemoteRuntime.Stop never runs), and findKubemarkLeftovers
// finds them for removal. The node IP cannot be given (the hollow node has no --node-ip): see
// checkNodeIPSource.
func kubemarkCommand(bin, kubeconfig, node string, podsPerNode int, extra []string) []string {
	argv := []string{bin,
		"--morph=kubelet",
		"--name=" + node,
		"--kubeconfig=" + kubeconfig,
		"--use-host-image-service=false",
		"--kubelet-port=0",
		"--kubelet-read-only-port=0",
		"--node-labels=" + NodeLabel + "=true",
	}
	if podsPerNode > kubemarkDefaultMaxPods && !hasFlag(extra, "max-pods") {
		argv = append(argv, "--max-pods="+strconv.Itoa(podsPerNode))
	}
	return append(argv, extra...)
}

// hasFlag reports whether args set the flag name (-name, --name, with or without =value).
func hasFlag(args []string, name string) bool {
	return slices.ContainsFunc(args, func(a string) bool {
		f, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		return strings.HasPrefix(a, "-") && f == name
	})
}

// checkNodeIPSource returns an error when the hollow kubelet would find no node IP. It
// has no --node-ip flag, and its NodeAddress setter (pkg/kubelet/nodestatus/setters.go)
// takes, in order: the node name if it is an IP, the node name's DNS addresses that pass
// the kubelet's node IP validation (which refuses loopback), then the address of the
// interface of the default route (k8s.io/apimachinery/pkg/util/net ChooseHostInterface).
// The bench's node names do not resolve, so every hollow kubelet on the machine reports
// the default route's interface address; without a default route the node never gets an
// address. ipv4Route and ipv6Route are the contents of /proc/net/route and
// /proc/net/ipv6_route.
func checkNodeIPSource(ipv4Route, ipv6Route string) error {
	for i, line := range strings.Split(ipv4Route, "\n") {
		f := strings.Fields(line)
		// Iface Destination Gateway Flags ...; the first line is the header.
		if i == 0 || len(f) < 4 || f[0] == "lo" || f[1] != "00000000" {
			continue
		}
		if flags, err := strconv.ParseUint(f[3], 16, 32); err == nil && flags&1 != 0 { // RTF_UP
			return nil
		}
	}
	for line := range strings.SplitSeq(ipv6Route, "\n") {
		f := strings.Fields(line)
		// dest destlen src srclen nexthop metric refcnt use flags iface; no header.
		if len(f) == 10 && f[9] != "lo" && f[0] == strings.Repeat("0", 32) && f[1] == "00" {
			return nil
		}
	}
	return errors.New("this machine has no default route: the hollow kubelet (kubemark has no --node-ip flag) takes its node IP from the default route's interface, as the kubelet refuses a loopback node IP, so its node would get no address")
}

// readNodeIPSource reads the routing tables checkNodeIPSource needs.
func readNodeIPSource() error {
	v4, err := os.ReadFile("/proc/net/route")
	if err != nil {
		return fmt.Errorf("reading the routing table: %w", err)
	}
	v6, _ := os.ReadFile("/proc/net/ipv6_route") // absent without IPv6
	return checkNodeIPSource(string(v4), string(v6))
}

// rootDirLine is the hollow kubelet's log line naming its root directory
// (GetHollowKubeletConfig in pkg/kubemark/hollow_kubelet.go).
var rootDirLine = regexp.MustCompile(`Using (/\S*/hollow-kubelet\.[0-9]+) as root dir for hollow-kubelet`)

// fakeRuntimeSockets matches the fake runtime's sockets
// (k8s.io/cri-client/pkg/fake/endpoint.go).
const fakeRuntimeSockets = "/tmp/kubelet_remote_*.sock"

// kubemarkLeftovers returns what the hollow kubelet pid will leave behind: the root
// directory its log names, and the sockets that socketOwners (socket path → pid of the
// process listening on it) gives to pid.
func kubemarkLeftovers(log string, socketOwners map[string]int, pid int) []string {
	var out []string
	if m := rootDirLine.FindStringSubmatch(log); m != nil {
		out = append(out, m[1])
	}
	var socks []string
	for path, owner := range socketOwners {
		if owner == pid {
			socks = append(socks, path)
		}
	}
	slices.Sort(socks)
	return append(out, socks...)
}

// socketOwner returns the pid of the process listening on the unix socket path: the
// peer credentials (SO_PEERCRED) of a connection to it. The fake runtime's socket is
// bound under a temporary name and renamed (CreateListener in
// k8s.io/cri-client/pkg/util/util_unix.go), so /proc/net/unix does not show its path.
func socketOwner(path string) (int, error) {
	conn, err := net.DialTimeout("unix", path, time.Second)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	raw, err := conn.(*net.UnixConn).SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *syscall.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if credErr != nil {
		return 0, fmt.Errorf("peer of %s: %w", path, credErr)
	}
	return int(cred.Pid), nil
}

// findKubemarkLeftovers records on each process of p what its hollow kubelet will leave
// behind; called while they run, before they are stopped. A socket nobody listens on
// (left by another run, or being set up) is not touched.
func findKubemarkLeftovers(p *agentProc) {
	paths, _ := filepath.Glob(fakeRuntimeSockets)
	owners := map[string]int{}
	for _, path := range paths {
		if pid, err := socketOwner(path); err == nil {
			owners[path] = pid
		}
	}
	for _, c := range p.procs {
		log, _ := os.ReadFile(c.logPath)
		c.leftovers = kubemarkLeftovers(string(log), owners, c.cmd.Process.Pid)
	}
}

// startKubemark starts one hollow kubelet per node.
func (r *runner) startKubemark(run int, nodes []string) (*agentProc, error) {
	if err := readNodeIPSource(); err != nil {
		return nil, err
	}
	podsPerNode := (r.cfg.Pods + len(nodes) - 1) / len(nodes)
	p := &agentProc{kind: AgentKubemark}
	for _, n := range nodes {
		argv := kubemarkCommand(r.cfg.KubemarkBin, r.cfg.Kubeconfig, n, podsPerNode, r.cfg.AgentArgs)
		c, err := r.startProcess(AgentKubemark+" "+n, argv, filepath.Join(r.tmp, fmt.Sprintf("kubemark-run%d-%s.log", run, n)))
		if err != nil {
			return nil, errors.Join(err, p.stop())
		}
		p.procs = append(p.procs, c)
	}
	p.beforeStop = findKubemarkLeftovers
	return p, nil
}
