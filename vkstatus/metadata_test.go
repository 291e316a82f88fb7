package vkstatus

import (
	"context"
	"encoding/json"
	"maps"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestMetadataForwarded: the labels and annotations the provider changed reach the server
// in one PATCH of pods/status with the UID precondition; those another client changed
// after the provider's copy was taken are not reverted (virtual-kubelet's PUT reverted
// them).
func TestMetadataForwarded(t *testing.T) {
	pod := gatedPod("web")
	cs := fake.NewClientset(pod)
	c := New(cs.CoreV1(), Options{})
	ctx := context.Background()
	first, err := cs.CoreV1().Pods("ns").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.EventHandler().OnAdd(first, true)
	provider := providerPod(first) // the provider's copy, taken now

	// Another client relabels the pod and drops an annotation.
	other := first.DeepCopy()
	other.Labels["app"] = "web-v2"
	delete(other.Annotations, "owner")
	other, err = cs.CoreV1().Pods("ns").Update(ctx, other, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.EventHandler().OnUpdate(first, other)

	// The provider adds a label and an annotation of its own.
	provider.Labels["provider.example.com/zone"] = "z1"
	provider.Annotations["provider.example.com/id"] = "i-123"
	cs.ClearActions()
	if _, err := c.Pods("ns").UpdateStatus(ctx, provider, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var patches []k8stesting.PatchAction
	for _, a := range cs.Actions() {
		if p, ok := a.(k8stesting.PatchAction); ok {
			patches = append(patches, p)
		}
	}
	if len(patches) != 1 || patches[0].GetSubresource() != "status" {
		t.Fatalf("actions %v, want one PATCH of pods/status", cs.Actions())
	}
	var body struct {
		Metadata struct {
			UID         string             `json:"uid"`
			Labels      map[string]*string `json:"labels"`
			Annotations map[string]*string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(patches[0].GetPatch(), &body); err != nil {
		t.Fatal(err)
	}
	if body.Metadata.UID != string(pod.UID) {
		t.Errorf("patch without the UID precondition: %s", patches[0].GetPatch())
	}
	if len(body.Metadata.Labels) != 1 || len(body.Metadata.Annotations) != 1 {
		t.Errorf("patch %s, want only the provider's label and annotation", patches[0].GetPatch())
	}
	got, err := cs.CoreV1().Pods("ns").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantLabels := map[string]string{"app": "web-v2", "provider.example.com/zone": "z1"}
	wantAnn := map[string]string{"provider.example.com/id": "i-123"}
	if !maps.Equal(got.Labels, wantLabels) || !maps.Equal(got.Annotations, wantAnn) {
		t.Errorf("labels %v annotations %v; want %v %v", got.Labels, got.Annotations, wantLabels, wantAnn)
	}

	// The same copy again: nothing to send. Then the provider removes its label.
	c.EventHandler().OnUpdate(other, got)
	cs.ClearActions()
	if _, err := c.Pods("ns").UpdateStatus(ctx, provider, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	again := provider.DeepCopy()
	delete(again.Labels, "provider.example.com/zone")
	if _, err := c.Pods("ns").UpdateStatus(ctx, again, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, a := range cs.Actions() {
		if _, ok := a.(k8stesting.PatchAction); ok {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d PATCHes, want 1 (the removal only)", n)
	}
	got, _ = cs.CoreV1().Pods("ns").Get(ctx, "web", metav1.GetOptions{})
	if _, ok := got.Labels["provider.example.com/zone"]; ok || got.Labels["app"] != "web-v2" {
		t.Errorf("labels %v after the provider removed its label", got.Labels)
	}

	// MetadataIgnore sends nothing.
	ci := New(cs.CoreV1(), Options{Metadata: MetadataIgnore})
	ci.EventHandler().OnAdd(got, true)
	cs.ClearActions()
	odd := provider.DeepCopy()
	odd.Labels["x"] = "y"
	if _, err := ci.Pods("ns").UpdateStatus(ctx, odd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(cs.Actions()) != 0 {
		t.Errorf("MetadataIgnore sent %v", cs.Actions())
	}
}

// TestChanged: a key is in
// the patch exactly when the provider changed it and the server does not already agree.
func TestChanged(t *testing.T) {
	for _, tc := range []struct {
		name              string
		ref, mine, server map[string]string
		want              map[string]string // "<nil>" for a removal
	}{
		{"unchanged", map[string]string{"a": "1"}, map[string]string{"a": "1"}, map[string]string{"a": "2"}, nil},
		{"added", nil, map[string]string{"a": "1"}, nil, map[string]string{"a": "1"}},
		{"added, already there", nil, map[string]string{"a": "1"}, map[string]string{"a": "1"}, nil},
		{"changed", map[string]string{"a": "1"}, map[string]string{"a": "2"}, map[string]string{"a": "1"}, map[string]string{"a": "2"}},
		{"removed", map[string]string{"a": "1"}, nil, map[string]string{"a": "1"}, map[string]string{"a": "<nil>"}},
		{"removed, already gone", map[string]string{"a": "1"}, nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := changed(tc.ref, tc.mine, tc.server)
			flat := map[string]string{}
			for k, v := range got {
				if v == nil {
					flat[k] = "<nil>"
				} else {
					flat[k] = *v
				}
			}
			if len(flat) != len(tc.want) || (len(tc.want) > 0 && !maps.Equal(flat, tc.want)) {
				t.Errorf("changed = %v, want %v", flat, tc.want)
			}
		})
	}
}
