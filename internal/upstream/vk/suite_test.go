package vk

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"path/filepath"
	"testing"
	"time"

	vke2e "github.com/virtual-kubelet/virtual-kubelet/test/e2e"

	"github.com/podstatus/podstatus/internal/upstream/apiserver"
	"github.com/podstatus/podstatus/podsim"
	"github.com/podstatus/podstatus/vkstatus/examples/vkpodsim/provider"
)

// skipped are the tests of virtual-kubelet's suite that cannot pass with podsim, and why.
var skipped = map[string]string{
	"TestGetStatsSummary":    "podsim runs no processes: it has no resource usage to report in /stats/summary",
	"TestGetMetricsResource": "podsim runs no processes: it has no resource usage to report in /metrics/resource",
}

// TestVirtualKubeletE2ESuite runs virtual-kubelet's own end-to-end suite
// (github.com/virtual-kubelet/virtual-kubelet/test/e2e, EndToEndTestSuite) against the
// in-process kube-apiserver with the podsim provider, once on virtual-kubelet's stock
// status write path and once with vkstatus. The kubelet API virtual-kubelet serves
// (/runningpods/, reached through nodes/proxy) listens on a host address with a self-signed
// certificate, which the API server does not verify (no --kubelet-certificate-authority).
func TestVirtualKubeletE2ESuite(t *testing.T) {
	srv := apiserver.Start(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := apiserver.WriteKubeconfig(kubeconfig, srv.Config); err != nil {
		t.Fatal(err)
	}
	ip := hostIP(t)
	cert := selfSigned(t, ip)
	for _, mode := range []string{"stock", "vkstatus"} {
		t.Run(mode, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			nodeName := "vk-e2e-" + mode
			n, err := provider.NewNode(provider.NodeConfig{Client: srv.NewClient(t, nodeName), Name: nodeName,
				PodCIDR: "10.244.2.0/24", NodeIP: ip, Profile: podsim.Fast(), Seed: 1, Stock: mode == "stock",
				FieldManager: nodeName, TLS: &tls.Config{Certificates: []tls.Certificate{cert}}, KubeletPort: freePort(t)})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { defer close(done); _ = n.Run(ctx) }()
			defer func() { cancel(); <-done }()
			ns := srv.CreateNamespace(t, "vk-e2e-").Name
			suite := vke2e.NewEndToEndTestSuite(vke2e.EndToEndTestSuiteConfig{
				Kubeconfig: kubeconfig, Namespace: ns, NodeName: nodeName, WatchTimeout: 30 * time.Second,
				ShouldSkipTest: func(name string) bool {
					if why, ok := skipped[name]; ok {
						t.Logf("skipping %s: %s", name, why)
						return true
					}
					return false
				},
			})
			suite.Run(t)
		})
	}
}

// hostIP is a non-loopback IPv4 address of this machine: the API server's nodes/proxy
// refuses loopback addresses (k8s.io/apimachinery/pkg/util/proxy), so the kubelet API
// cannot listen on 127.0.0.1.
func hostIP(t *testing.T) string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	t.Skip("no non-loopback IPv4 address: the API server's nodes/proxy refuses loopback, so the kubelet API cannot be reached")
	return ""
}

func freePort(t *testing.T) int32 {
	l, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return int32(l.Addr().(*net.TCPAddr).Port)
}

func selfSigned(t *testing.T, ip string) tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "vk-e2e"},
		IPAddresses: []net.IP{net.ParseIP(ip)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
