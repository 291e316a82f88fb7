package apiserver

import (
	"errors"
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// WriteKubeconfig writes cfg — a Server's Config: host, CA data, the TLS server name of
// the loopback certificate and the bearer token of the loopback super-user — as a
// kubeconfig file readable only by its owner, so that other processes (a node agent,
// kubectl, a load generator) can reach the server. The token is the super-user's: it
// reaches every resource and /metrics.
func WriteKubeconfig(path string, cfg *rest.Config) error {
	if cfg.BearerToken == "" {
		return errors.New("apiserver: write kubeconfig: the rest.Config has no bearer token")
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["podstatus"] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthorityData: cfg.TLSClientConfig.CAData,
		TLSServerName:            cfg.TLSClientConfig.ServerName,
		InsecureSkipTLSVerify:    cfg.TLSClientConfig.Insecure,
	}
	kc.AuthInfos["podstatus"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["podstatus"] = &clientcmdapi.Context{Cluster: "podstatus", AuthInfo: "podstatus"}
	kc.CurrentContext = "podstatus"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("apiserver: write kubeconfig %s: %w", path, err)
	}
	return nil
}
