package deploy

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/utils/ptr"

	"github.com/podstatus/podstatus/internal/upstream/apiserver"
)

// cluster is a kube-apiserver with RBAC authorization and the fleet manifests installed.
type cluster struct {
	srv *apiserver.Server
	// rc reaches the server with a token of the manifests' ServiceAccount and no other
	// credential; user is the name it authenticates as.
	rc   *rest.Config
	sa   *v1.ServiceAccount
	user string
	// apply applies an object server-side, as the super-user.
	apply func(runtime.Object)
}

// install starts a kube-apiserver with --authorization-mode=RBAC (and opts), dry-runs
// every manifest of objs in order (creating the Namespace for real, so that the objects in
// it can be checked) and the pod the StatefulSet would make, applies the ServiceAccount
// and the RBAC server-side, and takes a token for the ServiceAccount from the TokenRequest
// API.
func install(t *testing.T, objs []runtime.Object, opts ...apiserver.Option) *cluster {
	t.Helper()
	srv := apiserver.Start(t, append([]apiserver.Option{apiserver.WithFlags("--authorization-mode=RBAC")}, opts...)...)
	ctx := context.Background()
	dyn, err := dynamic.NewForConfig(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	groups, err := restmapper.GetAPIGroupResources(srv.Client.Discovery())
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDiscoveryRESTMapper(groups)
	resource := func(o runtime.Object) (dynamic.ResourceInterface, *unstructured.Unstructured) {
		t.Helper()
		gvks, _, err := scheme.Scheme.ObjectKinds(o)
		if err != nil {
			t.Fatal(err)
		}
		m, err := mapper.RESTMapping(gvks[0].GroupKind(), gvks[0].Version)
		if err != nil {
			t.Fatalf("%s: %v", gvks[0], err)
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			t.Fatal(err)
		}
		obj := &unstructured.Unstructured{Object: u}
		obj.SetGroupVersionKind(gvks[0])
		return dyn.Resource(m.Resource).Namespace(obj.GetNamespace()), obj
	}
	apply := func(o runtime.Object) {
		t.Helper()
		ri, obj := resource(o)
		if _, err := ri.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: "deploy-e2e", Force: true}); err != nil {
			t.Fatalf("server-side apply %s %s/%s: %v", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
		}
	}

	// Dry-run every manifest, in the kustomization's order; the Namespace is then created
	// for real, so that the objects in it can be checked.
	var sa *v1.ServiceAccount
	for _, o := range objs {
		ri, obj := resource(o)
		if _, err := ri.Create(ctx, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict}); err != nil {
			t.Errorf("dry-run create %s %s/%s: %v", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
		}
		switch o := o.(type) {
		case *v1.Namespace:
			apply(o)
		case *v1.ServiceAccount:
			sa = o
		}
	}
	if t.Failed() || sa == nil {
		t.Fatalf("the manifests do not pass the dry-run, or hold no ServiceAccount")
	}
	// The StatefulSet's pod, as its controller would create it, passes admission (Pod
	// Security's level of the namespace included) in a dry-run.
	for _, o := range objs {
		if sts, ok := o.(*appsv1.StatefulSet); ok {
			pod := &v1.Pod{ObjectMeta: *sts.Spec.Template.ObjectMeta.DeepCopy(), Spec: *sts.Spec.Template.Spec.DeepCopy()}
			pod.Name, pod.Namespace = sts.Name+"-0", sts.Namespace
			if _, err := srv.Client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
				t.Fatalf("dry-run create the StatefulSet's pod %s/%s: %v", pod.Namespace, pod.Name, err)
			}
		}
	}
	for _, o := range objs {
		switch o.(type) {
		case *v1.ServiceAccount, *rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding, *rbacv1.Role, *rbacv1.RoleBinding:
			apply(o)
		}
	}

	// The agent's credential: a token of the ServiceAccount, and nothing else.
	tok, err := srv.Client.CoreV1().ServiceAccounts(sa.Namespace).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for %s/%s: %v", sa.Namespace, sa.Name, err)
	}
	rc := rest.AnonymousClientConfig(srv.Config)
	rc.BearerToken = tok.Status.Token
	user := "system:serviceaccount:" + sa.Namespace + ":" + sa.Name
	saClient, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	review, err := saClient.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || review.Status.UserInfo.Username != user {
		t.Fatalf("the agent's credential authenticates as %+v (%v), want %s", review, err, user)
	}

	return &cluster{srv: srv, rc: rc, sa: sa, user: user, apply: apply}
}
