package bench

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// FieldDiff is one field of a pod's status on which the agents' statuses differ, after
// normalising what must differ between any two pods (see CompareStatuses).
type FieldDiff struct {
	// Field is the field's path in the status: JSON names joined by dots, a list
	// element named by its key (conditions[Ready], containerStatuses[pause]) or, for
	// lists without a key, its index.
	Field string `json:"field"`
	// Values holds, per agent, the field's normalised value: a JSON scalar as text
	// (`""` for an empty string), "{}" or "[]" for an empty object or list, "present"
	// for a list element present in some agents' statuses only, and "" where the agent's
	// status has no such field. A field inside a list element is compared only between
	// the agents that have the element; the others have no entry.
	Values map[string]string `json:"values"`
	// Reason says why the agents differ on the field, from the table knownDifferences;
	// empty for a difference nobody explained yet.
	Reason string `json:"reason,omitempty"`
}

// knownDifferences explains the differences between the fleet agent, KWOK v0.8.0 and
// kubemark v1.37.0's hollow kubelet, by field ("[*]" for any element of a list). The
// hollow kubelet runs the kubelet's own code (k8s.io/kubernetes@v1.37.0, pkg/kubelet)
// with a fake container runtime (k8s.io/cri-api/pkg/apis/testing) and a fake prober
// (pkg/kubelet/prober/testing): each reason says which of the two wrote the value.
var knownDifferences = map[string]string{
	"observedGeneration":                    "the kubelet writes the pod's metadata.generation it acted on (KEP-5067, PodObservedGenerationTracking, on by default since v1.35), and so does the fleet agent; KWOK v0.8.0's pod-ready stage does not",
	"conditions[*].observedGeneration":      "the kubelet writes, on each condition it owns, the generation it acted on (KEP-5067), and so does the fleet agent; KWOK v0.8.0's stages do not",
	"conditions[PodReadyToStartContainers]": "the kubelet adds it once the pod's sandbox is ready (KEP-3085, PodReadyToStartContainersCondition, on by default since v1.29; generateAPIPodStatus in pkg/kubelet/kubelet_pods.go), and so does the fleet agent; KWOK's pod-ready stage writes only Initialized, Ready and ContainersReady",
	"conditions[PodScheduled]":              "the kubelet's generateAPIPodStatus (pkg/kubelet/kubelet_pods.go) always writes PodScheduled=True, and so does the fleet agent (the scheduler writes it first on a real cluster; the bench binds pods itself); KWOK does not",
	"containerStatuses[*].imageID":          "a runtime's digest of the image: the fleet agent writes one as containerd would (registry.k8s.io/pause@sha256:...); kubemark's fake runtime echoes the image name it was asked for (ImageRef in k8s.io/cri-api/pkg/apis/testing/fake_runtime_service.go) — the fake, not the kubelet; KWOK writes an empty string",
	"containerStatuses[*].containerID":      "runtime://id (the id normalised away): the fleet agent writes containerd://<64 hex digits> as containerd would; kubemark's fake runtime names its containers fakeRuntime://<pod>_<namespace>_<uid>_... — the fake, not the kubelet; KWOK writes none",
	"containerStatuses[*].started":          "the kubelet's prober manager sets started (UpdatePodStatus in pkg/kubelet/prober/prober_manager.go), and so does the fleet agent; kubemark replaces the prober with probetest.FakeManager (pkg/kubemark/hollow_kubelet.go), which only sets ready=true — the fake, not the kubelet; KWOK does not write it",
	"containerStatuses[*].resources":        "the kubelet writes each container's resources (convertToAPIContainerStatuses in pkg/kubelet/kubelet_pods.go; InPlacePodVerticalScaling, GA in v1.35), empty for a container without requests or limits, and so does the fleet agent; KWOK does not",
	"resources":                             "the kubelet v1.37.0 writes the pod-level resources (convertToAPIPodLevelResourcesStatus in pkg/kubelet/kubelet_pods.go; InPlacePodLevelResourcesVerticalScaling, beta and on by default since v1.36), empty for a pod without pod-level resources, and so does the fleet agent (podstate.Generate); KWOK does not",
}

// elementKey names the list elements: the key field of the pod status' keyed lists
// (conditions by type, container statuses by name); other lists (podIPs) go by index.
var elementKey = []string{"type", "name"}

// timeFields are the status' timestamps, which differ between any two pods.
var timeFields = []string{"startTime", "lastProbeTime", "lastTransitionTime", "startedAt", "finishedAt"}

