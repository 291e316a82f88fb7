// Package apiserver starts a real kube-apiserver v1.37.0 with an embedded etcd inside the
// test process, so that podstatus' end-to-end tests send their PATCHes of pods/status to
// the same code that a cluster runs: the strategic merge, the status strategy, validation,
// admission and the UID precondition are all upstream's, not a model of them.
//
// Nothing is downloaded and no binary is executed: etcd comes from
// k8s.io/apiserver/pkg/storage/etcd3/testserver and the API server from
// k8s.io/kubernetes/cmd/kube-apiserver/app/testing, both compiled into the test binary.
// Everything listens on 127.0.0.1 (etcd on "localhost") on ports the kernel picks, keeps
// its files in temporary directories, and is torn down through t.Cleanup.
//
// Once the test binary is built a server is ready in a few seconds. Each call to Start
// makes its own etcd and API server; tests that can share one should start it once (for
// example in a parent test) and give each subtest its own namespace. Server.Restart
// replaces the API server with a new one on the same etcd, as a cluster's API server
// restart or upgrade does; StableConfig is the client configuration that survives it.
//
// The server runs without a controller manager, scheduler or kubelet. That is what
// podstatus' tests want (the test plays the kubelet and, through NewClient, any other
// controller), but it means nothing reacts on its own: no ServiceAccount token controller,
// no garbage collection, no scheduling. See DefaultFlags for the flags that follow from it.
package apiserver

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	etcdtestserver "k8s.io/apiserver/pkg/storage/etcd3/testserver"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
)

// Server is a running kube-apiserver backed by its own embedded etcd. It stops when the
// test that started it ends.
type Server struct {
	// Config reaches the server as the loopback super-user (group system:masters), with a
	// high QPS and burst so that client-side rate limiting never shapes a test. Copy it
	// (rest.CopyConfig) before changing it.
	Config *rest.Config
	// Client is a clientset built from Config.
	Client kubernetes.Interface
	// EtcdEndpoints are the client URLs of the embedded etcd.
	EtcdEndpoints []string
	// StartupTime is how long Start took, etcd and API server together, until /healthz
	// was ok and the default namespace existed.
	StartupTime time.Duration

	// What Restart needs: the flags and storage of the running server, how to stop it
	// (once), the static super-user token and the serving certificate (see StableConfig).
	flags   []string
	storage *storagebackend.Config
	stop    func()
	token   string
	serving []byte
}

// Option changes how Start runs the server.
type Option func(*settings)

type settings struct {
	flags        []string
	featureGates map[string]bool
}

// WithFlags appends kube-apiserver command-line flags (for example
// "--runtime-config=api/all=true") after DefaultFlags. A flag given twice follows
// pflag's rules: the last value wins for scalars, while list flags such as
// --disable-admission-plugins accumulate, so pass the complete list you want.
func WithFlags(flags ...string) Option {
	return func(s *settings) { s.flags = append(s.flags, flags...) }
}

// WithFeatureGates sets kube-apiserver feature gates, as --feature-gates would. Calling it
// more than once merges the maps, later values winning. Unknown gates make Start fail.
//
// The upstream test server copies gates that differ from the process defaults into the
// process-wide default feature gate for the duration of the test (that is where most of
// kube-apiserver reads them). So tests that set gates must not call t.Parallel alongside
// tests that depend on the defaults; two parallel tests setting the same gate are failed
// by upstream's detector.
func WithFeatureGates(gates map[string]bool) Option {
	return func(s *settings) {
		if s.featureGates == nil {
			s.featureGates = map[string]bool{}
		}
		for k, v := range gates {
			s.featureGates[k] = v
		}
	}
}

// DefaultFlags returns the kube-apiserver flags every Server gets, before those of
// WithFlags:
//
//   - --disable-admission-plugins=ServiceAccount: the ServiceAccount admission plugin
//     rejects a pod whose namespace has no "default" ServiceAccount, and nothing creates
//     one because no controller manager runs. (Upstream's integration framework disables
//     it for the same reason.) The other default admission plugins stay on.
//   - --endpoint-reconciler-type=none: the kubernetes Service endpoints would otherwise
//     be reconciled against 127.0.0.1, which is not a valid endpoint address. The test
//     server also does this by itself; it is repeated here so that it stays true if a
//     caller sets --advertise-address.
func DefaultFlags() []string {
	return []string{
		"--disable-admission-plugins=ServiceAccount",
		"--endpoint-reconciler-type=none",
	}
}

