#!/usr/bin/env bash
# fork.sh DIR [STEP...] — a kubelet fork on podstatus, made from k8s.io/kubernetes v1.37.0.
#
# Copies k8s.io/kubernetes v1.37.0 from the Go module cache into DIR (which it replaces),
# points its go.mod at the published staging modules (v0.37.0: the module-cache copy has
# no staging/ tree, and the copy's go.work is ignored) and at this repository, and makes
# the swap in pkg/kubelet/kubelet.go: one import after the package clause and one changed
# line,
#
#   +import kubeletstatus "github.com/podstatus/podstatus/kubeletstatus"
#   -	klet.statusManager = status.NewManager(klet.kubeClient, klet.podManager, klet, kubeDeps.PodStartupLatencyTracker)
#   +	klet.statusManager = kubeletstatus.NewManager(klet.kubeClient, klet.podManager, klet, kubeDeps.PodStartupLatencyTracker)
#
# then runs the STEPs asked for, each timed (default: all three):
#   kubemark  go build ./cmd/kubemark (the hollow node: the real kubelet, fake runtime)
#   prober    go test ./pkg/kubelet/prober/...
#   kubelet   go test ./pkg/kubelet (the package itself)
# The kubelet's tests build their status manager themselves (newTestKubeletWithImageList
# in pkg/kubelet/kubelet_test.go, the prober's test helpers), not through NewMainKubelet,
# so for the test steps the same swap is made there too (the call, the import, and a
# blank use of the kubelet's status.NewManager so that its import stays used).
# Test output goes to DIR.logs/STEP.log; the summary counts "--- PASS", "--- FAIL" and
# "--- SKIP" lines there. Builds run under nice, on the shared build cache.
set -euo pipefail

[ $# -ge 1 ] || { echo "usage: $0 DIR [kubemark|prober|kubelet]..." >&2; exit 2; }
dst=$1
shift
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(kubemark prober kubelet)
for s in "${steps[@]}"; do
	case $s in kubemark | prober | kubelet) ;; *) echo "$0: unknown step $s (want kubemark, prober or kubelet)" >&2; exit 2 ;; esac
done

mod=$(cd "$(dirname "$0")/.." && pwd) # the kubeletstatus module
repo=$(cd "$mod/.." && pwd)            # the podstatus repository
export GOWORK=off GOFLAGS=-mod=mod

src=$(go env GOMODCACHE)/k8s.io/kubernetes@v1.37.0
[ -d "$src" ] || go mod download k8s.io/kubernetes@v1.37.0
case $dst in /*) ;; *) dst=$PWD/$dst ;; esac
rm -rf "$dst"
cp -r "$src" "$dst"
chmod -R u+w "$dst"
logs=$dst.logs
mkdir -p "$logs"
cd "$dst"

# The staging modules at their published tags: the replace block of kubeletstatus/go.mod.
edits=()
while read -r from _ to ver; do
	edits+=("-replace=$from=$to@$ver")
done < <(sed -n 's/^\t\(k8s\.io\/[a-z-]*\) => \(k8s\.io\/[a-z-]*\) \(v[0-9.]*\)$/\1 => \2 \3/p' "$mod/go.mod")
[ ${#edits[@]} -ge 30 ] || { echo "$0: found ${#edits[@]} staging replaces in $mod/go.mod, want 33" >&2; exit 1; }
P=github.com/podstatus/podstatus
go mod edit "${edits[@]}" \
	-require=$P@v0.0.0 -replace=$P=$repo \
	-require=$P/status/kubeclient@v0.0.0 -replace=$P/status/kubeclient=$repo/status/kubeclient \
	-require=$P/kubeletstatus@v0.0.0 -replace=$P/kubeletstatus=$mod

# The swap. Both edits must apply exactly once.
f=pkg/kubelet/kubelet.go
old='klet.statusManager = status.NewManager(klet.kubeClient, klet.podManager, klet, kubeDeps.PodStartupLatencyTracker)'
new='klet.statusManager = kubeletstatus.NewManager(klet.kubeClient, klet.podManager, klet, kubeDeps.PodStartupLatencyTracker)'
[ "$(grep -cF "$old" $f)" = 1 ] || { echo "$0: $f: the line to swap is not there once" >&2; exit 1; }
sed -i "s|$old|$new|" $f
imp='import kubeletstatus "github.com/podstatus/podstatus/kubeletstatus"'
sed -i "s|^package kubelet\$|&\n\n$imp|" $f
[ "$(grep -cxF "$imp" $f)" = 1 ] || { echo "$0: $f: import not added" >&2; exit 1; }
gofmt -l $f | grep -q . && { echo "$0: $f is not gofmt-clean after the swap" >&2; exit 1; }
echo "fork ready in $dst; the change:"
diff -u "$src/$f" $f || true

# swap_tests: the kubelet's tests build their manager with kubeletstatus.NewManager.
swap_tests() {
	local t
	for t in pkg/kubelet/kubelet_test.go pkg/kubelet/prober/common_test.go pkg/kubelet/prober/worker_test.go pkg/kubelet/prober/scale_test.go; do
		[ "$(grep -c 'status\.NewManager(' $t)" = 1 ] || { echo "$0: $t: want one status.NewManager call" >&2; exit 1; }
		sed -i 's|\bstatus\.NewManager(|kubeletstatus.NewManager(|' $t
		sed -i "s|^package \([a-z]*\)\$|&\n\n$imp|" $t
		# Keep the status package's import used where NewManager was all the file used of it.
		printf '\nvar _ = status.NewManager // the kubelet'"'"'s own, swapped out above\n' >>$t
		gofmt -l $t | grep -q . && { echo "$0: $t is not gofmt-clean after the swap" >&2; exit 1; }
		echo "swapped the status manager of $t"
	done
}
case " ${steps[*]} " in *" prober "* | *" kubelet "*) swap_tests ;; esac

timed() { # timed NAME CMD...: runs CMD, prints its wall time
	local name=$1 start=$SECONDS rc=0
	shift
	"$@" || rc=$?
	echo "$name: exit $rc, $((SECONDS - start)) s"
	return 0
}
count() { # count LOG: pass/fail/skip lines of a go test -v log, and the failed tests
	echo "  PASS $(grep -c -- '--- PASS' "$1" || true), FAIL $(grep -c -- '--- FAIL' "$1" || true), SKIP $(grep -c -- '--- SKIP' "$1" || true)"
	grep -- '--- FAIL' "$1" | sed 's/^/  /' || true
}
for s in "${steps[@]}"; do
	case $s in
	kubemark)
		timed "go build ./cmd/kubemark" nice go build -o "$logs/kubemark" ./cmd/kubemark
		;;
	prober)
		timed "go test ./pkg/kubelet/prober/..." sh -c "nice go test -v ./pkg/kubelet/prober/... >'$logs/prober.log' 2>&1"
		count "$logs/prober.log"
		;;
	kubelet)
		timed "go test ./pkg/kubelet" sh -c "nice go test -v -timeout 30m ./pkg/kubelet >'$logs/kubelet.log' 2>&1"
		count "$logs/kubelet.log"
		;;
	esac
done
