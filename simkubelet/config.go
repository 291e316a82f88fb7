package simkubelet

import (
	"fmt"
	"math"
	"net/netip"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/podstatus/podstatus"
	"github.com/podstatus/podstatus/features"
	"github.com/podstatus/podstatus/podsim"
	"github.com/podstatus/podstatus/podstate"
	"github.com/podstatus/podstatus/status"
)

// Defaults of Options's zero values.
const (
	// DefaultNodeNamePrefix names the nodes the agent creates: fleet-node-0, fleet-node-1, ...
	DefaultNodeNamePrefix = "fleet-node-"
	// DefaultMaxPods is the kubelet's --max-pods.
	DefaultMaxPods = 110
	// DefaultNodeLeaseDurationSeconds is the kubelet's --node-lease-duration-seconds.
	DefaultNodeLeaseDurationSeconds = 40
	// DefaultNodeStatusUpdateFrequency is the kubelet's nodeStatusUpdateFrequency: how
	// often node statuses are computed (and sent only when changed or due).
	DefaultNodeStatusUpdateFrequency = 10 * time.Second
	// DefaultNodeStatusReportFrequency is the kubelet's nodeStatusReportFrequency: an
	// unchanged node status is sent this often, the Lease carrying the heartbeat between.
	DefaultNodeStatusReportFrequency = 5 * time.Minute
	// DefaultWorkers is how many pods are stepped at once.
	DefaultWorkers = 8
	// DefaultStatusWorkers is status.Options.Workers: how many PATCHes are in flight. The
	// Manager's workers wait on the API server's latency, not its CPU (at 100,000 pods all
	// of them sat in PATCH round trips while the server had capacity left), so more of
	// them finish a burst sooner and in fewer sync rounds.
	DefaultStatusWorkers = 32
	// DefaultProgressInterval is how often a progress line is logged.
	DefaultProgressInterval = 10 * time.Second
	// DefaultShutdownTimeout bounds the final flush of pending statuses.
	DefaultShutdownTimeout = 10 * time.Second
)

