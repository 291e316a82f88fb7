package nodegate

import (
	v1 "k8s.io/api/core/v1"
)

// TaintDiff is a change to a node's taints: the taints to add, the taints to
// remove, and the node's full taint list once both are applied.
type TaintDiff struct {
	// Add are taints to append to the node.
	Add []v1.Taint
	// Remove are existing taints to delete (every copy with the same key and
	// effect).
	Remove []v1.Taint
	// NewTaints is the node's taint list after the change: the existing
	// taints minus Remove, in their order, then Add.
	NewTaints []v1.Taint
}

// Empty reports whether the diff changes nothing.
func (d TaintDiff) Empty() bool { return len(d.Add) == 0 && len(d.Remove) == 0 }

// diffTaints computes the change that makes the owned subset of existing equal
// desired, by key and effect (the value is not part of a taint's identity, as
// for the node lifecycle controller). owned says which taints the caller
// manages; others are never removed. With replaceValue, an owned taint whose
// value differs from the desired one is removed and re-added.
func diffTaints(existing, desired []v1.Taint, owned func(*v1.Taint) bool, replaceValue bool) TaintDiff {
	var d TaintDiff
	for i := range desired {
		want := desired[i]
		present := false
		for j := range existing {
			if existing[j].MatchTaint(&want) && (!replaceValue || existing[j].Value == want.Value) {
				present = true
				break
			}
		}
		if !present {
			d.Add = append(d.Add, want)
		}
	}
	removed := make([]bool, len(existing))
	for j := range existing {
		t := existing[j]
		if !owned(&t) {
			continue
		}
		keep := false
		for i := range desired {
			if desired[i].MatchTaint(&t) && (!replaceValue || desired[i].Value == t.Value) {
				keep = true
				break
			}
		}
		if !keep {
			removed[j] = true
			d.Remove = append(d.Remove, t)
		}
	}
	for j := range existing {
		if !removed[j] {
			d.NewTaints = append(d.NewTaints, existing[j])
		}
	}
	d.NewTaints = append(d.NewTaints, d.Add...)
	return d
}
