// Package patch builds the strategic-merge patch of a pod's status straight from the typed
// v1.PodStatus values, without marshalling the pods to maps and diffing them.
//
// The output is meant to equal, byte for byte, what the kubelet sends: the JSON of
// apimachinery's CreateTwoWayMergePatch applied to json.Marshal(v1.Pod{Status: old}) and
// json.Marshal(v1.Pod{ObjectMeta: {UID: uid}, Status: new}). Everything that decides the
// shape of that patch is reproduced from the typed values:
//
//   - values are compared as they compare after a JSON round trip: times at whole seconds in
//     UTC, strings with each invalid UTF-8 byte replaced by U+FFFD, quantities in their
//     serialised form, nil and empty lists, maps and strings alike where omitempty drops them;
//   - lists with a merge patch strategy (conditions, podIPs, hostIPs, resourceClaimStatuses,
//     nodeAllocatableResourceClaimStatuses and the lists inside the latter) are diffed by merge
//     key, in the same pairing order (including the order the reference gives duplicate keys),
//     with "$setElementOrder/<list>" and "$patch":"delete" directives, and "$retainKeys" where
//     the strategy asks for it;
//   - every other list is atomic and is resent whole when it changed;
//   - objects are written with their keys sorted, as encoding/json writes a map.
//
// Package status exposes this as status.PatchBytes, and its Manager compares cached statuses
// with EqualFields; nothing else should import it.
package patch
