package eviction

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// ScaleTarget is the workload whose spec.replicas counts toward a PDB's
// expectedPods: the pod's controller, or the Deployment above its ReplicaSet.
// Pods whose controllers resolve to the same UID are counted once.
type ScaleTarget struct {
	// UID identifies the workload; its replicas are summed once per UID.
	UID types.UID
	// Replicas is the workload's desired scale (spec.replicas).
	Replicas int32
}

// ScaleResolver resolves a pod's controller reference to the workload whose
// scale the disruption controller uses, in the pod's namespace. found=false
// means no workload matches (wrong kind, missing object or UID mismatch); an
// error makes the PDB sync fail, as upstream.
type ScaleResolver func(ref metav1.OwnerReference, namespace string) (target ScaleTarget, found bool, err error)

// Workloads resolves controller references the way the disruption
// controller's finders do, from workload objects the caller already has. Its
// Resolve method is a [ScaleResolver].
//
// The built-in finders run in upstream order: ReplicationController (core),
// ReplicaSet owned by a Deployment (apps/extensions; the Deployment's replicas
// count), ReplicaSet not owned by a Deployment, StatefulSet (apps); then the
// generic /scale subresource, which for these built-in kinds (group apps or
// core) yields the referenced object's own replicas, and otherwise calls
// Scale. A nil spec.replicas counts as 1, the API server's default.
type Workloads struct {
	// ReplicationControllers, ReplicaSets, Deployments and StatefulSets are
	// the workloads that may own the selected pods, in any namespace (a
	// lister's whole list may be passed). Nil entries are skipped; the
	// objects are not modified.
	ReplicationControllers []*v1.ReplicationController
	ReplicaSets            []*appsv1.ReplicaSet
	Deployments            []*appsv1.Deployment
	StatefulSets           []*appsv1.StatefulSet

	// Scale stands in for the /scale subresource of other kinds (custom
	// resources). Nil means such a reference resolves to nothing, so the sync
	// fails with "found no controllers for pod".
	Scale ScaleResolver
}

// Resolve is the finder chain of the disruption controller; see [Workloads].
func (w Workloads) Resolve(ref metav1.OwnerReference, namespace string) (ScaleTarget, bool, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return ScaleTarget{}, false, err
	}
	group := gv.Group
	switch {
	case ref.Kind == "ReplicationController" && group == "":
		if rc := w.rc(namespace, ref.Name); rc != nil && rc.UID == ref.UID {
			return ScaleTarget{UID: rc.UID, Replicas: replicas(rc.Spec.Replicas)}, true, nil
		}
	case ref.Kind == "ReplicaSet" && (group == "apps" || group == "extensions"):
		rs := w.rs(namespace, ref.Name)
		if rs == nil || rs.UID != ref.UID {
			break
		}
		owner := metav1.GetControllerOf(rs)
		if owner != nil {
			ogv, err := schema.ParseGroupVersion(owner.APIVersion)
			if err != nil {
				return ScaleTarget{}, false, err
			}
			if owner.Kind == "Deployment" && (ogv.Group == "apps" || ogv.Group == "extensions") {
				if d := w.deployment(rs.Namespace, owner.Name); d != nil && d.UID == owner.UID {
					return ScaleTarget{UID: d.UID, Replicas: replicas(d.Spec.Replicas)}, true, nil
				}
			}
		}
		if owner == nil || owner.Kind != "Deployment" {
			return ScaleTarget{UID: rs.UID, Replicas: replicas(rs.Spec.Replicas)}, true, nil
		}
	case ref.Kind == "StatefulSet" && group == "apps":
		if ss := w.ss(namespace, ref.Name); ss != nil && ss.UID == ref.UID {
			return ScaleTarget{UID: ss.UID, Replicas: replicas(ss.Spec.Replicas)}, true, nil
		}
	}
	return w.scaleSubresource(ref, group, namespace)
}

// scaleSubresource is the generic /scale finder.
func (w Workloads) scaleSubresource(ref metav1.OwnerReference, group, namespace string) (ScaleTarget, bool, error) {
	var uid types.UID
	var r *int32
	builtin := true
	switch {
	case ref.Kind == "ReplicationController" && group == "":
		if o := w.rc(namespace, ref.Name); o != nil {
			uid, r = o.UID, o.Spec.Replicas
		}
	case ref.Kind == "ReplicaSet" && group == "apps":
		if o := w.rs(namespace, ref.Name); o != nil {
			uid, r = o.UID, o.Spec.Replicas
		}
	case ref.Kind == "Deployment" && group == "apps":
		if o := w.deployment(namespace, ref.Name); o != nil {
			uid, r = o.UID, o.Spec.Replicas
		}
	case ref.Kind == "StatefulSet" && group == "apps":
		if o := w.ss(namespace, ref.Name); o != nil {
			uid, r = o.UID, o.Spec.Replicas
		}
	default:
		builtin = false
	}
	if builtin {
		if uid == "" || uid != ref.UID {
			return ScaleTarget{}, false, nil
		}
		return ScaleTarget{UID: uid, Replicas: replicas(r)}, true, nil
	}
	if w.Scale == nil {
		return ScaleTarget{}, false, nil
	}
	t, found, err := w.Scale(ref, namespace)
	if err != nil {
		return ScaleTarget{}, false, fmt.Errorf("scale of %s %q: %w", ref.Kind, ref.Name, err)
	}
	if !found || t.UID != ref.UID {
		return ScaleTarget{}, false, nil
	}
	return t, true, nil
}

func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

func (w Workloads) rc(ns, name string) *v1.ReplicationController {
	for _, o := range w.ReplicationControllers {
		if o != nil && o.Namespace == ns && o.Name == name {
			return o
		}
	}
	return nil
}

func (w Workloads) rs(ns, name string) *appsv1.ReplicaSet {
	for _, o := range w.ReplicaSets {
		if o != nil && o.Namespace == ns && o.Name == name {
			return o
		}
	}
	return nil
}

func (w Workloads) deployment(ns, name string) *appsv1.Deployment {
	for _, o := range w.Deployments {
		if o != nil && o.Namespace == ns && o.Name == name {
			return o
		}
	}
	return nil
}

func (w Workloads) ss(ns, name string) *appsv1.StatefulSet {
	for _, o := range w.StatefulSets {
		if o != nil && o.Namespace == ns && o.Name == name {
			return o
		}
	}
	return nil
}
