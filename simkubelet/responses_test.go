package simkubelet

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestResponsesOneObjectPerPod: whichever of a PATCH response and the watch event of the
// same resourceVersion comes second gets the first one's object, and nothing is kept that
// neither the informer nor the Manager holds.
func TestResponsesOneObjectPerPod(t *testing.T) {
	pod := func(rv string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u1", ResourceVersion: rv}}
	}
	type step struct {
		patch bool   // a PATCH response, else a watch event
		rv    string // its resourceVersion
		same  int    // index of the earlier step whose object it must get, -1 its own
	}
	for _, tc := range []struct {
		name  string
		steps []step
		left  int // entries left for the pod
	}{
		{"response first", []step{{false, "1", -1}, {true, "2", -1}, {false, "2", 1}}, 0},
		{"event first", []step{{false, "1", -1}, {false, "2", -1}, {true, "2", 1}}, 0},
		{"older response after a newer event", []step{{false, "3", -1}, {true, "2", -1}}, 1},
		{"older event after a newer response", []step{{true, "3", -1}, {false, "2", -1}, {false, "3", 0}}, 0},
		{"two responses, then the second one's event", []step{{true, "2", -1}, {true, "3", -1}, {false, "3", 1}}, 0},
		{"a response never shares with a response", []step{{true, "2", -1}, {true, "2", -1}}, 1},
		{"an event never shares with an event", []step{{false, "2", -1}, {false, "2", -1}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := responses{pods: map[types.UID]sharedPod{}}
			var sent []*v1.Pod
			for i, s := range tc.steps {
				p := pod(s.rv)
				sent = append(sent, p)
				var g *v1.Pod
				if s.patch {
					g = r.fromPatch(p)
				} else {
					g = r.fromWatch(p)
				}
				want := p
				if s.same >= 0 {
					want = sent[s.same]
				}
				if g != want {
					t.Errorf("step %d (%+v): got the object of another step", i, s)
				}
			}
			if len(r.pods) != tc.left {
				t.Errorf("%d entries left, want %d", len(r.pods), tc.left)
			}
			r.forget("u1")
			if len(r.pods) != 0 {
				t.Errorf("forget left %d entries", len(r.pods))
			}
		})
	}
}

// TestResponsesHeld: held finds the object kept for a pod version, whichever of the PATCH
// response and the watch event came first, and nothing for another version, another pod,
// or once the pair is complete or the pod forgotten.
func TestResponsesHeld(t *testing.T) {
	r := responses{pods: map[types.UID]sharedPod{}}
	resp := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u1", ResourceVersion: "7"}}
	r.fromPatch(resp)
	if got := r.held([]byte("u1"), []byte("7")); got != resp {
		t.Errorf("held after the response = %p, want the response %p", got, resp)
	}
	for _, q := range [][2]string{{"u1", "8"}, {"u2", "7"}} {
		if got := r.held([]byte(q[0]), []byte(q[1])); got != nil {
			t.Errorf("held(%s, %s) = %v, want nil", q[0], q[1], got)
		}
	}
	r.fromWatch(&v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u1", ResourceVersion: "7"}}) // the pair is complete
	if got := r.held([]byte("u1"), []byte("7")); got != nil {
		t.Errorf("held after the pair = %v, want nil", got)
	}
	ev := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u1", ResourceVersion: "9"}}
	r.fromWatch(ev)
	if got := r.held([]byte("u1"), []byte("9")); got != ev {
		t.Errorf("held after the event = %p, want the event %p", got, ev)
	}
	r.forget("u1")
	if got := r.held([]byte("u1"), []byte("9")); got != nil {
		t.Errorf("held after forget = %v, want nil", got)
	}
}
