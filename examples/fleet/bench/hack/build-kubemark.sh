#!/usr/bin/env bash
# build-kubemark.sh OUT — builds a stock kubemark v1.37.0 (the hollow node: the real
# kubelet code with a fake container runtime) into OUT, from the Go module proxy.
#
# k8s.io/kubernetes requires its staging modules (k8s.io/api, client-go, kubelet, ...) at
# v0.0.0 and replaces them with ./staging/src/...; a dependency's replace directives do not
# apply to the main module, so the temporary module made here maps each staging module to
# its published tag v0.37.0 — the same replace block as internal/upstream/go.mod, read
# from there so that the two cannot drift. Then it runs
#
#   go build -ldflags "-X ...version.gitVersion=v1.37.0 ..." -o OUT k8s.io/kubernetes/cmd/kubemark
#
# with the version stamped as Kubernetes' own build does (kube::version::ldflags in
# hack/lib/version.sh), so that the hollow nodes report kubelet v1.37.0 rather than
# v0.0.0-master. It takes about 15 minutes of CPU on a cold build cache, 3 on a cache that
# already holds internal/upstream's build (run it under nice on a shared machine).
# fleet-bench runs the result with --agent kubemark --kubemark-bin OUT.
set -euo pipefail
[ $# = 1 ] || { echo "usage: $0 OUT" >&2; exit 2; }
out=$1
case $out in /*) ;; *) out=$PWD/$out ;; esac
here=$(cd "$(dirname "$0")" && pwd)
upstream=$(cd "$here/../../../../internal/upstream" && pwd)

export GOWORK=off GOFLAGS=-mod=mod
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
go mod init podstatus.local/kubemark-build >/dev/null 2>&1
edits=()
while read -r from to ver; do
	edits+=("-replace=$from=$to@$ver")
done < <(sed -n 's/^\t\(k8s\.io\/[a-z-]*\) => \(k8s\.io\/[a-z-]*\) \(v[0-9.]*\)$/\1 \2 \3/p' "$upstream/go.mod")
[ ${#edits[@]} -ge 30 ] || { echo "$0: found ${#edits[@]} staging replaces in $upstream/go.mod, want 33" >&2; exit 1; }
go mod edit -require=k8s.io/kubernetes@v1.37.0 "${edits[@]}"
ldflags=()
for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
	ldflags+=("-X '$pkg.gitVersion=v1.37.0'" "-X '$pkg.gitMajor=1'" "-X '$pkg.gitMinor=37'")
done
time go build -ldflags "${ldflags[*]}" -o "$out" k8s.io/kubernetes/cmd/kubemark
"$out" --version 2>/dev/null || true
echo "built $out"
