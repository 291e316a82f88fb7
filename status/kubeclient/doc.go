// Package kubeclient implements status.Client over client-go, for node agents that talk to
// a real API server.
//
// It lives in its own module so that the podstatus root module stays free of client-go;
// import it only where you already depend on client-go:
//
//	cs := kubernetes.NewForConfigOrDie(cfg)
//	m := status.NewManager(kubeclient.New(cs.CoreV1(), "my-node-agent"), status.Options{})
//
// An agent that sends many PATCHes and DELETEs should build it with NewForConfigAndClient
// instead, from the rest.Config and http.Client of its clientset: those two requests then
// go over the http.Client as plain requests, without client-go's per-request work. The
// requests and the errors are the same, but that the DELETE asks for the
// deleted pod's metadata only (PartialObjectMetadata): its answer is dropped, and the API
// server then neither encodes nor sends the rest of the pod.
package kubeclient