// Options configures Run. Only RESTConfig is required; every other zero value is the
// default, and a negative count is an error (a count is never "0 means default" for one
// field and an error for another). Validate (and Run) report invalid values as a
// *podstatus.InputError whose field paths are Go paths (Options.MaxPods); the fleet
// command maps them to its flags (--max-pods). The node selection fields mirror KWOK's
// flags of the same names.
type Options struct {
	// QPS and Burst are the client-side rate limit. Zero QPS means no client-side limit
	// (what KWOK users expect from a simulator); a positive QPS uses client-go's token
	// bucket with Burst (default 2·QPS).
	QPS   float32
	Burst int

	// Nodes is how many Node objects the agent creates (or takes over if they exist):
	// NodeNamePrefix followed by 0 .. Nodes-1.
	Nodes int
	// NodeNamePrefix defaults to DefaultNodeNamePrefix. With the node numbers after it,
	// it must make valid Node names (DNS-1123 subdomains: lower case alphanumerics, '-'
	// and '.').
	NodeNamePrefix string
	// ManageAllNodes adopts every node of the cluster.
	ManageAllNodes bool
	// ManageSingleNode adopts the node of that name. When no node of the cluster matches
	// the selection fields after the first list, Run logs it at error level and waits for
	// one to appear.
	ManageSingleNode string
	// ManageNodesWithLabelSelector adopts the nodes whose labels match (a label selector,
	// for example "type=kwok").
	ManageNodesWithLabelSelector string
	// ManageNodesWithAnnotationSelector adopts the nodes whose annotations match (label
	// selector syntax over annotations, for example "kwok.x-k8s.io/node=fake").
	ManageNodesWithAnnotationSelector string
	// NodeIP is the InternalIP of every node the agent creates, and of adopted nodes
	// without an InternalIP address; it must parse as an IP address. Default: a distinct
	// address per node in 172.16.0.0/12.
	NodeIP string
	// CIDR is the pod address range of the managed nodes that have no spec.podCIDR
	// (KWOK's --cidr): one pool shared by all of them, so its size bounds how many pods
	// they hold together. Default: a /14 (262,141 pods) the agent picks free of the
	// cluster's pod CIDRs and apart from other agents' as it picks the CIDRs of the nodes
	// it creates.
	CIDR string
	// MaxPods is the pod capacity of the nodes the agent creates, as the kubelet's
	// --max-pods; it also sizes their pod CIDR (a /24 up to 253 pods, larger beyond).
	// Default 110, the kubelet's. Raise it to pack more pods on a node. An adopted node
	// keeps the capacity it declares; one that declares none is given as many pods as
	// its pod addresses (its spec.podCIDR, else the CIDR pool), as KWOK gives its nodes
	// room for a million. A node that declares a pod capacity (the nodes the agent
	// creates, and adopted nodes whose allocatable or capacity pods are set) admits pods
	// as the kubelet does: a pod beyond it gets phase Failed with reason ReasonOutOfPods;
	// a node that declares none is bounded by its pod addresses only.
	MaxPods int
	// NodeLeaseDurationSeconds is each node Lease's leaseDurationSeconds; the Lease is
	// renewed every quarter of it, as the kubelet does. Default 40.
	NodeLeaseDurationSeconds int32
	// NodeStatusUpdateFrequency and NodeStatusReportFrequency are the kubelet's settings
	// of the same names. Defaults 10 s and 5 min: every NodeStatusUpdateFrequency the
	// agent compares each node's status on the server (its node informer's copy) with
	// what it owns, and PATCHes it when they differ (a node the node-lifecycle controller
	// marked Unknown while the agent was paused is Ready again within it) or when
	// NodeStatusReportFrequency has passed since the last report.
	NodeStatusUpdateFrequency, NodeStatusReportFrequency time.Duration

	// Identity names this agent to other agents: it is written on the Lease of every
	// node the agent runs (annotation LeaseAnnotationAgent). An agent that finds a node's
	// Lease still renewed under another Identity (or by a kubelet) does not run the
	// node: Run returns a *NodeHeldError for a node of Nodes. The same Identity is the
	// same agent restarted: it takes its nodes at once. Give each agent of a deployment
	// its own, stable across its restarts. Default: the host name (a StatefulSet pod's
	// name).
	Identity string

	// Profile names the podsim profile of every node: "default" ("") or "fast". A pod's
	// sim.podstatus.io/profile annotation overrides it.
	Profile string
	// Seed makes the simulated timings reproducible.
	Seed uint64
	// Behaviors choose how the pods they match run, from Go (see Behavior); the first
	// that matches a pod wins, and a pod no Behavior matches runs as the node's Profile
	// and its own sim.podstatus.io/ annotations say. Kubelet.SetBehaviors replaces the
	// list while the kubelet runs.
	Behaviors []Behavior
	// BindPods makes the kubelet bind the pods that no scheduler will bind (an envtest or
	// a bare API server runs none) to its nodes, through the binding subresource as the
	// scheduler does: a pod without spec.nodeName whose spec.schedulerName is one of
	// BindSchedulerNames goes to a managed node whose labels match its
	// spec.nodeSelector and that has room for it (the fewest pods bound by this kubelet
	// first). A pod no node fits stays unbound and is tried again when the kubelet's
	// nodes change. Taints, affinity and resource requests are not considered: run the
	// real kube-scheduler for those.
	BindPods bool
	// BindSchedulerNames are the schedulers whose pods BindPods binds. Default
	// ["default-scheduler"], the name the API server gives a pod that names none.
	BindSchedulerNames []string
	// Workers is how many pods are stepped at once (DefaultWorkers); StatusWorkers is
	// status.Options.Workers (DefaultStatusWorkers).
	Workers, StatusWorkers int

	// Logger receives the agent's logs; V(1) and up for details. Default: the logger of
	// Run's context (logr.FromContext), else none.
	Logger logr.Logger
	// Registerer, when non-nil, gets the agent's Prometheus collectors: the status
	// manager's (status/promobserver), requests by verb and code, and pods by phase.
	Registerer prometheus.Registerer
	// ProgressInterval is how often a progress line is logged at V(0). Default
	// DefaultProgressInterval; negative turns it off.
	ProgressInterval time.Duration
	// ShutdownTimeout bounds the flush of pending statuses after the context is done.
	// Default DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// Clock is the time source of the simulation, the node loops and the status
	// Manager's timestamps and backoff. Default: the real clock.
	Clock clock.WithTicker
	// Features selects the Kubernetes version whose kubelet the agent behaves as: the
	// simulated runtime's rules (podsim.Config.Features) and the status Manager's
	// (status.Options.Features). The zero value is v1.37.0 with its default gates.
	Features features.Set
	// StatusRetry is the status Manager's backoff after a failed request
	// (status.Options.Retry). The zero value is the Manager's default: 500 ms doubling
	// to 1 minute, with jitter and a random seed per agent.
	StatusRetry status.RetryOptions

	// OnStatus, when non-nil, is called after every status the agent generates, with the
	// pod as the informer had it, the input given to podstate.Generate and its result,
	// before the status goes to the status manager. It is for tests and tracing; it is
	// called from the pod workers and must return quickly.
	OnStatus func(pod *v1.Pod, in podstate.Input, status v1.PodStatus)
	// OnRunning, when non-nil, is called once, when Run has created or taken over the
	// nodes of Nodes (those the API server did not reject) and its pod informer has
	// listed the pods: the agent serves from then on. The fleet command's /readyz answers
	// 200 from then on, so that a StatefulSet with podManagementPolicy OrderedReady starts
	// the next replica only once this one's nodes exist (and their addresses are taken).
	OnRunning func(RunningEvent)
}