// Start starts an embedded etcd and a kube-apiserver v1.37.0 in this process and returns
// once the server is healthy and the default namespace exists. It fails the test (Fatal)
// if the server cannot start. Everything is stopped and removed by t.Cleanup, the API
// server before etcd.
//
// Do not run it under -race unless you have a quarter of an hour to spare for the build.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	var set settings
	for _, o := range opts {
		o(&set)
	}
	flags := append(DefaultFlags(), set.flags...)
	if len(set.featureGates) > 0 {
		flags = append(flags, "--feature-gates="+featureGateFlag(set.featureGates))
	}

	begin := time.Now()

	// RunEtcd registers the etcd shutdown with t.Cleanup before we register the API
	// server's, so the API server stops first (cleanups run last-in, first-out).
	etcdClient := etcdtestserver.RunEtcd(t, etcdtestserver.NewTestConfig(t))
	endpoints := etcdClient.Endpoints()

	storage := storagebackend.NewDefaultConfig(path.Join("/", uuid.NewString(), "registry"), nil)
	storage.Transport.ServerList = slices.Clone(endpoints)

	// A static super-user token, the same for every server Restart starts (the loopback
	// token of Config is drawn anew by each).
	token := uuid.NewString()
	tokens := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(tokens, []byte(token+`,podstatus-e2e,podstatus-e2e,"system:masters"`+"\n"), 0o600); err != nil {
		t.Fatalf("apiserver: write token file: %v", err)
	}
	flags = append(flags, "--token-auth-file="+tokens)

	s := &Server{EtcdEndpoints: endpoints, flags: flags, storage: storage, token: token}
	s.startAPIServer(t)
	s.StartupTime = time.Since(begin)
	t.Logf("apiserver: kube-apiserver at %s (etcd %v) ready in %v", s.Config.Host, endpoints, s.StartupTime.Round(time.Millisecond))
	return s
}

// startAPIServer starts a kube-apiserver with s's flags and storage and points Config
// and Client at it.
func (s *Server) startAPIServer(t testing.TB) {
	t.Helper()
	instance := kubeapiservertesting.NewDefaultTestServerOptions()
	// The invariant check scrapes the server's metrics at teardown and fails the test on
	// upstream-internal metric rules; it says nothing about pod status, so skip it.
	instance.DisableInvariantChecks = true

	ts, err := kubeapiservertesting.StartTestServer(t, instance, s.flags, s.storage)
	if err != nil {
		t.Fatalf("apiserver: start kube-apiserver (flags %q): %v", s.flags, err)
	}
	var once sync.Once
	s.stop = func() { once.Do(ts.TearDownFn) }
	t.Cleanup(s.stop)
	// The serving certificate (the test server's fixture for 127.0.0.1, self-signed and
	// the same for every server) is what StableConfig trusts.
	s.serving, err = os.ReadFile(ts.ServerOpts.SecureServing.ServerCert.CertKey.CertFile)
	if err != nil {
		t.Fatalf("apiserver: read the serving certificate: %v", err)
	}

	client, err := kubernetes.NewForConfig(ts.ClientConfig)
	if err != nil {
		t.Fatalf("apiserver: clientset for %s: %v", ts.ClientConfig.Host, err)
	}
	s.Config, s.Client = ts.ClientConfig, client
}

// Restart stops the kube-apiserver and starts a new one on the same etcd and storage
// prefix, with the same flags: every object and the resourceVersions go on, open
// connections and watches break, as when a cluster's API server is restarted or
// upgraded. It returns once the new server is healthy; Config and Client then reach it
// (on another port, with a new loopback certificate and token: clients built from the old
// Config stop working, those from StableConfig keep working once their Host reaches the
// new server). It fails the test (Fatal) if the server cannot start. Do not call it
// while another goroutine reads Config or Client.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.stop()
	begin := time.Now()
	s.startAPIServer(t)
	t.Logf("apiserver: kube-apiserver restarted at %s (etcd %v) in %v", s.Config.Host, s.EtcdEndpoints, time.Since(begin).Round(time.Millisecond))
}

