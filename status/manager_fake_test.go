package status

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// mgrFake is a minimal in-package API server for the Manager's own unit tests: it applies
// patches with apimachinery's strategic merge and checks the metadata.uid precondition.
// The cross-package tests use statustest.
type mgrFake struct {
	mu     sync.Mutex
	pods   map[string]*v1.Pod
	rv     int
	gets   int
	patchs int
	// fail, when set, may return an error for a request before it is served.
	fail func(verb string) error
}

func newMgrFake(pods ...*v1.Pod) *mgrFake {
	f := &mgrFake{pods: map[string]*v1.Pod{}}
	for _, p := range pods {
		f.put(p)
	}
	return f
}

var podsGR = schema.GroupResource{Resource: "pods"}

func (f *mgrFake) put(p *v1.Pod) *v1.Pod {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := p.DeepCopy()
	f.rv++
	c.ResourceVersion = strconv.Itoa(f.rv)
	f.pods[c.Namespace+"/"+c.Name] = c
	return c.DeepCopy()
}

func (f *mgrFake) get(ns, name string) *v1.Pod {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p := f.pods[ns+"/"+name]; p != nil {
		return p.DeepCopy()
	}
	return nil
}

func (f *mgrFake) GetPod(_ context.Context, ns, name string) (*v1.Pod, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	if f.fail != nil {
		if err := f.fail("get"); err != nil {
			return nil, err
		}
	}
	p := f.pods[ns+"/"+name]
	if p == nil {
		return nil, apierrors.NewNotFound(podsGR, name)
	}
	return p.DeepCopy(), nil
}

func (f *mgrFake) PatchPodStatus(_ context.Context, ns, name string, patch []byte) (*v1.Pod, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.patchs++
	if f.fail != nil {
		if err := f.fail("patch"); err != nil {
			return nil, err
		}
	}
	p := f.pods[ns+"/"+name]
	if p == nil {
		return nil, apierrors.NewNotFound(podsGR, name)
	}
	orig, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	out, err := strategicpatch.StrategicMergePatch(orig, patch, v1.Pod{})
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	var np v1.Pod
	if err := json.Unmarshal(out, &np); err != nil {
		return nil, err
	}
	if np.UID != p.UID {
		return nil, apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, name, field.ErrorList{
			field.Invalid(field.NewPath("metadata", "uid"), np.UID, "field is immutable"),
		})
	}
	// Only the status subresource changes.
	q := p.DeepCopy()
	q.Status = np.Status
	f.rv++
	q.ResourceVersion = strconv.Itoa(f.rv)
	f.pods[ns+"/"+name] = q
	return q.DeepCopy(), nil
}

func (f *mgrFake) counts() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fmt.Sprintf("get=%d patch=%d", f.gets, f.patchs)
}
