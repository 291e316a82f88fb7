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