// StableConfig reaches the server as a super-user (group system:masters) with a static
// bearer token and the serving certificate every server Start and Restart run presents,
// so that, unlike Config, it keeps working across Restart for a client whose Host
// reaches the new server (through a proxy whose target follows it, say). Its Host is the
// current server's.
func (s *Server) StableConfig() *rest.Config {
	return &rest.Config{
		Host:            s.Config.Host,
		BearerToken:     s.token,
		TLSClientConfig: rest.TLSClientConfig{CAData: slices.Clone(s.serving)},
		QPS:             s.Config.QPS,
		Burst:           s.Config.Burst,
	}
}

func featureGateFlag(gates map[string]bool) string {
	parts := make([]string, 0, len(gates))
	for k, v := range gates {
		parts = append(parts, fmt.Sprintf("%s=%t", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// NewClient returns a second clientset that is independent of s.Client: it has its own
// copy of the rest.Config, its own user agent (so requests and managedFields tell the
// two apart) and its own rate limiter. Tests use it to act as another controller, for
// example one that writes a readiness-gate condition while the code under test plays the
// kubelet. It authenticates as the same super-user.
func (s *Server) NewClient(t testing.TB, userAgent string) kubernetes.Interface {
	t.Helper()
	cfg := rest.CopyConfig(s.Config)
	cfg.UserAgent = userAgent
	cfg.RateLimiter = nil // a fresh limiter from QPS and Burst, not shared with Config's
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("apiserver: clientset %q for %s: %v", userAgent, cfg.Host, err)
	}
	return c
}

// CreateNamespace creates a namespace named generateName plus a random suffix and returns
// it. Namespaces are not deleted at cleanup: the whole server goes away with the test.
func (s *Server) CreateNamespace(t testing.TB, generateName string) *v1.Namespace {
	t.Helper()
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: generateName}}
	got, err := s.Client.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("apiserver: create namespace %q: %v", generateName, err)
	}
	return got
}

// CreateNode creates a Node object named name, with no status. A pod can be bound to a
// node name that has no Node object (the API server does not check), so this is only
// needed by tests that look at nodes, such as node readiness gates.
func (s *Server) CreateNode(t testing.TB, name string) *v1.Node {
	t.Helper()
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	got, err := s.Client.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("apiserver: create node %q: %v", name, err)
	}
	return got
}

// NewPod returns a minimal valid pod with one container named "app", bound to nodeName
// through spec.nodeName, as a scheduler would have left it. The image is never pulled:
// nothing runs the pod. Callers may change the spec (readiness gates, more containers,
// init containers) before creating it.
func NewPod(namespace, name, nodeName string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: v1.PodSpec{
			NodeName: nodeName,
			Containers: []v1.Container{{
				Name:  "app",
				Image: "registry.k8s.io/pause:3.10",
			}},
		},
	}
}

// CreatePod creates pod in its namespace and returns the server's copy (with UID,
// resourceVersion and defaulted fields; status.phase is Pending and there are no
// conditions). Anything in pod.Status is dropped by the server on create.
func (s *Server) CreatePod(t testing.TB, pod *v1.Pod) *v1.Pod {
	t.Helper()
	got, err := s.Client.CoreV1().Pods(pod.Namespace).Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("apiserver: create pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
	return got
}

// PodStatusClient reads pods and PATCHes pods/status through a clientset. It has the
// method set of podstatus' status.Client, so a status.Manager can talk to a Server:
//
//	m := status.NewManager(apiserver.PodStatusClient{Client: srv.Client}, opts)
//
// Errors wrap client-go's *errors.StatusError values (with %w), so apierrors.IsInvalid
// and friends work on them, as status.Client asks.
type PodStatusClient struct {
	// Client is the clientset requests go through.
	Client kubernetes.Interface
}

// GetPod returns the server's current copy of the pod.
func (c PodStatusClient) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	pod, err := c.Client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get pod %s/%s: %w", namespace, name, err)
	}
	return pod, nil
}

// PatchPodStatus sends patch as a strategic-merge PATCH of the pod's status subresource,
// as the kubelet does, and returns the pod as the server stored it.
func (c PodStatusClient) PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	pod, err := c.Client.CoreV1().Pods(namespace).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		return nil, fmt.Errorf("patch status of pod %s/%s: %w", namespace, name, err)
	}
	return pod, nil
}
