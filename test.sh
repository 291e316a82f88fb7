#!/usr/bin/env bash
# test.sh — every check of the project, the same on a laptop and in CI:
#   1. gofmt on every Go file;
#   2. on every module (the root and each nested go.mod): go mod tidy -diff, go vet and
#      staticcheck (installed at a pinned version into .tools/bin on first use), but for
#      the test-harness modules (internal/upstream, internal/upstream/*, and the example
#      modules built on them: examples/cluster, examples/operator), which get go vet only;
#   3. the root module's tests under the race detector (fuzz targets run their seed corpus);
#   4. the nested modules' tests with -race, but for those that import k8s.io/kubernetes:
#      the test-harness modules (the differential, patch-equivalence and
#      end-to-end tests against the real kubelet code and a real kube-apiserver + etcd
#      started in-process; under -race the kube-apiserver build alone takes over 15
#      minutes on 2 cores) and kubeletstatus run without it.
# Every step runs even when an earlier one fails; the failed steps are listed at the end,
# then the last line, "tests: N passed, N failed, N skipped" (CI parses it), and the exit
# code is non-zero if any step failed. A package that does not build, or a test binary
# that times out, counts as one failed test, since it has no "--- FAIL" line of its own.
# The first run builds k8s.io/kubernetes code and takes several minutes; later runs reuse
# Go's build cache. Set PODSTATUS_SKIP_UPSTREAM=1 to leave out internal/upstream.
set -uo pipefail
cd "$(dirname "$0")"
root=$PWD

# staticcheck 2026.2.2 (module v0.8.2), the newest release: the v0.8 series is the first for
# Go 1.26 (its go.mod says go 1.26.0; v0.7.0's says 1.25.0).
STATICCHECK_VERSION=v0.8.2
tools=$root/.tools/bin

logdir=$(mktemp -d)
trap 'rm -rf "$logdir"' EXIT
failed_steps=()
step_times=()

step() { printf '\n==== %s\n' "$*"; }
# check NAME CMD...: runs one step and records its failure and its wall time without
# stopping (the times are listed at the end: on a fresh machine most of the run is
# compiling, and this is where it shows).
check() {
	local name=$1 start
	shift
	step "$name"
	start=$(date +%s)
	if ! "$@"; then
		failed_steps+=("$name")
		echo "FAILED: $name"
	fi
	step_times+=("$(printf '%5ds  %s' $(($(date +%s) - start)) "$name")")
}

gofmt_all() {
	local unformatted
	unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
	if [ -n "$unformatted" ]; then
		echo "not gofmt-formatted:"
		echo "$unformatted"
		return 1
	fi
	echo "all files formatted"
}

# tidy M: go.mod and go.sum of module M are what go mod tidy would write.
tidy() {
	local m=$1
	if ! (cd "$m" && go mod tidy -diff); then
		echo "module $m: go.mod/go.sum are not tidy; run: (cd $m && go mod tidy)"
		return 1
	fi
}

install_staticcheck() {
	if [ -x "$tools/staticcheck" ] && "$tools/staticcheck" -version | grep -q "(${STATICCHECK_VERSION#v})"; then
		"$tools/staticcheck" -version
		return 0
	fi
	GOBIN=$tools go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION" && "$tools/staticcheck" -version
}

# lint M: staticcheck on module M, with its time (internal/upstream takes minutes).
lint() {
	local m=$1 start rc
	[ -x "$tools/staticcheck" ] || { echo "staticcheck is not installed"; return 1; }
	start=$(date +%s)
	(cd "$m" && "$tools/staticcheck" ./...)
	rc=$?
	echo "staticcheck ($m): $(($(date +%s) - start))s"
	return $rc
}

# gotest M FLAGS...: go test -v on module M, its output kept for the summary.
gotest() {
	local m=$1
	shift
	(cd "$m" && go test -count=1 -v "$@" ./...) 2>&1 | tee "$logdir/test-$(echo "$m" | tr / _).log"
}

