// Package kubeclient implements status.Client over client-go, for node agents that talk to
// a real API server.
//
// It lives in its own module so that the podstatus root module stays free of client-go;
// import it only where you already depend on client-go:
//
//	cs := kubernetes.NewForConfigOrDie(cfg)
//	m := status.NewManager(kubeclient.New(cs.CoreV1(), "my-node-agent"), status.Options{})
package kubeclient
