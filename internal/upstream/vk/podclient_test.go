package vk

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node"
	"github.com/virtual-kubelet/virtual-kubelet/node/nodeutil"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
	kubeletstatus "k8s.io/kubernetes/pkg/kubelet/status"

	"github.com/podstatus/podstatus/internal/upstream/apiserver"
	"github.com/podstatus/podstatus/internal/upstream/kubeletcheck"
	"github.com/podstatus/podstatus/vkstatus"
)

// The behaviours of handProvider's pods, by the annotation handBehaviour.
const (
	handBehaviour = "test.podstatus.io/behaviour"
	// behaveSlow: the sandbox never comes; the containers wait in ContainerCreating.
	behaveSlow = "slow"
	// behaveStubborn: the containers run and ignore the deletion (they outlive the grace
	// period).
	behaveStubborn = "stubborn"
)

// handProvider is a virtual-kubelet provider of the most common kind, as
// virtual-kubelet's mock provider is: it knows nothing of the kubelet's rules and
// hand-writes each pod's status (Running with Ready, Initialized and PodScheduled True
// and a pod IP; Succeeded once deleted), reports it through NotifyPods and leaves the
// write to virtual-kubelet's PodClient. A vkstatus node swaps in vkstatus's Client
// there (Client.Wire) and nothing else.
type handProvider struct {
	// Provider's kubelet-API methods (logs, exec, stats) are never called: the node
	// serves no kubelet API. Its pod methods are handProvider's own.
	nodeutil.Provider
	mu     sync.Mutex
	pods   map[string]*v1.Pod
	notify func(*v1.Pod)
	nextIP int
}

var _ node.PodNotifier = (*handProvider)(nil)

func (p *handProvider) key(pod *v1.Pod) string { return pod.Namespace + "/" + pod.Name }

func (p *handProvider) CreatePod(_ context.Context, pod *v1.Pod) error {
	p.mu.Lock()
	out := pod.DeepCopy()
	now := metav1.Now()
	var cs []v1.ContainerStatus
	if pod.Annotations[handBehaviour] == behaveSlow {
		out.Status = v1.PodStatus{Phase: v1.PodPending}
		for _, c := range pod.Spec.Containers {
			cs = append(cs, v1.ContainerStatus{Name: c.Name, Image: c.Image,
				State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}}})
		}
	} else {
		p.nextIP++
		ip := fmt.Sprintf("10.244.3.%d", p.nextIP)
		out.Status = v1.PodStatus{Phase: v1.PodRunning, HostIP: "10.0.0.3", PodIP: ip, PodIPs: []v1.PodIP{{IP: ip}}, StartTime: &now,
			Conditions: []v1.PodCondition{
				{Type: v1.PodInitialized, Status: v1.ConditionTrue, LastTransitionTime: now},
				{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: now},
				{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: now},
			}}
		started := true
		for _, c := range pod.Spec.Containers {
			cs = append(cs, v1.ContainerStatus{Name: c.Name, Image: c.Image, Ready: true, Started: &started,
				ContainerID: "hand://" + c.Name, State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: now}}})
		}
	}
	out.Status.ContainerStatuses = cs
	p.pods[p.key(pod)] = out
	notify := p.notify
	p.mu.Unlock()
	notify(out.DeepCopy())
	return nil
}

func (p *handProvider) UpdatePod(context.Context, *v1.Pod) error { return nil }

func (p *handProvider) DeletePod(_ context.Context, pod *v1.Pod) error {
	p.mu.Lock()
	cur := p.pods[p.key(pod)]
	if cur == nil || pod.Annotations[handBehaviour] == behaveStubborn {
		p.mu.Unlock()
		return nil
	}
	out := cur.DeepCopy()
	now := metav1.Now()
	out.Status.Phase = v1.PodSucceeded
	out.Status.Reason = "ProviderDeleted"
	for i := range out.Status.ContainerStatuses {
		cs := &out.Status.ContainerStatuses[i]
		cs.Ready = false
		cs.State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{Reason: "Completed", FinishedAt: now, ContainerID: cs.ContainerID}}
	}
	p.pods[p.key(pod)] = out
	notify := p.notify
	p.mu.Unlock()
	notify(out.DeepCopy())
	return nil
}

func (p *handProvider) GetPod(_ context.Context, ns, name string) (*v1.Pod, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pod := p.pods[ns+"/"+name]; pod != nil {
		return pod.DeepCopy(), nil
	}
	return nil, notFound{}
}

func (p *handProvider) GetPodStatus(ctx context.Context, ns, name string) (*v1.PodStatus, error) {
	pod, err := p.GetPod(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	return &pod.Status, nil
}

func (p *handProvider) GetPods(context.Context) ([]*v1.Pod, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*v1.Pod
	for _, pod := range p.pods {
		out = append(out, pod.DeepCopy())
	}
	return out, nil
}

func (p *handProvider) NotifyPods(_ context.Context, f func(*v1.Pod)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notify = f
}

// notFound is virtual-kubelet's errdefs NotFound (it has a NotFound() bool method).
type notFound struct{}

func (notFound) Error() string  { return "pod not found" }
func (notFound) NotFound() bool { return true }

// handNode runs a handProvider on a virtual-kubelet node, with vkstatus's Client wired in
// (Client.Wire) unless stock.
type handNode struct {
	vk     *nodeutil.Node
	status *vkstatus.Client
}

func newHandNode(cs kubernetes.Interface, name string, stock bool) (*handNode, error) {
	n := &handNode{}
	prov := &handProvider{pods: map[string]*v1.Pod{}}
	opts := []nodeutil.NodeOpt{nodeutil.WithClient(cs), func(c *nodeutil.NodeConfig) error {
		c.NodeSpec.Status.Addresses = []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.3"}}
		c.NumWorkers = 1
		return nil
	}}
	if !stock {
		n.status = vkstatus.New(cs.CoreV1(), vkstatus.Options{FieldManager: name})
		opts = append(opts, nodeutil.WithPodControllerConfigOverrides(n.status.Wire))
	}
	vk, err := nodeutil.NewNode(name, func(nodeutil.ProviderConfig) (nodeutil.Provider, node.NodeProvider, error) {
		return prov, nil, nil
	}, opts...)
	if err != nil {
		return nil, err
	}
	n.vk = vk
	return n, nil
}

func (n *handNode) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	if n.status != nil {
		wg.Go(func() { _ = n.status.Run(ctx) })
	}
	err := n.vk.Run(ctx)
	cancel()
	wg.Wait()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// handFigures is what one write path did for a provider that hand-writes statuses.
type handFigures struct {
	mode string
	// firstPRTSC is the first written version's PodReadyToStartContainers of the pod
	// whose sandbox never comes; firstWant the kubelet's generator's for no sandbox.
	firstPRTSC, firstWant string
	// terminal reports, per pod, whether the last version before the DELETED event had a
	// terminal phase.
	terminal map[string]bool
	// checked, mismatches: watched versions with a status (not the creation) and those
	// unlike kubelet v1.37.0's generators (kubeletcheck.Diff) or without
	// PodReadyToStartContainers; firstMismatch the first.
	checked, mismatches int
	firstMismatch       string
}

// TestPodClientOnlyProvider runs a provider that only hand-writes statuses (handProvider:
// what most providers are) on virtual-kubelet v1.14.1 against kube-apiserver v1.37.0,
// once with the stock PodClient and once with vkstatus's Client wired in by Client.Wire,
// and checks with vkstatus: the first status of a pod without a sandbox has kubelet
// v1.37.0's PodReadyToStartContainers ("no pod sandbox exists",
// GeneratePodReadyToStartContainersCondition on a runtime status without sandboxes);
// every watched version has the generators' conditions; and a pod deleted before its
// containers started, one whose containers outlive the grace period and one the provider
// stops all have a terminal phase on the server before they disappear.
func TestPodClientOnlyProvider(t *testing.T) {
	srv := apiserver.Start(t)
	results := make([]handFigures, 2)
	for i, mode := range []string{"stock", "vkstatus"} {
		t.Run(mode, func(t *testing.T) { results[i] = runHand(t, srv, mode) })
	}
	t.Logf("| write path | first status of a pod without a sandbox: PodReadyToStartContainers (kubelet: %s) | terminal before delete: deleted before it started / containers outlive the grace period / stopped by the provider | versions unlike kubelet v1.37.0's generators |", results[0].firstWant)
	for _, f := range results {
		t.Logf("| %s | %s | %v / %v / %v | %d of %d |", f.mode, f.firstPRTSC,
			f.terminal["slow"], f.terminal["stubborn"], f.terminal["web"], f.mismatches, f.checked)
		if f.firstMismatch != "" {
			t.Logf("%s: first version unlike the generators: %s", f.mode, f.firstMismatch)
		}
	}
	vs := results[1]
	if vs.firstPRTSC != vs.firstWant {
		t.Errorf("vkstatus: first PodReadyToStartContainers %s, kubelet v1.37.0 %s", vs.firstPRTSC, vs.firstWant)
	}
	for _, name := range []string{"slow", "stubborn", "web"} {
		if !vs.terminal[name] {
			t.Errorf("vkstatus: pod %s disappeared without a terminal phase on the server", name)
		}
	}
	if vs.checked == 0 || vs.mismatches != 0 {
		t.Errorf("vkstatus: %d of %d watched versions unlike kubelet v1.37.0's generators; first: %s", vs.mismatches, vs.checked, vs.firstMismatch)
	}
}

func runHand(t *testing.T, srv *apiserver.Server, mode string) handFigures {
	f := handFigures{mode: mode, terminal: map[string]bool{}}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	nodeName := "vk-hand-" + mode
	n, err := newHandNode(srv.NewClient(t, nodeName), nodeName, mode == "stock")
	if err != nil {
		t.Error(err)
		return f
	}
	runDone := make(chan struct{})
	go func() { defer close(runDone); _ = n.Run(ctx) }()
	defer func() { cancel(); <-runDone }()
	if err := n.vk.WaitReady(ctx, 30*time.Second); err != nil {
		t.Errorf("%s: node not ready: %v", mode, err)
		return f
	}
	other := srv.NewClient(t, "other-controller")
	ns := srv.CreateNamespace(t, "hand-"+mode+"-").Name
	w, err := other.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Error(err)
		return f
	}
	defer w.Stop()

	last := map[string]*v1.Pod{}
	var versions []*v1.Pod
	// next reads watch events until until is true of one (the pod of a DELETED event is
	// passed with deleted set) or the timeout passes.
	next := func(timeout time.Duration, until func(p *v1.Pod, deleted bool) bool) bool {
		deadline := time.After(timeout)
		for {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					return false
				}
				p, ok := ev.Object.(*v1.Pod)
				if !ok {
					continue
				}
				deleted := ev.Type == watch.Deleted
				if deleted {
					if prev := last[p.Name]; prev != nil {
						f.terminal[p.Name] = prev.Status.Phase == v1.PodSucceeded || prev.Status.Phase == v1.PodFailed
					}
				} else {
					last[p.Name] = p
					if len(p.Status.ContainerStatuses) > 0 {
						versions = append(versions, p)
					}
				}
				if until(p, deleted) {
					return true
				}
			case <-deadline:
				return false
			}
		}
	}
	grace := int64(2)
	newPod := func(name, behaviour string) *v1.Pod {
		p := apiserver.NewPod(ns, name, nodeName)
		p.Annotations = map[string]string{handBehaviour: behaviour}
		p.Spec.TerminationGracePeriodSeconds = &grace
		return srv.CreatePod(t, p)
	}
	hasStatus := func(name string) func(*v1.Pod, bool) bool {
		return func(p *v1.Pod, deleted bool) bool {
			return !deleted && p.Name == name && len(p.Status.ContainerStatuses) > 0
		}
	}
	gone := func(name string) func(*v1.Pod, bool) bool {
		return func(p *v1.Pod, deleted bool) bool { return deleted && p.Name == name }
	}
	del := func(name string) {
		if err := other.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("%s: delete %s: %v", mode, name, err)
		}
	}

	// A pod whose sandbox never comes: its first status, then its deletion (virtual-kubelet
	// force-deletes it at once: no container runs).
	slow := newPod("slow", behaveSlow)
	if !next(20*time.Second, hasStatus("slow")) {
		t.Errorf("%s: no status for the pod without a sandbox", mode)
		return f
	}
	first := last["slow"]
	f.firstPRTSC = keyOf(kubeletcheck.Find(first.Status.Conditions, v1.PodReadyToStartContainers))
	want := kubeletstatus.GeneratePodReadyToStartContainersCondition(slow, &slow.Status, &kubecontainer.PodStatus{ID: slow.UID, Name: slow.Name, Namespace: ns})
	f.firstWant = kubeletcheck.Key(want)
	del("slow")
	if !next(30*time.Second, gone("slow")) {
		t.Errorf("%s: the pod without a sandbox was not deleted within 30 s", mode)
	}

	// A pod whose containers outlive the grace period: virtual-kubelet force-deletes it
	// when the grace period ends.
	newPod("stubborn", behaveStubborn)
	if !next(20*time.Second, func(p *v1.Pod, deleted bool) bool {
		return !deleted && p.Name == "stubborn" && p.Status.Phase == v1.PodRunning
	}) {
		t.Errorf("%s: the stubborn pod never ran", mode)
		return f
	}
	del("stubborn")
	if !next(30*time.Second, gone("stubborn")) {
		t.Errorf("%s: the stubborn pod was not deleted within 30 s", mode)
	}

	// A pod the provider stops when it is deleted.
	newPod("web", "")
	if !next(20*time.Second, func(p *v1.Pod, deleted bool) bool {
		return !deleted && p.Name == "web" && p.Status.Phase == v1.PodRunning
	}) {
		t.Errorf("%s: the web pod never ran", mode)
		return f
	}
	del("web")
	if !next(30*time.Second, gone("web")) {
		t.Errorf("%s: the web pod was not deleted within 30 s", mode)
	}

	foreign := func(v1.PodConditionType) bool { return false }
	for _, p := range versions {
		f.checked++
		diffs, _ := kubeletcheck.Diff(p, foreign)
		if kubeletcheck.Find(p.Status.Conditions, v1.PodReadyToStartContainers) == nil {
			diffs = append(diffs, "PodReadyToStartContainers missing")
		}
		if len(diffs) > 0 {
			f.mismatches++
			if f.firstMismatch == "" {
				f.firstMismatch = fmt.Sprintf("%s rv %s phase %s: %v", p.Name, p.ResourceVersion, p.Status.Phase, diffs)
			}
		}
	}
	return f
}

func keyOf(c *v1.PodCondition) string {
	if c == nil {
		return "<missing>"
	}
	return kubeletcheck.Key(*c)
}
