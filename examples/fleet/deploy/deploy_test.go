package deploy_test

import (
	"bufio"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podstatus/podstatus/examples/fleet/deploy"
)

// repoRoot is the Dockerfile's build context: the repository's root.
const repoRoot = "../../.."

// Every file kustomization.yaml lists decodes strictly, and every YAML file of the
// directory is listed (a manifest left out of the kustomization is never applied).
func TestKustomizationListsEveryManifest(t *testing.T) {
	listed, err := deploy.Resources()
	if err != nil {
		t.Fatal(err)
	}
	onDisk, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	onDisk = slices.DeleteFunc(onDisk, func(f string) bool { return f == "kustomization.yaml" })
	slices.Sort(onDisk)
	got := slices.Sorted(slices.Values(listed))
	if !slices.Equal(got, onDisk) {
		t.Errorf("kustomization.yaml lists %v; the directory holds %v", got, onDisk)
	}
	objs, err := deploy.Objects()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[fmt.Sprintf("%T", o)]++
	}
	for _, k := range []string{"*v1.Namespace", "*v1.ServiceAccount", "*v1.ClusterRole", "*v1.ClusterRoleBinding", "*v1.Role", "*v1.RoleBinding", "*v1.StatefulSet", "*v1.Service"} {
		if kinds[k] != 1 {
			t.Errorf("%d objects of type %s, want 1 (all: %v)", kinds[k], k, kinds)
		}
	}
}

// The bindings name the ServiceAccount the StatefulSet runs as, and the roles they bind.
func TestBindingsNameTheAgentsServiceAccount(t *testing.T) {
	objs := objects(t)
	sts := one[*appsv1.StatefulSet](t, objs)
	sa := one[*v1.ServiceAccount](t, objs)
	if sts.Spec.Template.Spec.ServiceAccountName != sa.Name || sts.Namespace != sa.Namespace {
		t.Errorf("StatefulSet runs as %s/%s, the ServiceAccount is %s/%s", sts.Namespace, sts.Spec.Template.Spec.ServiceAccountName, sa.Namespace, sa.Name)
	}
	want := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: sa.Namespace}
	crb, rb := one[*rbacv1.ClusterRoleBinding](t, objs), one[*rbacv1.RoleBinding](t, objs)
	if !slices.Equal(crb.Subjects, []rbacv1.Subject{want}) || !slices.Equal(rb.Subjects, []rbacv1.Subject{want}) {
		t.Errorf("subjects %v and %v, want only %v", crb.Subjects, rb.Subjects, want)
	}
	if cr := one[*rbacv1.ClusterRole](t, objs); crb.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: cr.Name}) {
		t.Errorf("ClusterRoleBinding binds %v, not the ClusterRole %s", crb.RoleRef, cr.Name)
	}
	if r := one[*rbacv1.Role](t, objs); rb.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: r.Name}) || rb.Namespace != r.Namespace || r.Namespace != v1.NamespaceNodeLease {
		t.Errorf("RoleBinding %s/%s binds %v; the Role is %s/%s, want it in %s", rb.Namespace, rb.Name, rb.RoleRef, r.Namespace, r.Name, v1.NamespaceNodeLease)
	}
}

// Two replicas never manage the same node: each creates nodes named after its pod, and
// none selects existing nodes (a --manage-* flag would make every replica adopt the same
// ones). The node names of replicas 0..20, 100 nodes each, are checked disjoint.
func TestReplicasNeverShareANode(t *testing.T) {
	sts := one[*appsv1.StatefulSet](t, objects(t))
	owner := map[string]string{}
	for ordinal := range 21 {
		pod := fmt.Sprintf("%s-%d", sts.Name, ordinal)
		args, err := deploy.ReplicaArgs(sts, ordinal)
		if err != nil {
			t.Fatal(err)
		}
		prefix, nodes := "", 0
		for _, a := range args {
			name, value, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			switch {
			case name == "node-name-prefix":
				prefix = value
			case name == "nodes":
				if _, err := fmt.Sscan(value, &nodes); err != nil {
					t.Fatalf("--nodes=%q: %v", value, err)
				}
			case strings.HasPrefix(name, "manage-"):
				t.Fatalf("argument %q: a replica must not select existing nodes, every replica would select the same", a)
			}
		}
		if !strings.Contains(prefix, pod) || nodes < 1 {
			t.Fatalf("replica %s: --node-name-prefix=%q --nodes=%d: the prefix must hold the pod's name", pod, prefix, nodes)
		}
		for i := range nodes {
			node := fmt.Sprintf("%s%d", prefix, i)
			if other, ok := owner[node]; ok {
				t.Fatalf("node %s belongs to replicas %s and %s", node, other, pod)
			}
			owner[node] = pod
		}
	}
}