// RunningEvent is Options.OnRunning's argument.
type RunningEvent struct {
	// Nodes is how many nodes the agent manages at that moment.
	Nodes int
}

// resolved is a Options with its defaults applied and its strings parsed.
type resolved struct {
	Options
	// RESTConfig reaches the API server (New's argument). Run copies it before changing
	// QPS, Burst or the transport.
	RESTConfig *rest.Config
	profile    podsim.Profile
	labelSel   labels.Selector
	annoSel    labels.Selector
	adoptNodes bool
}

// Validate reports what Run would reject in c, without connecting anywhere: the same
// *podstatus.InputError (it matches podstatus.ErrInvalidInput), whose field paths are the
// Go paths of the bad fields (Options.MaxPods). A nil RESTConfig is the one problem it does
// not report, so that a program can check its flags before it loads a kubeconfig.
func (c Options) Validate() error {
	_, errs := c.resolveFields()
	return wrapInput(errs)
}

func wrapInput(errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("simkubelet: %w", &podstatus.InputError{Errs: errs})
}

func (c Options) resolve(rc *rest.Config) (resolved, error) {
	r, errs := c.resolveFields()
	r.RESTConfig = rc
	if rc == nil {
		errs = append(errs, field.Required(field.NewPath("restConfig"), ""))
	}
	return r, wrapInput(errs)
}

