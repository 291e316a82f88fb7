package provider

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"

	"github.com/go-logr/logr"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	"github.com/virtual-kubelet/virtual-kubelet/node/nodeutil"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes"

	"github.com/podstatus/podstatus/podsim"
	"github.com/podstatus/podstatus/status"
	"github.com/podstatus/podstatus/vkstatus"
)

// TaintKey is the key of the NoSchedule taint the node carries when NodeConfig.Taint is
// set (the value is "podsim"), as virtual-kubelet nodes usually do: only pods that
// tolerate it run on the simulated node.
const TaintKey = "virtual-kubelet.io/provider"

// NodeConfig is what NewNode needs.
type NodeConfig struct {
	// Client talks to the API server. Required.
	Client kubernetes.Interface
	// Name is the node's name. Required.
	Name string
	// PodCIDR is the range pod IPs come from. Required.
	PodCIDR string
	// NodeIP is the node's InternalIP. Required.
	NodeIP string
	// Profile, Seed: the simulated runtime's (podsim.Config).
	Profile podsim.Profile
	Seed    uint64
	// Stock turns vkstatus off: virtual-kubelet writes the provider's statuses itself.
	Stock bool
	// Workers is how many pods virtual-kubelet's controller syncs at once. Default 1.
	Workers int
	// Taint puts the TaintKey NoSchedule taint on the node.
	Taint bool
	// FieldManager of the status writes (vkstatus.Options.FieldManager).
	FieldManager string
	// Status configures vkstatus's Manager (Observer, Clock, ...). Whether a pod's
	// containers could still run comes with each of the provider's status steps.
	Status status.Options
	// Logger receives the provider's errors.
	Logger logr.Logger
	// TLS, when set, serves virtual-kubelet's kubelet API (/runningpods/, /stats/summary,
	// ...) on NodeIP:KubeletPort, which the node advertises, so that the API server's
	// nodes/proxy reaches it. nil serves nothing.
	TLS         *tls.Config
	KubeletPort int32
}

// Node is a virtual-kubelet node served by a podsim Provider.
type Node struct {
	// VK is virtual-kubelet's node (its node and pod controllers).
	VK *nodeutil.Node
	// Provider runs the pods.
	Provider *Provider
	// Status is the vkstatus Client in virtual-kubelet's PodClient; nil in stock mode.
	Status *vkstatus.Client
}

// NewNode builds the node: virtual-kubelet's nodeutil.Node with the Provider, and, unless
// cfg.Stock, a vkstatus.Client in its PodClient fed by its pod informer. The error names
// the NodeConfig field at fault.
func NewNode(cfg NodeConfig) (*Node, error) {
	switch {
	case cfg.Client == nil:
		return nil, errors.New("provider: NewNode: NodeConfig.Client: Required value")
	case cfg.Name == "":
		return nil, errors.New("provider: NewNode: NodeConfig.Name: Required value")
	case cfg.NodeIP == "":
		return nil, errors.New("provider: NewNode: NodeConfig.NodeIP: Required value")
	}
	ipam, err := podsim.NewIPAM(cfg.PodCIDR)
	if err != nil {
		return nil, fmt.Errorf("provider: NewNode: NodeConfig.PodCIDR: %w", err)
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 1
	}
	n := &Node{}
	var provOnce sync.Once
	var provErr error
	newProvider := func(pc nodeutil.ProviderConfig) (nodeutil.Provider, node.NodeProvider, error) {
		provOnce.Do(func() {
			n.Provider, provErr = New(Config{Node: podsim.Node{Name: cfg.Name, HostIPs: []string{cfg.NodeIP}}, IPAM: ipam,
				Profile: cfg.Profile, Seed: cfg.Seed, Pods: pc.Pods, Status: n.Status, Logger: cfg.Logger})
		})
		return n.Provider, nil, provErr
	}
	if !cfg.Stock {
		n.Status = vkstatus.New(cfg.Client.CoreV1(), vkstatus.Options{FieldManager: cfg.FieldManager, Status: cfg.Status})
	}
	spec := v1.Node{}
	spec.Name = cfg.Name
	spec.Labels = map[string]string{"type": "virtual-kubelet", "kubernetes.io/role": "agent", "kubernetes.io/hostname": cfg.Name}
	spec.Spec.PodCIDR, spec.Spec.PodCIDRs = cfg.PodCIDR, []string{cfg.PodCIDR}
	if cfg.Taint {
		spec.Spec.Taints = []v1.Taint{{Key: TaintKey, Value: "podsim", Effect: v1.TaintEffectNoSchedule}}
	}
	spec.Status.Addresses = []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: cfg.NodeIP}}
	spec.Status.Capacity = v1.ResourceList{v1.ResourcePods: mustQuantity("110"), v1.ResourceCPU: mustQuantity("8"), v1.ResourceMemory: mustQuantity("32Gi")}
	spec.Status.Allocatable = spec.Status.Capacity
	spec.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady}, {Type: v1.NodeMemoryPressure}, {Type: v1.NodeDiskPressure}, {Type: v1.NodePIDPressure}, {Type: v1.NodeNetworkUnavailable}}
	opts := []nodeutil.NodeOpt{
		nodeutil.WithClient(cfg.Client),
		func(c *nodeutil.NodeConfig) error {
			c.NodeSpec = spec
			c.NumWorkers = cfg.Workers
			return nil
		},
	}
	if n.Status != nil {
		opts = append(opts, nodeutil.WithPodControllerConfigOverrides(n.Status.Wire))
	}
	if cfg.TLS != nil {
		spec.Status.DaemonEndpoints.KubeletEndpoint.Port = cfg.KubeletPort
		mux := http.NewServeMux()
		opts = append(opts, nodeutil.AttachProviderRoutes(mux), func(c *nodeutil.NodeConfig) error {
			c.NodeSpec = spec
			c.TLSConfig = cfg.TLS
			c.Handler = mux
			c.HTTPListenAddr = net.JoinHostPort(cfg.NodeIP, strconv.Itoa(int(cfg.KubeletPort)))
			return nil
		})
	}
	vk, err := nodeutil.NewNode(cfg.Name, newProvider, opts...)
	if err != nil {
		return nil, fmt.Errorf("provider: NewNode: %w", err)
	}
	n.VK = vk
	return n, nil
}

// Run runs the provider, vkstatus's Manager and the virtual-kubelet node until ctx is done
// or the node fails; when it returns, everything it started has stopped.
func (n *Node) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { _ = n.Provider.Run(ctx) })
	if n.Status != nil {
		wg.Go(func() { _ = n.Status.Run(ctx) })
	}
	err := n.VK.Run(ctx)
	cancel()
	wg.Wait()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }
