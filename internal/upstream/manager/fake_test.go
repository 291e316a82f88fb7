package manager

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/podstatus/podstatus/status"
)

// podsGVR is the resource the fake trackers store pods under.
var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// fakeServer is a client-go fake clientset that behaves enough like an API server for a
// status manager: every write bumps the pod's resourceVersion (the stock object tracker
// never sets metadata.resourceVersion, and our Manager orders server copies by it), a
// strategic-merge PATCH is applied with apimachinery's strategicpatch against v1.Pod,
// and a patch whose metadata.uid differs from the stored pod's is rejected with 422, as
// the API server's immutable-field validation does. Requests by the managers go through
// the clientset and are recorded in its Actions; the harness's own reads and writes go
// to the tracker directly and are not.
type fakeServer struct {
	cs *fake.Clientset

	mu sync.Mutex
	rv int
	// onPatch, when set, is called (without mu) after every applied patch with the
	// patched pod's name.
	onPatch func(name string)
}

// newFakeServer returns a server holding deep copies of pods, with resourceVersion 1.
func newFakeServer(pods ...*v1.Pod) *fakeServer {
	s := &fakeServer{cs: fake.NewSimpleClientset(), rv: 1}
	for _, p := range pods {
		p = p.DeepCopy()
		p.ResourceVersion = "1"
		if err := s.cs.Tracker().Add(p); err != nil {
			panic(err)
		}
	}
	s.cs.PrependReactor("patch", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pa := a.(k8stesting.PatchAction)
		if pa.GetPatchType() != types.StrategicMergePatchType {
			return true, nil, apierrors.NewBadRequest("fakeServer: only strategic-merge patches are supported")
		}
		got, err := s.patch(pa.GetNamespace(), pa.GetName(), pa.GetPatch(), true)
		if err == nil && s.onPatch != nil {
			s.onPatch(pa.GetName())
		}
		return true, got, err
	})
	s.cs.PrependReactor("update", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewMethodNotSupported(podsGVR.GroupResource(), "update")
	})
	return s
}

// patch applies a strategic-merge patch to the stored pod and stores the result with the
// next resourceVersion. checkUID enforces the metadata.uid precondition.
func (s *fakeServer) patch(ns, name string, patch []byte, checkUID bool) (*v1.Pod, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	obj, err := s.cs.Tracker().Get(podsGVR, ns, name)
	if err != nil {
		return nil, err
	}
	cur := obj.(*v1.Pod)
	old, err := json.Marshal(cur)
	if err != nil {
		return nil, err
	}
	merged, err := strategicpatch.StrategicMergePatch(old, patch, &v1.Pod{})
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("fakeServer: applying patch: %v", err))
	}
	var next v1.Pod
	if err := json.Unmarshal(merged, &next); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("fakeServer: decoding patched pod: %v", err))
	}
	if checkUID && next.UID != cur.UID {
		return nil, apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, name, field.ErrorList{
			field.Invalid(field.NewPath("metadata", "uid"), next.UID, "field is immutable"),
		})
	}
	s.rv++
	next.ResourceVersion = strconv.Itoa(s.rv)
	if err := s.cs.Tracker().Update(podsGVR, &next, ns); err != nil {
		return nil, err
	}
	return next.DeepCopy(), nil
}

// pod returns the stored copy of a pod (not recorded as a request).
func (s *fakeServer) pod(ns, name string) *v1.Pod {
	obj, err := s.cs.Tracker().Get(podsGVR, ns, name)
	if err != nil {
		panic(err)
	}
	return obj.(*v1.Pod).DeepCopy()
}

// requests counts the GETs, PATCHes and other requests the managers sent for a pod.
func (s *fakeServer) requests(name string) (gets, patches, other int) {
	for _, a := range s.cs.Actions() {
		n, ok := a.(interface{ GetName() string })
		if !ok || n.GetName() != name {
			continue
		}
		switch a.GetVerb() {
		case "get":
			gets++
		case "patch":
			patches++
		default:
			other++
		}
	}
	return gets, patches, other
}

// client is our status.Client over a clientset: the adapter every user of the library
// with client-go would write.
type client struct{ cs kubernetes.Interface }

var _ status.Client = client{}

// GetPod implements status.Client.
func (c client) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	return c.cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
}

// PatchPodStatus implements status.Client.
func (c client) PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	return c.cs.CoreV1().Pods(namespace).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
}
