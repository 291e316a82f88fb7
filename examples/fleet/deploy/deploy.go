// Package deploy holds the fleet agent's Kubernetes manifests, the YAML files beside this
// file (kubectl apply -k examples/fleet/deploy), and decodes them, so that tests check the
// files users apply: this module's tests build the image's binary and run it with the
// StatefulSet's arguments, and internal/upstream/deploy applies the RBAC to a
// kube-apiserver with RBAC authorization and runs the agent with the ServiceAccount's
// token. See README.md beside it.
package deploy

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"

	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

//go:embed *.yaml
var files embed.FS

// kustomization is the part of kustomization.yaml that Objects reads.
type kustomization struct {
	Resources []string `json:"resources"`
}

// Resources returns the file names kustomization.yaml lists under resources, in its
// order.
func Resources() ([]string, error) {
	b, err := files.ReadFile("kustomization.yaml")
	if err != nil {
		return nil, fmt.Errorf("deploy: %w", err)
	}
	var k kustomization
	if err := yaml.Unmarshal(b, &k); err != nil {
		return nil, fmt.Errorf("deploy: kustomization.yaml: %w", err)
	}
	if len(k.Resources) == 0 {
		return nil, errors.New("deploy: kustomization.yaml lists no resources")
	}
	return k.Resources, nil
}

// Objects decodes every object of the files kustomization.yaml lists, in order, as typed
// objects of client-go's scheme (a *v1.Namespace, an *rbacv1.ClusterRole, an
// *appsv1.StatefulSet, ...), without defaults. A document that does not decode strictly
// (an unknown or duplicated field), or a kind client-go does not know, is an error naming
// its file.
func Objects() ([]runtime.Object, error) {
	names, err := Resources()
	if err != nil {
		return nil, err
	}
	// Strict: an unknown or duplicated field (a typo such as runAsNonroot) is an error,
	// not silently dropped as kubectl's client-side decoding would.
	strict := kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme.Scheme, scheme.Scheme,
		kjson.SerializerOptions{Yaml: true, Strict: true})
	var out []runtime.Object
	for _, name := range names {
		b, err := files.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("deploy: %s (listed in kustomization.yaml): %w", name, err)
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
		for i := 0; ; i++ {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("deploy: %s: document %d: %w", name, i, err)
			}
			js, err := yaml.YAMLToJSON(doc)
			if err != nil {
				return nil, fmt.Errorf("deploy: %s: document %d: %w", name, i, err)
			}
			if string(js) == "null" { // comments only
				continue
			}
			obj, _, err := strict.Decode(doc, nil, nil)
			if err != nil {
				return nil, fmt.Errorf("deploy: %s: document %d: %w", name, i, err)
			}
			out = append(out, obj)
		}
	}
	return out, nil
}

// varRef is a $(VAR) reference in a container's arguments.
var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// ReplicaArgs returns the arguments of sts's first container as the kubelet passes them to
// the replica with the given ordinal (the pod named <sts.Name>-<ordinal>): every $(VAR)
// replaced by the container's env, whose values come from a literal value, the pod's
// metadata.name or its label apps.kubernetes.io/pod-index (the ordinal). A reference to
// anything else is an error: it could not be resolved without a cluster.
func ReplicaArgs(sts *appsv1.StatefulSet, ordinal int) ([]string, error) {
	if len(sts.Spec.Template.Spec.Containers) == 0 {
		return nil, fmt.Errorf("deploy: StatefulSet %s has no container", sts.Name)
	}
	c := sts.Spec.Template.Spec.Containers[0]
	pod := fmt.Sprintf("%s-%d", sts.Name, ordinal)
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.FieldRef == nil:
		case e.ValueFrom.FieldRef.FieldPath == "metadata.name":
			env[e.Name] = pod
		case e.ValueFrom.FieldRef.FieldPath == "metadata.labels['"+appsv1.PodIndexLabel+"']":
			env[e.Name] = strconv.Itoa(ordinal)
		}
	}
	out := make([]string, len(c.Args))
	for i, a := range c.Args {
		var missing []string
		out[i] = varRef.ReplaceAllStringFunc(a, func(m string) string {
			name := varRef.FindStringSubmatch(m)[1]
			v, ok := env[name]
			if !ok {
				missing = append(missing, name)
			}
			return v
		})
		if len(missing) > 0 {
			return nil, fmt.Errorf("deploy: argument %q of %s: $(%s) is not set from a value, metadata.name or the pod-index label", a, pod, missing[0])
		}
	}
	return out, nil
}