// The Dockerfile builds the agent's package from the repository root, as a static binary
// (CGO_ENABLED=0) on distroless/static as a non-root user; the files it copies exist. This
// test builds the same package the same way, checks the binary has no dynamic loader, and
// runs it with the StatefulSet's arguments: every flag is accepted, and it stops only at
// the (missing) kubeconfig.
func TestDockerfileBuildsTheAgent(t *testing.T) {
	f, err := os.Open("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var froms, copies []string
	var user, build string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		instr, rest, _ := strings.Cut(line, " ")
		switch instr {
		case "FROM":
			froms = append(froms, rest)
		case "COPY":
			if !strings.HasPrefix(rest, "--from=") {
				fs := strings.Fields(rest)
				copies = append(copies, fs[:len(fs)-1]...)
			}
		case "USER":
			user = rest
		case "RUN":
			if strings.Contains(rest, "go build") {
				build = rest
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(froms) < 2 || !(strings.HasPrefix(froms[len(froms)-1], "gcr.io/distroless/static") || froms[len(froms)-1] == "scratch") {
		t.Errorf("stages %q: want a build stage and a final distroless/static or scratch stage", froms)
	}
	if uid, _, _ := strings.Cut(user, ":"); uid == "" || uid == "0" || strings.Trim(uid, "0123456789") != "" {
		t.Errorf("USER %q: want a numeric non-root user (runAsNonRoot can check only a number)", user)
	}
	for _, c := range copies {
		if _, err := os.Stat(filepath.Join(repoRoot, c)); err != nil {
			t.Errorf("COPY %s: %v", c, err)
		}
	}
	m := regexp.MustCompile(`^cd (\S+) && CGO_ENABLED=0 go build .* -o \S+ (\./\S+)$`).FindStringSubmatch(build)
	if m == nil {
		t.Fatalf("RUN %q: want 'cd MODULE && CGO_ENABLED=0 go build ... -o OUT ./PACKAGE'", build)
	}
	dir := filepath.Join(repoRoot, m[1])
	if _, err := os.Stat(filepath.Join(dir, m[2], "main.go")); err != nil {
		t.Fatalf("the Dockerfile builds %s in %s: %v", m[2], m[1], err)
	}

	bin := filepath.Join(t.TempDir(), "fleet")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, m[2])
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build %s: %v\n%s", m[2], err, out)
	}
	if e, err := elf.Open(bin); err == nil { // not ELF (another OS): nothing to check
		for _, p := range e.Progs {
			if p.Type == elf.PT_INTERP {
				t.Errorf("%s has a dynamic loader: not a static binary", bin)
			}
		}
		e.Close()
	}

	sts := one[*appsv1.StatefulSet](t, objects(t))
	args, err := deploy.ReplicaArgs(sts, 0)
	if err != nil {
		t.Fatal(err)
	}
	args = append(args, "--kubeconfig", filepath.Join(t.TempDir(), "none"))
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	if err == nil || strings.Contains(string(out), "invalid flags") || !strings.Contains(string(out), "--kubeconfig") {
		t.Fatalf("fleet %q: %v\n%s\nwant the flags accepted and a failure at the kubeconfig", args, err, out)
	}
}

func objects(t *testing.T) []any {
	t.Helper()
	objs, err := deploy.Objects()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]any, len(objs))
	for i, o := range objs {
		out[i] = o
	}
	return out
}

// one returns the only object of type T.
func one[T any](t *testing.T, objs []any) T {
	t.Helper()
	var found []T
	for _, o := range objs {
		if v, ok := o.(T); ok {
			found = append(found, v)
		}
	}
	if len(found) != 1 {
		var zero T
		t.Fatalf("%d objects of type %T, want 1", len(found), zero)
	}
	return found[0]
}

// ReplicaArgs resolves $(VAR) as the kubelet does for the env sources it supports, and
// refuses the others.
func TestReplicaArgs(t *testing.T) {
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "fleet"}}
	sts.Spec.Template.Spec.Containers = []v1.Container{{
		Args: []string{"--a=$(POD_NAME)-x", "--b=$(SHARD)", "--c=$(LIT)$(LIT)", "--d=plain"},
		Env: []v1.EnvVar{
			{Name: "POD_NAME", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			{Name: "SHARD", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels['apps.kubernetes.io/pod-index']"}}},
			{Name: "LIT", Value: "v"},
			{Name: "NODE", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
		},
	}}
	got, err := deploy.ReplicaArgs(sts, 7)
	if want := []string{"--a=fleet-7-x", "--b=7", "--c=vv", "--d=plain"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("ReplicaArgs = %q, %v; want %q", got, err, want)
	}
	sts.Spec.Template.Spec.Containers[0].Args = []string{"--e=$(NODE)"}
	if _, err := deploy.ReplicaArgs(sts, 0); err == nil || !strings.Contains(err.Error(), "$(NODE)") {
		t.Errorf("ReplicaArgs with a spec.nodeName reference: %v, want an error naming $(NODE)", err)
	}
}
