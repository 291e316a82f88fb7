package deploy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/podstatus/podstatus/examples/fleet/deploy"
	"github.com/podstatus/podstatus/internal/upstream/apiserver"
	"github.com/podstatus/podstatus/podsim"
	"github.com/podstatus/podstatus/simkubelet"
)

// request is an API request as the authorizer sees it: its verb (get, list, watch,
// create, update, patch, delete), API group and resource, with the subresource after a
// '/' (pods/status).
type request struct {
	verb, group, resource string
}

func (r request) String() string {
	if r.group == "" {
		return r.verb + " " + r.resource
	}
	return r.verb + " " + r.resource + "." + r.group
}

// needed is every request the fleet agent makes, found by reading simkubelet and
// the status Manager it runs. It is this test's oracle for the manifests' roles, written
// independently of them: their verbs must be exactly these, each is shown needed (the
// agent's request is forbidden without it) and all together sufficient.
var needed = []struct {
	req request
	why string
}{
	{request{"list", "", "nodes"}, "markClusterNodes (agent/addrs.go) reads every node's addresses before making up new ones; the node informer of --manage-nodes-with-* lists"},
	{request{"watch", "", "nodes"}, "the node informer of --manage-nodes-with-label-selector (agent/agent.go)"},
	{request{"get", "", "nodes"}, "ensureNodes (agent/nodes.go) takes over a node of --nodes that exists already"},
	{request{"create", "", "nodes"}, "ensureNodes creates a node of --nodes that does not exist"},
	{request{"patch", "", "nodes/status"}, "reportNodeStatus (agent/nodes.go)"},
	{request{"list", "", "pods"}, "the pod informer (agent/agent.go)"},
	{request{"watch", "", "pods"}, "the pod informer"},
	{request{"get", "", "pods"}, "the status Manager's GET after a failed PATCH (status/sync.go, syncEntry)"},
	{request{"delete", "", "pods"}, "the status Manager's DELETE after the terminal status (status/kubeclient, DeletePod)"},
	{request{"patch", "", "pods/status"}, "the status Manager's PATCH (status/kubeclient, PatchPodStatus)"},
	{request{"create", "", "events"}, "Warning Events on pods (agent/pods.go, startSim), through client-go's event broadcaster"},
	{request{"get", "coordination.k8s.io", "leases"}, "renewLease (agent/nodes.go) reads the Lease before its first renewal"},
	{request{"create", "coordination.k8s.io", "leases"}, "renewLease creates a Lease that is not there yet"},
	{request{"update", "coordination.k8s.io", "leases"}, "renewLease renews the Lease"},
}

// grant is one verb on one resource of a role of the manifests.
type grant struct {
	role string // "ClusterRole" or "Role"
	req  request
}

// grants expands the manifests' ClusterRole and Role into single grants. A wildcard or a
// resourceName restriction fails the test: the role must name what it grants.
func grants(t *testing.T, objs []runtime.Object) (cr *rbacv1.ClusterRole, r *rbacv1.Role, out []grant) {
	t.Helper()
	for _, o := range objs {
		var rules []rbacv1.PolicyRule
		var kind string
		switch o := o.(type) {
		case *rbacv1.ClusterRole:
			cr, rules, kind = o, o.Rules, "ClusterRole"
		case *rbacv1.Role:
			r, rules, kind = o, o.Rules, "Role"
		default:
			continue
		}
		for _, rule := range rules {
			if len(rule.ResourceNames) > 0 || len(rule.NonResourceURLs) > 0 {
				t.Fatalf("%s rule %+v: resourceNames and nonResourceURLs are not expected", kind, rule)
			}
			for _, g := range rule.APIGroups {
				for _, res := range rule.Resources {
					for _, v := range rule.Verbs {
						if g == "*" || res == "*" || v == "*" {
							t.Fatalf("%s rule %+v: a wildcard grants more than the agent needs", kind, rule)
						}
						out = append(out, grant{kind, request{v, g, res}})
					}
				}
			}
		}
	}
	if cr == nil || r == nil {
		t.Fatalf("the manifests hold no ClusterRole or no Role")
	}
	return cr, r, out
}

// without returns the rules of gs in role, minus drop: one rule per API group and
// resource.
func without(gs []grant, role string, drop request) []rbacv1.PolicyRule {
	var rules []rbacv1.PolicyRule
	index := map[[2]string]int{}
	for _, g := range gs {
		if g.role != role || g.req == drop {
			continue
		}
		k := [2]string{g.req.group, g.req.resource}
		i, ok := index[k]
		if !ok {
			i = len(rules)
			index[k] = i
			rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{g.req.group}, Resources: []string{g.req.resource}})
		}
		rules[i].Verbs = append(rules[i].Verbs, g.req.verb)
	}
	return rules
}