# harness M: M is a test-harness module that compiles kube-apiserver (and more) from
# k8s.io/kubernetes: internal/upstream, internal/upstream/*, and every module built on
# them (its go.mod requires one: examples/cluster, the one-process cluster command;
# examples/operator, whose test runs on the in-process kube-apiserver). They get go vet,
# no staticcheck, and tests without -race (see below).
harness() {
	[ "$1" = internal/upstream ] || [[ "$1" == internal/upstream/* ]] ||
		grep -Eq '^[[:space:]]*(require[[:space:]]+)?github\.com/podstatus/podstatus/internal/upstream(/[^[:space:]]*)?[[:space:]]+v' "$1/go.mod"
}

check "gofmt" gofmt_all

# Every module in the repository: the root and each nested go.mod.
modules=(.)
for f in $(git ls-files '*/go.mod' 2>/dev/null || find . -mindepth 2 -name go.mod); do
	d=$(dirname "$f")
	d=${d#./}
	harness "$d" && [ -n "${PODSTATUS_SKIP_UPSTREAM:-}" ] && continue
	modules+=("$d")
done

for m in "${modules[@]}"; do
	check "go mod tidy -diff ($m)" tidy "$m"
done
for m in "${modules[@]}"; do
	check "go vet ($m)" bash -c "cd '$m' && go vet ./..."
done
check "install staticcheck $STATICCHECK_VERSION" install_staticcheck
for m in "${modules[@]}"; do
	# The test-harness modules (internal/upstream and internal/upstream/*, never published)
	# get go vet only: staticcheck analyses every dependency's source, and theirs are the
	# kube-apiserver's and the kubelet's; with an empty cache that took 829 s user + 153 s
	# sys for internal/upstream alone, a quarter of a fresh machine's CI run on 2 cores.
	if harness "$m"; then
		continue
	fi
	check "staticcheck ($m)" lint "$m"
done

for m in "${modules[@]}"; do
	if harness "$m"; then
		# -p 1: one package at a time. The statistical end-to-end tests (faults) bound how
		# soon statuses converge after an outage; on two cores they must not share the CPU
		# with the patch-equivalence run of another package.
		# internal/upstream/* modules (their own go.mod, for a dependency that must stay out
		# of internal/upstream's) start the same kube-apiserver: no -race either.
		check "go test ($m: differential, equivalence, end-to-end; no -race)" gotest "$m" -p 1 -timeout 40m
	elif [ "$m" = kubeletstatus ]; then
		# Imports k8s.io/kubernetes' kubelet, as internal/upstream does: without -race it
		# reuses internal/upstream's build of those packages (seconds), where a -race build
		# takes about 5 minutes of CPU more. The Manager it wraps runs under -race in the
		# root module.
		check "go test ($m; no -race)" gotest "$m" -timeout 20m
	else
		check "go test -race ($m)" gotest "$m" -race -timeout 20m
	fi
done

# failures LOG: the output of every failed test that has no failed subtest, its last 60
# lines, so that the end of a long run (all a CI record may keep) says why it failed. go
# test -v tags a test's output with "=== RUN/CONT/NAME <test>" whenever it switches tests.
failures() {
	awk '
		/^=== (RUN|CONT|NAME|PAUSE) / { cur = $3; next }
		/^[[:space:]]*--- FAIL: / { name = $3; failed[name] = 1; order[++n] = name; next }
		/^[[:space:]]*--- (PASS|SKIP): / || /^(PASS|FAIL|ok)([[:space:]]|$)/ { next }
		cur != "" { out[cur, ++lines[cur]] = $0 }
		END {
			for (i = 1; i <= n; i++) {
				t = order[i]; leaf = 1
				for (u in failed) if (index(u, t "/") == 1) leaf = 0
				if (!leaf) continue
				printf "--- FAIL: %s\n", t
				from = lines[t] > 60 ? lines[t] - 59 : 1
				if (from > 1) printf "    (%d earlier lines left out)\n", from - 1
				for (j = from; j <= lines[t]; j++) print out[t, j]
			}
		}' "$1"
}

count() { cat "$logdir"/test-*.log 2>/dev/null | grep -cE "$1" || true; }
passed=$(count '^\s*--- PASS')
failed=$(($(count '^\s*--- FAIL') + $(count '^FAIL\s+\S+\s+\[(build|setup) failed\]') + $(count '^panic: test timed out')))
skipped=$(count '^\s*--- SKIP')
echo
echo "wall time per step:"
printf '  %s\n' "${step_times[@]}"
if [ ${#failed_steps[@]} -gt 0 ]; then
	for f in "$logdir"/test-*.log; do
		grep -qE '^\s*--- FAIL' "$f" 2>/dev/null || continue
		echo
		echo "failed tests in ${f#"$logdir"/test-}:"
		failures "$f"
	done
	echo
	echo "failed steps:"
	printf '  %s\n' "${failed_steps[@]}"
else
	echo "every step passed"
fi
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ ${#failed_steps[@]} -eq 0 ]
