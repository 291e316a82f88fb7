// Package operator is a small operator written with controller-runtime, and an example of
// testing one on a real API server with podstatus's simulated kubelet
// (simkubelet/kubelettest): its pods are bound, run, turn Ready, fail with their exit
// codes and go away when deleted, with the kubelet v1.37.0's exact statuses.
//
// A Widget is a ConfigMap labelled widget.example.com/managed=true (a real operator would
// define its own CRD; the reconcile is the same). For each Widget the operator runs one
// Pod and reports, in the Widget's data, what the Pod's status says:
//
//	state:   Pending, NotReady, Ready or Failed
//	message: why (the container's exit code for Failed)
//
// Data key "gate" names a readiness gate the Pod carries (a load balancer's, say): the
// Pod is Ready, and so is the Widget, only once another controller sets that condition
// True. Deleting a Widget deletes its Pod and waits until the Pod object is gone (the
// kubelet finishes a graceful deletion) before the Widget goes: a finalizer holds it, since
// the garbage collector, which would follow the owner reference, may not run (envtest and
// a bare kube-apiserver run no controller manager).
package operator

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// Labels, keys and values of the Widget API.
const (
	// ManagedLabel marks a ConfigMap as a Widget (value "true").
	ManagedLabel = "widget.example.com/managed"
	// Finalizer holds a deleted Widget until its Pod is gone.
	Finalizer = "widget.example.com/pod"
	// KeyGate names the readiness gate of the Widget's Pod (optional).
	KeyGate = "gate"
	// KeyState and KeyMessage are what the operator reports.
	KeyState, KeyMessage = "state", "message"
)

// The Widget states.
const (
	StatePending  = "Pending"
	StateNotReady = "NotReady"
	StateReady    = "Ready"
	StateFailed   = "Failed"
)

// Reconciler runs one Pod per Widget and reports its state.
type Reconciler struct {
	client.Client
	// Image is the image of the Widget's container.
	Image string
}

// SetupWithManager registers the Reconciler for Widgets and the Pods they own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	widgets := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetLabels()[ManagedLabel] == "true"
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("widget").
		For(&corev1.ConfigMap{}, builder.WithPredicates(widgets)).
		Owns(&corev1.Pod{}).
		Complete(r)
}

// Reconcile brings one Widget's Pod and reported state up to date.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var w corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	podKey := types.NamespacedName{Namespace: w.Namespace, Name: w.Name + "-pod"}
	var pod corev1.Pod
	err := r.Get(ctx, podKey, &pod)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	exists := err == nil

	if !w.DeletionTimestamp.IsZero() {
		if exists {
			// The Pod's deletion event brings the next Reconcile.
			if pod.DeletionTimestamp.IsZero() {
				if err := r.Delete(ctx, &pod, client.Preconditions{UID: &pod.UID}); err != nil && !apierrors.IsNotFound(err) {
					return ctrl.Result{}, err
				}
			}
			return ctrl.Result{}, nil
		}
		if controllerutil.RemoveFinalizer(&w, Finalizer) {
			return ctrl.Result{}, r.Update(ctx, &w)
		}
		return ctrl.Result{}, nil
	}
	if controllerutil.AddFinalizer(&w, Finalizer) {
		if err := r.Update(ctx, &w); err != nil {
			return ctrl.Result{}, err
		}
	}
	if !exists {
		p, err := r.podFor(&w, podKey)
		if err != nil {
			return ctrl.Result{}, err
		}
		if err := r.Create(ctx, p); err != nil && !apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.report(ctx, &w, StatePending, "pod created")
	}
	state, msg := stateOf(&pod)
	return ctrl.Result{}, r.report(ctx, &w, state, msg)
}

// podFor is the Widget's Pod: one long-running container with a readiness probe (the
// kubelet restarts it if it exits), and the Widget's readiness gate if it names one.
func (r *Reconciler) podFor(w *corev1.ConfigMap, key types.NamespacedName) (*corev1.Pod, error) {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: map[string]string{"widget": w.Name}},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyAlways,
			Containers: []corev1.Container{{
				Name:  "widget",
				Image: r.Image,
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
					PeriodSeconds: 1,
				},
			}},
		},
	}
	if g := w.Data[KeyGate]; g != "" {
		p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: corev1.PodConditionType(g)}}
	}
	if err := controllerutil.SetControllerReference(w, p, r.Scheme()); err != nil {
		return nil, fmt.Errorf("widget %s: owner reference: %w", w.Name, err)
	}
	return p, nil
}

// stateOf reads a Widget's state from its Pod's status as the kubelet writes it: Failed
// when the pod failed or its container exited with an error (the kubelet then restarts it,
// with its crash-loop back-off), Ready with the Pod's Ready condition, else NotReady or
// Pending.
func stateOf(p *corev1.Pod) (state, message string) {
	for _, c := range p.Status.ContainerStatuses {
		t := c.State.Terminated
		if t == nil {
			t = c.LastTerminationState.Terminated
		}
		if t != nil && t.ExitCode != 0 {
			return StateFailed, fmt.Sprintf("container %s exited with code %d (%s)", c.Name, t.ExitCode, t.Reason)
		}
	}
	switch p.Status.Phase {
	case corev1.PodFailed:
		return StateFailed, p.Status.Reason + ": " + p.Status.Message
	case corev1.PodSucceeded:
		return StateFailed, "the pod finished"
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			if c.Status == corev1.ConditionTrue {
				return StateReady, "pod ready"
			}
			return StateNotReady, c.Reason + ": " + c.Message
		}
	}
	return StatePending, "pod " + string(p.Status.Phase)
}

// report writes state and message into the Widget if they changed.
func (r *Reconciler) report(ctx context.Context, w *corev1.ConfigMap, state, msg string) error {
	if w.Data[KeyState] == state && w.Data[KeyMessage] == msg {
		return nil
	}
	if w.Data == nil {
		w.Data = map[string]string{}
	}
	w.Data[KeyState], w.Data[KeyMessage] = state, msg
	return r.Update(ctx, w)
}
