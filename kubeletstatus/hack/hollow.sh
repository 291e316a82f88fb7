#!/usr/bin/env bash
# hollow.sh KUBEMARK KUBECONFIG NAME — one pod's life on a hollow kubelet, with the
# requests the kubelet made for it.
#
# Starts KUBEMARK (a kubemark binary, stock or built by fork.sh) as a hollow kubelet
# named NAME against the API server of KUBECONFIG (internal/upstream's cmd/apiserver
# serves one in-process), then, in namespace NAME: creates a pod bound to NAME with a
# readiness gate, waits for ContainersReady, sets the gate True as a second client
# would, waits for Ready, saves the pod's status, deletes the pod and waits until the
# kubelet removed it. It prints the time from the gate flip to Ready, and the API
# server's request counters (apiserver_request_total) for single-pod GETs, pods/status
# PATCHes and pod DELETEs during the pod's life, minus this script's own (one status
# PATCH for the gate, one DELETE). The saved status is NAME.status.json in the current
# directory. Run it for the stock and the forked binary with different NAMEs, one at a
# time (the counters are the server's, not the kubelet's), and diff the two statuses.
# HOLLOW_ARGS adds flags to the hollow kubelet (--v=3 logs every status PATCH).
# HOLLOW_SIDECAR=1 gives the pod a sidecar (an init container with restartPolicy Always,
# KEP-753) before its container: the kubelet starts it first and the pod is Initialized
# once it runs. (A plain init container is not tried: the hollow node's fake runtime never
# lets one exit, so the pod would stay in Init on either kubelet.)
set -euo pipefail
[ $# = 3 ] || { echo "usage: $0 KUBEMARK KUBECONFIG NAME" >&2; exit 2; }
bin=$1 kc=$2 name=$3
k() { kubectl --kubeconfig "$kc" "$@"; }
counts() { # GET pods, PATCH pods/status, DELETE pods
	k get --raw /metrics | awk '
		/^apiserver_request_total\{/ && /resource="pods"/ {
			v=$NF
			if ($0 ~ /verb="GET"/ && $0 ~ /subresource=""/ && $0 ~ /scope="resource"/) g+=v
			if ($0 ~ /verb="PATCH"/ && $0 ~ /subresource="status"/) p+=v
			if ($0 ~ /verb="DELETE"/ && $0 ~ /subresource=""/) d+=v
		}
		END { printf "%d %d %d\n", g, p, d }'
}
wait_for() { # wait_for WHAT SECONDS CMD...: polls CMD every 0.2 s
	local what=$1 limit=$2 start=$SECONDS
	shift 2
	until "$@" >/dev/null 2>&1; do
		[ $((SECONDS - start)) -lt "$limit" ] || { echo "$name: $what: not within ${limit}s" >&2; return 1; }
		sleep 0.2
	done
}
# Reads are LISTs (kubectl get pods), so that GET counts only the kubelet's.
cond() { [ "$(k -n "$name" get pods -o jsonpath="{.items[0].status.conditions[?(@.type==\"$1\")].status}")" = "$2" ]; }

log=$PWD/$name.kubelet.log
"$bin" --morph=kubelet --name="$name" --kubeconfig="$kc" --use-host-image-service=false \
	--kubelet-port=0 --kubelet-read-only-port=0 ${HOLLOW_ARGS:-} >"$log" 2>&1 &
kpid=$!
trap 'kill $kpid 2>/dev/null || true' EXIT
wait_for "node Ready" 120 sh -c "kubectl --kubeconfig '$kc' get node '$name' -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True"
k create namespace "$name" >/dev/null
read -r g0 p0 d0 < <(counts)
k -n "$name" create -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  nodeName: $name
  readinessGates: [{conditionType: example.com/lb}]
$(if [ -n "${HOLLOW_SIDECAR:-}" ]; then echo "  initContainers: [{name: sidecar, image: registry.k8s.io/pause:3.10, restartPolicy: Always}]"; fi)
  containers: [{name: app, image: registry.k8s.io/pause:3.10}]
EOF
if [ -n "${HOLLOW_SIDECAR:-}" ]; then
	# kubemark's fake prober never reports the sidecar ready (the real prober would, once it
	# started), so ContainersReady stays False on either kubelet: the status compared is the
	# one after Initialized, settled.
	wait_for "Initialized" 120 cond Initialized True
	sleep 3
	flip= ready=
else
	wait_for "ContainersReady" 120 cond ContainersReady True
	flip=$(date +%s.%N)
	k -n "$name" patch pod web --subresource=status --type=strategic \
		-p '{"status":{"conditions":[{"type":"example.com/lb","status":"True"}]}}' >/dev/null
	wait_for "Ready after the gate" 120 cond Ready True
	ready=$(date +%s.%N)
fi
k -n "$name" get pods -o json | jq '.items[0].status' >"$name.status.json"
k -n "$name" delete pod web --wait=false >/dev/null
wait_for "pod removed" 120 sh -c "kubectl --kubeconfig '$kc' -n '$name' get pods -o name | grep -q . && exit 1 || exit 0"
read -r g1 p1 d1 < <(counts)
own=1 # this script's gate PATCH
[ -n "${HOLLOW_SIDECAR:-}" ] && own=0
[ -n "$flip" ] && echo "$name: gate flip to Ready $(echo "$ready - $flip" | bc) s"
echo "$name: requests for the pod's life: GET $((g1 - g0)), PATCH status $((p1 - p0 - own)), DELETE $((d1 - d0 - 1)) (this script's own taken out)"
