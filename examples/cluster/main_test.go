package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

// TestBadFlags: a bad command line exits 2 and names the flag, before anything starts
// (each case returns at once: no control plane is started by parse).
func TestBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--nodes=0"}, "--nodes"},
		{[]string{"--nodes=x"}, "-nodes"},
		{[]string{"--nodes=5001"}, "--nodes"},
		{[]string{"--profile=slow"}, "--profile"},
		{[]string{"--max-pods=-1"}, "--max-pods"},
		{[]string{"--node-name-prefix=UPPER"}, "--node-name-prefix"},
		{[]string{"--kubeconfig-out="}, "--kubeconfig-out"},
		{[]string{"--scheduler-flag=--no-such-flag"}, "kube-scheduler"},
		{[]string{"--controller-manager-flag=--node-monitor-grace-period=soon"}, "kube-controller-manager"},
		{[]string{"--controllers=deployment-controller,no-such-controller"}, "no-such-controller"},
		{[]string{"extra"}, "unexpected arguments"},
	} {
		var stderr bytes.Buffer
		if code := run(tc.args, io.Discard, &stderr); code != exitUsage {
			t.Errorf("%q: exit code %d, want %d (stderr %q)", tc.args, code, exitUsage, stderr.String())
		}
		if !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: stderr %q does not name %q", tc.args, stderr.String(), tc.want)
		}
	}
}

// TestDataDirLock: a second cluster on the same --data-dir is refused, naming the
// holder; the lock goes with its holder.
func TestDataDirLock(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lockDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = lockDataDir(dir)
	if err == nil || !strings.Contains(err.Error(), "another cluster runs there") || !strings.Contains(err.Error(), "--data-dir") {
		t.Fatalf("second lock: %v, want a refusal naming --data-dir", err)
	}
	unlock()
	unlock2, err := lockDataDir(dir)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	unlock2()
}

// TestCommand runs the command as a user does: it prints its progress and a kubeconfig;
// `kubectl create deployment web --image=x --replicas=20` (here through client-go) gives
// 20 Running and Ready pods; SIGTERM (as Ctrl-C's SIGINT; the testing package keeps SIGINT for itself) stops everything within seconds and removes the
// kubeconfig and the data directory's contents.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	kubeconfig := filepath.Join(dir, "kubeconfig")
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	begin := time.Now()
	go func() {
		code := run([]string{"--nodes=3", "--profile=fast", "--data-dir=" + dataDir, "--kubeconfig-out=" + kubeconfig}, pw, &stderr)
		pw.Close()
		done <- code
	}()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var out []string
	ready := false
	timeout := time.After(2 * time.Minute)
	for !ready {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the command ended before it was ready (exit %d): %q, stderr %q", <-done, out, stderr.String())
			}
			out = append(out, l)
			ready = strings.HasPrefix(l, "Kubernetes v1.37.0 cluster ready")
		case <-timeout:
			t.Fatalf("not ready within 2 minutes: %q", out)
		}
	}
	t.Logf("ready in %v:\n%s", time.Since(begin).Round(100*time.Millisecond), strings.Join(out, "\n"))
	if len(out) < 6 {
		t.Errorf("%d progress lines before ready, want one per component", len(out))
	}
	go func() {
		for range lines { // keep the command's output flowing
		}
	}()

	if _, err := lockDataDir(dataDir); err == nil {
		t.Error("a second cluster could lock the running cluster's data directory")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c := kubernetes.NewForConfigOrDie(cfg)
	ctx := t.Context()
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](20),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "x", Image: "x"}}},
			},
		},
	}
	t0 := time.Now()
	if _, err := c.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var n int
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := c.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, nil
		}
		n = 0
		for _, p := range pods.Items {
			for _, cnd := range p.Status.Conditions {
				if p.Status.Phase == v1.PodRunning && cnd.Type == v1.PodReady && cnd.Status == v1.ConditionTrue {
					n++
				}
			}
		}
		return n == 20, nil
	})
	if err != nil {
		t.Fatalf("%d of 20 pods Running and Ready: %v", n, err)
	}
	t.Logf("20 pods Running and Ready %v after the Deployment was created", time.Since(t0).Round(100*time.Millisecond))

	t0 = time.Now()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit code %d after SIGTERM, want 0 (stderr %q)", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the command did not stop within 30 s of SIGTERM")
	}
	t.Logf("stopped %v after SIGTERM", time.Since(t0).Round(100*time.Millisecond))
	if _, err := os.Stat(kubeconfig); !os.IsNotExist(err) {
		t.Errorf("kubeconfig %s left behind: %v", kubeconfig, err)
	}
	left, err := os.ReadDir(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Errorf("left in the data directory: %v", names)
	}
}