// resolveFields applies the defaults and parses the strings, listing every problem.
func (c Options) resolveFields() (resolved, field.ErrorList) {
	r := resolved{Options: c}
	var errs field.ErrorList
	path := field.NewPath("Options")
	if c.Nodes < 0 {
		errs = append(errs, field.Invalid(path.Child("Nodes"), c.Nodes, "must not be negative"))
	}
	if r.NodeNamePrefix == "" {
		r.NodeNamePrefix = DefaultNodeNamePrefix
	}
	// Every node name the agent creates must be a valid Node name (a DNS-1123
	// subdomain), or the API server answers 422 to every attempt.
	if c.Nodes > 0 {
		for _, name := range []string{r.NodeNamePrefix + "0", fmt.Sprintf("%s%d", r.NodeNamePrefix, c.Nodes-1)} {
			for _, msg := range validation.IsDNS1123Subdomain(name) {
				errs = append(errs, field.Invalid(path.Child("NodeNamePrefix"), r.NodeNamePrefix, fmt.Sprintf("node name %q: %s", name, msg)))
			}
		}
	}
	if c.CIDR != "" {
		if _, err := podsim.NewIPAM(c.CIDR); err != nil {
			errs = append(errs, field.Invalid(path.Child("CIDR"), c.CIDR, "must be a CIDR with room for pod addresses (a /30 or wider for IPv4): "+err.Error()))
		}
	}
	if c.NodeIP != "" {
		if _, err := netip.ParseAddr(c.NodeIP); err != nil {
			errs = append(errs, field.Invalid(path.Child("NodeIP"), c.NodeIP, "must be an IPv4 or IPv6 address"))
		}
	}
	// Zero is the default and a negative count an error, for every count alike.
	for _, f := range []struct {
		name  string
		v     *int
		def   int
		limit int
	}{
		{"MaxPods", &r.MaxPods, DefaultMaxPods, maxMaxPods},
		{"Workers", &r.Workers, DefaultWorkers, math.MaxInt32},
		{"StatusWorkers", &r.StatusWorkers, DefaultStatusWorkers, math.MaxInt32},
	} {
		switch {
		case *f.v < 0 || *f.v > f.limit:
			errs = append(errs, field.Invalid(path.Child(f.name), *f.v, fmt.Sprintf("must be 1 to %d (0 for the default, %d)", f.limit, f.def)))
		case *f.v == 0:
			*f.v = f.def
		}
	}
	if c.NodeLeaseDurationSeconds < 0 {
		errs = append(errs, field.Invalid(path.Child("NodeLeaseDurationSeconds"), c.NodeLeaseDurationSeconds, "must not be negative (0 for the default)"))
	}
	if r.NodeLeaseDurationSeconds <= 0 {
		r.NodeLeaseDurationSeconds = DefaultNodeLeaseDurationSeconds
	}
	if r.NodeStatusUpdateFrequency <= 0 {
		r.NodeStatusUpdateFrequency = DefaultNodeStatusUpdateFrequency
	}
	if r.NodeStatusReportFrequency <= 0 {
		r.NodeStatusReportFrequency = DefaultNodeStatusReportFrequency
	}
	if c.QPS < 0 {
		errs = append(errs, field.Invalid(path.Child("QPS"), c.QPS, "must not be negative (0 for no client-side limit)"))
	}
	if c.Burst < 0 {
		errs = append(errs, field.Invalid(path.Child("Burst"), c.Burst, "must not be negative (0 for 2·QPS)"))
	}
	if r.ProgressInterval == 0 {
		r.ProgressInterval = DefaultProgressInterval
	}
	if r.ShutdownTimeout <= 0 {
		r.ShutdownTimeout = DefaultShutdownTimeout
	}
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.Identity == "" {
		r.Identity = defaultIdentity()
	}
	if p, err := podsim.Named(c.Profile); err != nil {
		errs = append(errs, field.NotSupported(path.Child("Profile"), c.Profile, []string{"default", "fast"}))
	} else {
		r.profile = p
	}
	if c.ManageAllNodes && (c.ManageSingleNode != "" || c.ManageNodesWithLabelSelector != "" || c.ManageNodesWithAnnotationSelector != "") {
		errs = append(errs, field.Forbidden(path.Child("ManageAllNodes"), "cannot be combined with Options.ManageSingleNode, Options.ManageNodesWithLabelSelector or Options.ManageNodesWithAnnotationSelector"))
	}
	if c.ManageSingleNode != "" && (c.ManageNodesWithLabelSelector != "" || c.ManageNodesWithAnnotationSelector != "") {
		errs = append(errs, field.Forbidden(path.Child("ManageSingleNode"), "cannot be combined with Options.ManageNodesWithLabelSelector or Options.ManageNodesWithAnnotationSelector"))
	}
	if c.ManageSingleNode != "" {
		for _, msg := range validation.IsDNS1123Subdomain(c.ManageSingleNode) {
			errs = append(errs, field.Invalid(path.Child("ManageSingleNode"), c.ManageSingleNode, msg))
		}
	}
	var err error
	if c.ManageNodesWithLabelSelector != "" {
		if r.labelSel, err = labels.Parse(c.ManageNodesWithLabelSelector); err != nil {
			errs = append(errs, field.Invalid(path.Child("ManageNodesWithLabelSelector"), c.ManageNodesWithLabelSelector, err.Error()))
		}
	}
	if c.ManageNodesWithAnnotationSelector != "" {
		if r.annoSel, err = labels.Parse(c.ManageNodesWithAnnotationSelector); err != nil {
			errs = append(errs, field.Invalid(path.Child("ManageNodesWithAnnotationSelector"), c.ManageNodesWithAnnotationSelector, err.Error()))
		}
	}
	r.adoptNodes = c.ManageAllNodes || c.ManageSingleNode != "" || r.labelSel != nil || r.annoSel != nil
	selection := c.ManageAllNodes || c.ManageSingleNode != "" || c.ManageNodesWithLabelSelector != "" || c.ManageNodesWithAnnotationSelector != ""
	if !selection && c.Nodes == 0 {
		errs = append(errs, field.Required(path.Child("Nodes"), "set Options.Nodes or a way to select existing nodes (Options.ManageAllNodes, Options.ManageSingleNode, Options.ManageNodesWithLabelSelector, Options.ManageNodesWithAnnotationSelector)"))
	}
	errs = append(errs, validateBehaviors(c.Behaviors, path.Child("Behaviors"))...)
	for i, n := range c.BindSchedulerNames {
		if n == "" {
			errs = append(errs, field.Required(path.Child("BindSchedulerNames").Index(i), "a scheduler name"))
		}
	}
	if len(r.BindSchedulerNames) == 0 {
		r.BindSchedulerNames = []string{v1.DefaultSchedulerName}
	}
	return r, errs
}

// selects reports whether an existing node is adopted by the selection flags.
func (r *resolved) selects(n *v1.Node) bool {
	switch {
	case r.ManageAllNodes:
		return true
	case r.ManageSingleNode != "":
		return n.Name == r.ManageSingleNode
	}
	if r.labelSel == nil && r.annoSel == nil {
		return false
	}
	if r.labelSel != nil && !r.labelSel.Matches(labels.Set(n.Labels)) {
		return false
	}
	if r.annoSel != nil && !r.annoSel.Matches(labels.Set(n.Annotations)) {
		return false
	}
	return true
}