// answer is one request the agent sent and the status code it got (0: no answer).
type answer struct {
	req  request
	path string
	code int
}

// requestLog records every request of one agent run, and fails the first status PATCH
// of the pod named lostPod before it reaches the server (a connection that broke while
// the request was sent), so that the status Manager, which no longer trusts its copy of
// the pod, GETs it before its next PATCH.
type requestLog struct {
	lostPod string
	mu      sync.Mutex
	answers []answer
	lost    bool
}

var errLost = errors.New("injected: the connection broke while the request was sent")

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return rtFunc(func(req *http.Request) (*http.Response, error) {
		a := answer{req: classify(req), path: req.URL.Path}
		l.mu.Lock()
		lose := !l.lost && a.req == (request{"patch", "", "pods/status"}) && strings.HasSuffix(req.URL.Path, "/pods/"+l.lostPod+"/status")
		if lose {
			l.lost = true
			l.answers = append(l.answers, a)
		}
		l.mu.Unlock()
		if lose {
			if req.Body != nil {
				req.Body.Close()
			}
			return nil, errLost
		}
		resp, err := rt.RoundTrip(req)
		if err == nil {
			a.code = resp.StatusCode
		}
		l.mu.Lock()
		l.answers = append(l.answers, a)
		l.mu.Unlock()
		return resp, err
	})
}

// codes returns, for every request, the status codes it got.
func (l *requestLog) codes() map[request][]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[request][]int{}
	for _, a := range l.answers {
		out[a.req] = append(out[a.req], a.code)
	}
	return out
}

// forbidden returns the requests answered 403, with their paths.
func (l *requestLog) forbidden() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, a := range l.answers {
		if a.code == http.StatusForbidden {
			out = append(out, a.req.String()+" ("+a.path+")")
		}
	}
	return out
}

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// classify names a request as the API server's authorizer does
// (k8s.io/apiserver/pkg/endpoints/request/requestinfo.go): GET of a collection is list, or
// watch with ?watch=true; GET of a named object get; POST create; PUT update; PATCH patch;
// DELETE delete.
func classify(req *http.Request) request {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	var group string
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		group, parts = parts[1], parts[3:]
	default:
		return request{verb: strings.ToLower(req.Method), resource: req.URL.Path}
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	res := parts[0]
	if len(parts) >= 3 {
		res += "/" + parts[2]
	}
	named := len(parts) >= 2
	var verb string
	switch req.Method {
	case http.MethodGet:
		switch w, _ := strconv.ParseBool(req.URL.Query().Get("watch")); {
		case w:
			verb = "watch"
		case named:
			verb = "get"
		default:
			verb = "list"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
		if !named {
			verb = "deletecollection"
		}
	default:
		verb = strings.ToLower(req.Method)
	}
	return request{verb, group, res}
}

// The pods of a world, on its nodes (node-0 exists before the agent starts, node-1 is
// created by it, "adopted" is picked by its label selector).
const (
	lostPod    = "lost-0"    // its first status PATCH fails on the way: the Manager GETs it
	deletedPod = "deleted-0" // deleted gracefully once Running: terminal status, then the agent's DELETE
	badPod     = "bad-0"     // an invalid sim.podstatus.io/ annotation: a Warning Event
)

const worldLabel = "podstatus.io/e2e-world"

// world is one agent run's own nodes, Lease and pods, so that every run starts from the
// same state: a node of --nodes that exists with its Lease (taken over: get nodes, get and
// update leases), one to create (create nodes and leases), one to adopt by label (list and
// watch nodes), and pods that need each pod verb.
type world struct {
	name, ns string
	pods     map[string]string // pod → node
}

func newWorld(t *testing.T, srv *apiserver.Server, name string) world {
	t.Helper()
	ctx := context.Background()
	w := world{name: name, ns: srv.CreateNamespace(t, name+"-").Name, pods: map[string]string{}}
	node0 := srv.CreateNode(t, name+"-node-0")
	_, err := srv.Client.CoordinationV1().Leases(v1.NamespaceNodeLease).Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: node0.Name},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(node0.Name), LeaseDurationSeconds: ptr.To[int32](40)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create the Lease of %s: %v", node0.Name, err)
	}
	adopted := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name + "-adopted", Labels: map[string]string{worldLabel: name}}}
	if _, err := srv.Client.CoreV1().Nodes().Create(ctx, adopted, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create node %s: %v", adopted.Name, err)
	}
	for _, p := range []struct{ name, node string }{
		{"plain-0", "node-0"}, {"plain-1", "node-1"}, {"plain-2", "adopted"},
		{lostPod, "node-0"}, {deletedPod, "node-1"}, {badPod, "node-0"},
	} {
		pod := apiserver.NewPod(w.ns, p.name, name+"-"+p.node)
		pod.Annotations = map[string]string{podsim.AnnotationSandboxDelay: "50ms", podsim.AnnotationStartDelay: "50ms"}
		if p.name == badPod {
			pod.Annotations[podsim.AnnotationStartDelay] = "soon"
		}
		srv.CreatePod(t, pod)
		w.pods[p.name] = pod.Spec.NodeName
	}
	return w
}

