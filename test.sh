#!/usr/bin/env bash
# test.sh — every check of the project, the same on a laptop and in CI:
#   1. gofmt and go vet on every module;
#   2. the root module's tests under the race detector (fuzz targets run their seed corpus);
#   3. the nested modules: status/kubeclient (with -race) and internal/upstream, the
#      differential, patch-equivalence and end-to-end tests against the real kubelet code
#      and a real kube-apiserver + etcd started in-process (without -race: under -race the
#      kube-apiserver build alone takes over 15 minutes on a 2-core machine).
# The first run builds k8s.io/kubernetes code and takes several minutes; later runs reuse
# Go's build cache. Set PODSTATUS_SKIP_UPSTREAM=1 to leave out internal/upstream.
set -euo pipefail
cd "$(dirname "$0")"

log=$(mktemp)
trap 'rm -f "$log"' EXIT

step() { printf '\n==== %s\n' "$*"; }

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "not gofmt-formatted:"; echo "$unformatted"; exit 1
fi
echo "all files formatted"

# Every module in the repository: the root and each nested go.mod.
modules=(.)
for f in $(git ls-files '*/go.mod' 2>/dev/null || find . -mindepth 2 -name go.mod); do
	d=$(dirname "$f"); d=${d#./}
	[ "$d" = internal/upstream ] && [ -n "${PODSTATUS_SKIP_UPSTREAM:-}" ] && continue
	modules+=("$d")
done

for m in "${modules[@]}"; do
	step "go vet ($m)"
	(cd "$m" && go vet ./...)
done

for m in "${modules[@]}"; do
	if [ "$m" = internal/upstream ]; then
		step "go test ($m: differential, equivalence, end-to-end; no -race)"
		(cd "$m" && go test -count=1 -timeout 40m -v ./...) 2>&1 | tee -a "$log"
	else
		step "go test -race ($m)"
		(cd "$m" && go test -race -count=1 -timeout 20m -v ./...) 2>&1 | tee -a "$log"
	fi
done

passed=$(grep -cE '^\s*--- PASS' "$log" || true)
failed=$(grep -cE '^\s*--- FAIL' "$log" || true)
skipped=$(grep -cE '^\s*--- SKIP' "$log" || true)
echo
echo "tests: $passed passed, $failed failed, $skipped skipped"
