package eviction

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// etcdWriter writes PDBs straight into the server's etcd, past validation.
// policy/v1 validation rejects a negative disruptionsAllowed (policy/v1beta1,
// which did not, is no longer served), an invalid selector and an unknown
// unhealthyPodEvictionPolicy; the only way to show the eviction handler such a
// PDB is to store it under the API server. The
// object is stored as JSON, which the API server's storage codec decodes as
// well as its own protobuf.
type etcdWriter struct {
	client *clientv3.Client
	// prefix is the key prefix of PDBs, ".../poddisruptionbudgets/".
	prefix string
}

// newEtcdWriter connects to the server's etcd and finds the key prefix of PDBs
// from the key of known, an existing PDB.
func newEtcdWriter(ctx context.Context, endpoints []string, known *policyv1.PodDisruptionBudget) (*etcdWriter, error) {
	c, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 10 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("etcd client: %w", err)
	}
	resp, err := c.Get(ctx, "/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("list etcd keys: %w", err)
	}
	suffix := "/poddisruptionbudgets/" + known.Namespace + "/" + known.Name
	for _, kv := range resp.Kvs {
		if k := string(kv.Key); strings.HasSuffix(k, suffix) {
			return &etcdWriter{client: c, prefix: strings.TrimSuffix(k, known.Namespace+"/"+known.Name)}, nil
		}
	}
	c.Close()
	return nil, fmt.Errorf("no etcd key ends in %q among %d keys", suffix, len(resp.Kvs))
}

// rewrite stores PDB ns/name as change leaves it, and checks with check that
// the API server then serves the changed object.
func (w *etcdWriter) rewrite(ctx context.Context, c kubernetes.Interface, ns, name string, change func(*policyv1.PodDisruptionBudget), check func(*policyv1.PodDisruptionBudget) bool) error {
	pdbs := c.PolicyV1().PodDisruptionBudgets(ns)
	pdb, err := pdbs.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("read pdb %s: %w", name, err)
	}
	change(pdb)
	pdb.APIVersion, pdb.Kind = policyv1.SchemeGroupVersion.String(), "PodDisruptionBudget"
	pdb.ResourceVersion = "" // etcd's revision is the resourceVersion
	data, err := json.Marshal(pdb)
	if err != nil {
		return fmt.Errorf("encode pdb %s: %w", name, err)
	}
	if _, err := w.client.Put(ctx, w.prefix+ns+"/"+name, string(data)); err != nil {
		return fmt.Errorf("put pdb %s into etcd: %w", name, err)
	}
	// A Get without resourceVersion is a quorum read: it sees the write.
	got, err := pdbs.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("read pdb %s after the etcd write: %w", name, err)
	}
	if !check(got) {
		return fmt.Errorf("pdb %s after the etcd write: %+v %+v", name, got.Spec, got.Status)
	}
	return nil
}

// Close closes the etcd client.
func (w *etcdWriter) Close() error { return w.client.Close() }
