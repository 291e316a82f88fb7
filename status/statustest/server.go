package statustest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
)

// podsResource names the resource in the errors the Server returns.
func podsResource() schema.GroupResource { return schema.GroupResource{Resource: "pods"} }

// Server is an in-memory API server holding pods. The zero value is not usable; call
// NewServer.
type Server struct {
	mu       sync.Mutex
	pods     map[string]*v1.Pod // by namespace/name
	revision uint64             // the last resourceVersion handed out
	uids     uint64             // UIDs handed out by Create and Recreate
	counts   map[Verb]int
	patches  []PatchRecord
	scripted map[Verb][]Fault
	random   map[Verb]*randomFaults
	watchers []func(Event)
	pending  []Event // writes not yet delivered to watchers, in order

	deliver sync.Mutex // held by the goroutine delivering pending events
}

// NewServer returns a Server holding copies of pods, stored as by Create (a later pod with
// the namespace and name of an earlier one replaces it).
func NewServer(pods ...*v1.Pod) *Server {
	s := &Server{
		pods:     map[string]*v1.Pod{},
		counts:   map[Verb]int{},
		scripted: map[Verb][]Fault{},
		random:   map[Verb]*randomFaults{},
	}
	for _, p := range pods {
		s.mu.Lock()
		s.createLocked(p)
		s.mu.Unlock()
	}
	s.notify()
	return s
}

func key(namespace, name string) string { return namespace + "/" + name }

// GetPod returns a copy of the stored pod, or 404 NotFound. It counts as a GET and may be
// failed by an injected fault. A done ctx fails it with ctx.Err() before it counts.
func (s *Server) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("statustest: GET pod %s/%s: %w", namespace, name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts[VerbGet]++
	if f, ok := s.nextFaultLocked(VerbGet); ok {
		return nil, f.Err
	}
	p, ok := s.pods[key(namespace, name)]
	if !ok {
		return nil, apierrors.NewNotFound(podsResource(), name)
	}
	return p.DeepCopy(), nil
}

// PatchPodStatus applies patch, a strategic-merge patch, to the status of the stored pod and
// returns a copy of the result. Only the status changes. A metadata.uid different from the
// stored pod's is 422 Invalid; a non-empty metadata.resourceVersion different from it is 409
// Conflict; a patch that cannot be applied is 400 BadRequest; a missing pod is 404
// NotFound. It counts as a PATCH, is recorded (see Patches) and may be failed by an injected
// fault. A done ctx fails it with ctx.Err() before it counts.
func (s *Server) PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("statustest: PATCH pod %s/%s status: %w", namespace, name, err)
	}
	s.mu.Lock()
	s.counts[VerbPatch]++
	rec := PatchRecord{Namespace: namespace, Name: name, Patch: append([]byte(nil), patch...)}
	f, faulted := s.nextFaultLocked(VerbPatch)
	var out *v1.Pod
	var err error
	if faulted && !f.AfterWrite {
		err = f.Err
	} else {
		out, err = s.applyLocked(namespace, name, patch)
		if faulted {
			out, err = nil, f.Err
		}
	}
	rec.Err = err
	if p, ok := s.pods[key(namespace, name)]; ok {
		rec.ResourceVersion = p.ResourceVersion
	}
	s.patches = append(s.patches, rec)
	s.mu.Unlock()
	s.notify()
	return out, err
}

// applyLocked applies a status patch as the API server would and stores the result.
func (s *Server) applyLocked(namespace, name string, patch []byte) (*v1.Pod, error) {
	cur, ok := s.pods[key(namespace, name)]
	if !ok {
		return nil, apierrors.NewNotFound(podsResource(), name)
	}
	orig, err := json.Marshal(cur)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("statustest: marshalling pod %s/%s: %w", namespace, name, err))
	}
	merged, err := strategicpatch.StrategicMergePatch(orig, patch, v1.Pod{})
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("statustest: applying the patch to pod %s/%s: %v", namespace, name, err))
	}
	var res v1.Pod
	if err := json.Unmarshal(merged, &res); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("statustest: decoding the patched pod %s/%s: %v", namespace, name, err))
	}
	if res.UID != cur.UID {
		return nil, apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, name, field.ErrorList{
			field.Invalid(field.NewPath("metadata", "uid"), res.UID, "field is immutable"),
		})
	}
	if res.ResourceVersion != "" && res.ResourceVersion != cur.ResourceVersion {
		// A patch that sets a resourceVersion is conditional on it; one that clears it
		// is not (pods allow unconditional updates).
		return nil, apierrors.NewConflict(podsResource(), name,
			errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	}
	next := cur.DeepCopy()
	next.Status = res.Status
	s.storeLocked(next, watch.Modified)
	return s.pods[key(namespace, name)].DeepCopy(), nil
}

// storeLocked stores p (owned by the Server from now on) unless it equals the stored copy,
// bumping its resourceVersion and queueing an event when it writes. Like a real server it
// stores what reads back from p's JSON: times at whole seconds, for example.
func (s *Server) storeLocked(p *v1.Pod, ev watch.EventType) {
	p = stored(p)
	k := key(p.Namespace, p.Name)
	if cur, ok := s.pods[k]; ok && ev == watch.Modified {
		a, errA := json.Marshal(cur)
		b, errB := json.Marshal(p)
		if errA == nil && errB == nil && string(a) == string(b) {
			return // a no-op update is not written, as etcd3's GuaranteedUpdate skips it
		}
	}
	s.revision++
	p.ResourceVersion = strconv.FormatUint(s.revision, 10)
	s.pods[k] = p
	s.pending = append(s.pending, Event{Type: ev, Pod: p.DeepCopy()})
}

// stored returns p as it reads back from its JSON, or p itself if it has no JSON form (a
// real server would refuse such a pod; the Server keeps it so that tests can see it).
func stored(p *v1.Pod) *v1.Pod {
	b, err := json.Marshal(p)
	if err != nil {
		return p
	}
	var out v1.Pod
	if err := json.Unmarshal(b, &out); err != nil {
		return p
	}
	return &out
}

// newUIDLocked hands out a fresh, deterministic UID.
func (s *Server) newUIDLocked() types.UID {
	s.uids++
	return types.UID(fmt.Sprintf("statustest-uid-%d", s.uids))
}

// randomFaults fails requests of one verb with a probability.
type randomFaults struct {
	p    float64
	rng  *rand.Rand
	errs []error
}
