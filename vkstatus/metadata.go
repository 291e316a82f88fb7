package vkstatus

import (
	"encoding/json"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// metadataPatch returns the strategic-merge patch of pods/status that sets or removes the
// labels and annotations the provider changed: a key whose value in pod differs from the
// reference (the provider's previous copy) and from the server's. A key the provider
// removed is sent as null. It returns nil when there is nothing to send. The patch
// carries metadata.uid, the precondition that keeps it off a recreated pod.
func metadataPatch(uid types.UID, refLabels, refAnnotations map[string]string, pod, server *v1.Pod) []byte {
	labels := changed(refLabels, pod.Labels, server.Labels)
	annotations := changed(refAnnotations, pod.Annotations, server.Annotations)
	if labels == nil && annotations == nil {
		return nil
	}
	meta := map[string]any{"uid": uid}
	if labels != nil {
		meta["labels"] = labels
	}
	if annotations != nil {
		meta["annotations"] = annotations
	}
	b, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		// Maps of strings always marshal.
		panic(err)
	}
	return b
}

// changed returns the keys whose value in mine differs from ref (the provider changed
// them) and from server (not already there): the new value, or nil for a removed key.
func changed(ref, mine, server map[string]string) map[string]*string {
	var out map[string]*string
	set := func(k string, v *string) {
		if out == nil {
			out = map[string]*string{}
		}
		out[k] = v
	}
	for k, v := range mine {
		if r, ok := ref[k]; ok && r == v {
			continue
		}
		if s, ok := server[k]; ok && s == v {
			continue
		}
		set(k, &v)
	}
	for k := range ref {
		if _, ok := mine[k]; ok {
			continue
		}
		if _, ok := server[k]; ok {
			set(k, nil)
		}
	}
	return out
}