// run runs the agent on w with config rc until done reports true (checked every 100 ms,
// at most limit), deleting deletedPod gracefully once it is Running. It returns the
// requests the agent sent and done's last error, if it never reported true.
func (w world) run(t *testing.T, srv *apiserver.Server, rc *rest.Config, limit time.Duration, done func(*requestLog) (bool, error)) (*requestLog, error) {
	t.Helper()
	log := &requestLog{lostPod: lostPod}
	rc = rest.CopyConfig(rc)
	rc.Wrap(log.wrap)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() {
		ran <- runKubelet(ctx, rc, simkubelet.Options{
			Nodes:                        2,
			NodeNamePrefix:               w.name + "-node-",
			ManageNodesWithLabelSelector: worldLabel + "=" + w.name,
			NodeLeaseDurationSeconds:     4,
			Profile:                      "fast",
			ProgressInterval:             -1,
			ShutdownTimeout:              time.Second,
			Logger:                       testr.NewWithOptions(t, testr.Options{Verbosity: 0}).WithName(w.name),
		})
	}()
	defer func() {
		cancel()
		select {
		case err := <-ran:
			if err != nil {
				t.Errorf("simkubelet Run: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Errorf("the agent did not stop within 20 s of its context being cancelled")
		}
	}()
	var last error
	deleted := false
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, limit, true, func(pctx context.Context) (bool, error) {
		select {
		case err := <-ran:
			ran <- err // for the deferred stop
			return false, fmt.Errorf("simkubelet Run returned early: %v", err)
		default:
		}
		if !deleted {
			p, err := srv.Client.CoreV1().Pods(w.ns).Get(pctx, deletedPod, metav1.GetOptions{})
			if err == nil && p.Status.Phase == v1.PodRunning {
				if err := srv.Client.CoreV1().Pods(w.ns).Delete(pctx, deletedPod, metav1.DeleteOptions{}); err != nil {
					return false, fmt.Errorf("delete %s: %v", deletedPod, err)
				}
				deleted = true
			}
		}
		ok, err := done(log)
		last = err
		return ok, nil
	})
	if err != nil && last == nil {
		last = err
	}
	if err == nil {
		last = nil
	}
	return log, last
}

// The manifests' RBAC, applied server-side to a kube-apiserver that authorizes with RBAC,
// lets the agent authenticated by its ServiceAccount's token (from the TokenRequest API;
// no admin credential) serve its pods with no request forbidden; without any one of its
// verbs, the agent's request that needs it is answered 403 Forbidden, and no other is.
// Every manifest, the StatefulSet included, passes the server's dry-run first, and so does
// the pod the StatefulSet makes.
//
// The server runs without the WatchList feature, so that informers LIST and then WATCH,
// as they do on a server that has it off; with it on, they send the WATCH alone (a subset
// of the same verbs).
func TestManifestsRBACIsMinimalAndSufficient(t *testing.T) {
	objs, err := deploy.Objects()
	if err != nil {
		t.Fatal(err)
	}
	cr, role, gs := grants(t, objs)
	var have, want []string
	for _, g := range gs {
		have = append(have, g.req.String())
	}
	for _, n := range needed {
		want = append(want, n.req.String())
	}
	sort.Strings(have)
	sort.Strings(want)
	if !slices.Equal(have, want) {
		t.Fatalf("the roles grant %v\nthe agent makes %v", have, want)
	}
	for _, g := range gs {
		if (g.req.resource == "leases") != (g.role == "Role") {
			t.Errorf("%s grants %v: leases belong in the Role of %s, the rest in the ClusterRole", g.role, g.req, v1.NamespaceNodeLease)
		}
	}

	c := install(t, objs, apiserver.WithFeatureGates(map[string]bool{"WatchList": false}))
	srv, rc, sa, user, apply := c.srv, c.rc, c.sa, c.user, c.apply
	ctx := context.Background()

	// allowed waits until the authorizer's cache of the roles answers want for req (the
	// RBAC authorizer reads roles from informers): only a barrier between runs; the proof
	// is the agent's own requests.
	allowed := func(req request, ns string, want bool) {
		t.Helper()
		res, sub, _ := strings.Cut(req.resource, "/")
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			sar, err := srv.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User:   user,
				Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + sa.Namespace, "system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{
					Namespace: ns, Verb: req.verb, Group: req.group, Resource: res, Subresource: sub,
				},
			}}, metav1.CreateOptions{})
			return err == nil && sar.Status.Allowed == want, err
		})
		if err != nil {
			t.Fatalf("the authorizer never answered allowed=%t to %v: %v", want, req, err)
		}
	}
	setRules := func(kind string, rules []rbacv1.PolicyRule) {
		t.Helper()
		if kind == "ClusterRole" {
			c := cr.DeepCopy()
			c.Rules = rules
			apply(c)
		} else {
			r := role.DeepCopy()
			r.Rules = rules
			apply(r)
		}
	}
	nsOf := func(req request, w world) string {
		if req.resource == "leases" {
			return v1.NamespaceNodeLease
		}
		if strings.HasPrefix(req.resource, "nodes") {
			return ""
		}
		return w.ns
	}

	// Sufficient: every pod Running and Ready (the deleted one gone), every request of
	// needed made and answered below 400, none forbidden.
	t.Run("the role", func(t *testing.T) {
		w := newWorld(t, srv, "all")
		for _, n := range needed {
			allowed(n.req, nsOf(n.req, w), true)
		}
		log, err := w.run(t, srv, rc, 60*time.Second, func(log *requestLog) (bool, error) {
			list, err := srv.Client.CoreV1().Pods(w.ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err
			}
			var notReady []string
			for _, p := range list.Items {
				if p.Status.Phase != v1.PodRunning || !podReady(&p) {
					notReady = append(notReady, p.Name+" "+string(p.Status.Phase))
				}
				if p.Name == deletedPod {
					notReady = append(notReady, deletedPod+" not deleted")
				}
			}
			if len(notReady) > 0 {
				return false, fmt.Errorf("pods not Running and Ready: %v", notReady)
			}
			codes := log.codes()
			var missing []string
			for _, n := range needed {
				if !slices.ContainsFunc(codes[n.req], func(c int) bool { return c >= 200 && c < 400 }) {
					missing = append(missing, n.req.String())
				}
			}
			if len(missing) > 0 {
				return false, fmt.Errorf("requests not made (or never answered below 400): %v", missing)
			}
			return true, nil
		})
		if err != nil {
			t.Fatalf("with the manifests' roles: %v\nrequests: %v", err, log.codes())
		}
		if f := log.forbidden(); len(f) > 0 {
			t.Errorf("forbidden with the manifests' roles: %v", f)
		}
		t.Logf("requests and their codes: %v", log.codes())
	})

	// Minimal: each grant removed in turn; the agent, restarted on a fresh world, sends
	// the request it names and is answered 403, and no other request is forbidden.
	for i, g := range gs {
		t.Run("without "+g.req.String(), func(t *testing.T) {
			w := newWorld(t, srv, fmt.Sprintf("w%d", i))
			setRules(g.role, without(gs, g.role, g.req))
			defer func() {
				setRules(g.role, without(gs, g.role, request{}))
				allowed(g.req, nsOf(g.req, w), true)
			}()
			allowed(g.req, nsOf(g.req, w), false)
			log, err := w.run(t, srv, rc, 30*time.Second, func(log *requestLog) (bool, error) {
				for _, c := range log.codes()[g.req] {
					if c == http.StatusForbidden {
						return true, nil
					}
				}
				return false, fmt.Errorf("no %v answered 403 Forbidden (the agent makes it for: %s)", g.req, why(g.req))
			})
			if err != nil {
				t.Fatalf("%v\nrequests: %v", err, log.codes())
			}
			for _, f := range log.forbidden() {
				if !strings.HasPrefix(f, g.req.String()+" (") {
					t.Errorf("forbidden too: %s", f)
				}
			}
		})
	}
}

// why is needed's reason for req.
func why(req request) string {
	for _, n := range needed {
		if n.req == req {
			return n.why
		}
	}
	return "?"
}

func podReady(p *v1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}
