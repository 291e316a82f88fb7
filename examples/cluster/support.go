package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"k8s.io/klog/v2"

	"github.com/podstatus/podstatus/internal/upstream/apiserver"
	"github.com/podstatus/podstatus/internal/upstream/cluster"
)

// quietKlog routes the components' klog output: to stderr with -v, else nowhere (a fresh
// control plane logs errors that mean nothing here, such as the endpoints reconciler's
// "Found stale data" or a controller's first failed discovery while the API server
// settles).
func quietKlog(verbose bool, stderr io.Writer) error {
	kfs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(kfs)
	if verbose {
		klog.SetOutput(stderr)
		return nil
	}
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	return kfs.Set("stderrthreshold", "FATAL")
}

// lockDataDir takes an exclusive lock on dir/cluster.lock (flock, released by the kernel
// if the process dies) and writes the process id in it, or says which process holds it.
func lockDataDir(dir string) (unlock func(), err error) {
	path := filepath.Join(dir, "cluster.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("--data-dir: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("--data-dir %s: another cluster runs there (pid %s holds %s)", dir, strings.TrimSpace(string(b)), path)
		}
		return nil, fmt.Errorf("--data-dir: lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() {
		os.Remove(path)
		f.Close()
	}, nil
}

// writeKubeconfig writes the super-user's kubeconfig for the cluster's API server.
func writeKubeconfig(path string, cp *cluster.ControlPlane) error {
	if _, err := os.Stat(path); err == nil {
		// A file left by a cluster that was killed (SIGKILL) points at a dead server:
		// overwrite it; anything else is the user's to move.
		if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), "podstatus") {
			return fmt.Errorf("--kubeconfig-out %s exists and is not a kubeconfig this command wrote", path)
		}
	}
	if err := apiserver.WriteKubeconfig(path, cp.Config); err != nil {
		return fmt.Errorf("--kubeconfig-out: %w", err)
	}
	return nil
}
