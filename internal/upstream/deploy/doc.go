// Package deploy runs the simulated kubelet (simkubelet, the fleet program's engine) with the RBAC of its
// manifests (examples/fleet/deploy) on a real kube-apiserver v1.37.0 with RBAC
// authorization, authenticated by its ServiceAccount's token: the role is sufficient (the
// agent serves its pods with no request forbidden) and minimal (without any one of its
// verbs, the request that needs it is answered 403 Forbidden); every manifest, and the
// pod the StatefulSet makes, passes the server's dry-run; and two replicas run with the
// StatefulSet's own arguments share a cluster without writing each other's nodes or pods.
package deploy
