package status

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	patchenc "github.com/podstatus/podstatus/internal/patch"
)

// PatchBytes returns the strategic-merge patch (application/strategic-merge-patch+json) of
// the pods/status subresource that takes a pod's status from old to new, and whether the patch
// changes nothing, in which case the kubelet sends no request.
//
// The patch is built directly from the typed values, and it is the same, byte for byte, as
// the kubelet's (k8s.io/kubernetes/pkg/util/pod.PatchPodStatus, which marshals both pods and
// diffs them with strategicpatch.CreateTwoWayMergePatch), without marshalling either status:
//
//   - it always carries {"metadata":{"uid":uid}}, a precondition: the API server rejects the
//     patch with 422 Invalid if the stored pod has another UID;
//   - conditions, podIPs, hostIPs, resourceClaimStatuses and
//     nodeAllocatableResourceClaimStatuses are merged by key: only added and changed elements
//     are sent (changed ones with just the changed fields, null for removed fields), removed
//     ones as {"$patch":"delete",...}, and "$setElementOrder/<list>" whenever the list
//     changed in content or order, so elements written by other controllers survive (but
//     a list that is empty in new is sent as null and so cleared on the server, foreign
//     elements included, exactly as upstream; merging with the server's copy first, as the
//     Manager does, avoids that);
//   - the container status lists and volumeHealth are replaced whole when they changed;
//   - other fields are set, or null when they were removed.
//
// Values are compared as they would be after a JSON round trip (times to the second, for
// example), so a change invisible in JSON yields no patch. When unchanged is true the patch
// is the bare precondition; the common no-op case is answered by a typed comparison,
// without encoding anything. As upstream does, an empty uid yields a patch without the
// precondition and is never reported unchanged, and neither is a uid that strconv.Quote
// and encoding/json write differently (one with '<', say).
//
// Every pair of statuses has a patch, so PatchBytes cannot fail.
func PatchBytes(uid types.UID, old, new v1.PodStatus) (patch []byte, unchanged bool) {
	return patchenc.PodStatus(string(uid), &old, &new)
}