// CompareStatuses compares the statuses that several agents wrote for pods of the same
// spec, field by field, and returns every field on which they differ, sorted by field,
// each with its reason when knownDifferences has one. Before comparing it normalises
// what differs between any two pods: timestamps (kept as "<time>" when set), the
// addresses (hostIP, hostIPs, podIP, podIPs: "<ip>"), and container IDs (kept as
// "<runtime>://<id>"). statuses maps an agent to its status; nil statuses are skipped.
func CompareStatuses(statuses map[string]*v1.PodStatus) ([]FieldDiff, error) {
	flat := map[string]map[string]string{} // agent → path → value
	elems := map[string]map[string]bool{}  // agent → list element paths
	var agents []string
	for a, s := range statuses {
		if s == nil {
			continue
		}
		agents = append(agents, a)
		raw, err := json.Marshal(s)
		if err != nil {
			return nil, fmt.Errorf("status of %s: %w", a, err)
		}
		var tree any
		if err := json.Unmarshal(raw, &tree); err != nil {
			return nil, fmt.Errorf("status of %s: %w", a, err)
		}
		flat[a], elems[a] = map[string]string{}, map[string]bool{}
		flatten(tree, "", "", flat[a], elems[a])
	}
	slices.Sort(agents)
	if len(agents) < 2 {
		return nil, nil
	}

	var out []FieldDiff
	diff := func(field string, value func(a string) string) {
		d := FieldDiff{Field: field, Values: map[string]string{}}
		first, same := value(agents[0]), true
		for _, a := range agents {
			v := value(a)
			d.Values[a] = v
			same = same && v == first
		}
		if !same {
			d.Reason = reasonFor(field)
			out = append(out, d)
		}
	}
	// A list element some agents lack is one difference, not one per field in it;
	// the fields in it are compared between the agents that have it.
	allElems := map[string]bool{}
	for _, a := range agents {
		for e := range elems[a] {
			allElems[e] = true
		}
	}
	for _, e := range sortedKeys(allElems) {
		diff(e, func(a string) string {
			if elems[a][e] {
				return "present"
			}
			return ""
		})
	}
	allFields := map[string]bool{}
	for _, a := range agents {
		for f := range flat[a] {
			allFields[f] = true
		}
	}
	for _, f := range sortedKeys(allFields) {
		elem := enclosingElement(f)
		var have []string
		for _, a := range agents {
			if elem == "" || elems[a][elem] {
				have = append(have, a)
			}
		}
		vals := map[string]string{}
		same := true
		for _, a := range have {
			vals[a] = flat[a][f]
			same = same && vals[a] == vals[have[0]]
		}
		if same {
			continue
		}
		out = append(out, FieldDiff{Field: f, Values: vals, Reason: reasonFor(f)})
	}
	slices.SortFunc(out, func(x, y FieldDiff) int { return strings.Compare(x.Field, y.Field) })
	return out, nil
}

// flatten records the leaves of tree (decoded JSON) under path in leaves, normalised,
// and the paths of list elements in elems. key is the JSON name of tree in its parent.
func flatten(tree any, path, key string, leaves map[string]string, elems map[string]bool) {
	switch t := tree.(type) {
	case map[string]any:
		if len(t) == 0 {
			leaves[path] = "{}"
			return
		}
		for k, v := range t {
			flatten(v, join(path, k), k, leaves, elems)
		}
	case []any:
		if len(t) == 0 {
			leaves[path] = "[]"
			return
		}
		for i, v := range t {
			name := fmt.Sprint(i)
			if m, ok := v.(map[string]any); ok {
				for _, k := range elementKey {
					if s, ok := m[k].(string); ok {
						name = s
						break
					}
				}
			}
			p := fmt.Sprintf("%s[%s]", path, name)
			elems[p] = true
			flatten(v, p, key, leaves, elems)
		}
	default:
		leaves[path] = normalise(key, path, t)
	}
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// containerIDPattern splits a container ID into runtime and id.
var containerIDPattern = regexp.MustCompile(`^([^:/]+)://.+$`)

// normalise returns the value v of the field key at path as text, with what differs
// between any two pods replaced.
func normalise(key, path string, v any) string {
	var s string
	switch t := v.(type) {
	case nil:
		return "null"
	case string:
		s = t
	default:
		b, _ := json.Marshal(t)
		s = string(b)
	}
	switch {
	case s == "":
		return `""`
	case slices.Contains(timeFields, key):
		return "<time>"
	case key == "hostIP" || key == "podIP" || strings.HasPrefix(path, "hostIPs[") || strings.HasPrefix(path, "podIPs["):
		return "<ip>"
	case key == "containerID":
		if m := containerIDPattern.FindStringSubmatch(s); m != nil {
			return m[1] + "://<id>"
		}
	}
	return s
}

// enclosingElement is the innermost list element that holds field, "" for none.
func enclosingElement(field string) string {
	i := strings.LastIndex(field, "]")
	if i < 0 {
		return ""
	}
	return field[:i+1]
}

// elementIndex matches a list element's key in a field path.
var elementIndex = regexp.MustCompile(`\[[^\]]*\]`)

// reasonFor looks field up in knownDifferences, exactly, then with every list element
// key replaced by [*].
func reasonFor(field string) string {
	if r, ok := knownDifferences[field]; ok {
		return r
	}
	if r, ok := knownDifferences[elementIndex.ReplaceAllString(field, "[*]")]; ok {
		return r
	}
	return ""
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
