// Package kubeclient implements status.Client over client-go, for node agents that talk to
// a real API server.
//
// It lives in its own module so that the podstatus root module stays free of client-go;
// import it only where you already depend on client-go:
//
//	cs := kubernetes.NewForConfigOrDie(cfg)
//	m := status.NewManager(kubeclient.New(cs.CoreV1(), "my-node-agent"), status.Options{})
//
// With a clientset's CoreV1(), the status PATCH and the DELETE are built on its REST
// client as client-go's typed client builds them, with two changes that matter to a node
// agent: nothing is retried inside the call (client-go's Request otherwise resends a 429
// or 5xx with Retry-After up to ten times, holding the Manager's worker; the error comes
// back with its delay, which the Manager's retry honours), and the DELETE asks for the
// deleted pod's metadata only and discards it unread.
package kubeclient
