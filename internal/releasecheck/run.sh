#!/usr/bin/env bash
# run.sh [VERSION] — proves that every module release.sh tags installs as tagged, the way a
# user gets it from the module proxy, without publishing anything.
#
# It clones the repository's current commit into a temporary directory, runs
# `release.sh VERSION --apply` there (v0.1.0 by default), and serves each tag from a
# module proxy on disk (GOPROXY=file://..., zips made by internal/releasetool from git,
# as the public proxy makes them), ahead of the shared module cache's download directory
# and the configured GOPROXY for third-party modules. With a private module cache,
# GONOSUMDB=github.com/podstatus (the unpublished versions are in no checksum database)
# and GOWORK=off it then, for every tagged module:
#   - `go build ./...` at the release commit with -mod=readonly: its go.mod and go.sum,
#     which release.sh wrote, are complete and agree with the zips the proxy serves;
#   - `go install PKG@VERSION` for each of its programs (package main), from outside any
#     module, which refuses any module whose go.mod has a replace directive;
#   - in a fresh `go mod init` module: `go get MODULE@VERSION` and `go build` of a file
#     importing each of its library packages (not internal/, not main). A module that
#     keeps replace directives (kubeletstatus: k8s.io/kubernetes's staging modules) is a
#     library only: its replace block is copied into the fresh module, as its users must,
#     and its programs, if any, are built there instead of installed.
# Prints one line per check and exits non-zero if any failed. It downloads little (the
# shared cache serves third-party modules) but builds every module: several minutes on
# 2 cores with a warm build cache, so it is a step of a release, not of ./test.sh.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(git -C "$here" rev-parse --show-toplevel)
version=${1:-v0.1.0}
[ $# -le 1 ] || { echo "usage: $0 [VERSION]" >&2; exit 2; }
[[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "VERSION: not vMAJOR.MINOR.PATCH: $version" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
git clone -q --no-hardlinks --branch "$(git -C "$repo" rev-parse --abbrev-ref HEAD)" "$repo" "$tmp/repo" || exit 1
cd "$tmp/repo"
root=$(GOWORK=off go list -m -f '{{.Path}}')
export GIT_AUTHOR_NAME=releasecheck GIT_AUTHOR_EMAIL=releasecheck@invalid
export GIT_COMMITTER_NAME=releasecheck GIT_COMMITTER_EMAIL=releasecheck@invalid
echo "== release.sh $version --apply (on a clone of $(git rev-parse --short HEAD))"
./release.sh "$version" --apply || exit 1
release=$(git rev-parse "$version^{commit}")

go build -C internal/releasetool -o "$tmp/releasetool" . || exit 1
mods=()
for t in $(git tag --points-at "$release"); do
	d=${t%"$version"}
	d=${d%/}
	[ -n "$d" ] || d=.
	mods+=("$d")
	sub=$d
	[ "$sub" = . ] && sub=
	p=$root
	[ -z "$sub" ] || p=$root/$sub
	"$tmp/releasetool" -git . -rev "$t" -subdir "$sub" -module "$p" -version "$version" -proxy "$tmp/proxy" || exit 1
done
git checkout -q "$release"

baseflags="$(go env GOFLAGS) -modcacherw"
export GOWORK=off GOMODCACHE=$tmp/modcache GOBIN=$tmp/bin GONOSUMDB=github.com/podstatus
export GOFLAGS="$baseflags -mod=mod"
export GOPROXY="file://$tmp/proxy,file://$(go env GOMODCACHE)/cache/download,$(go env GOPROXY)"
failed=0 passed=0
# check WHAT DIR CMD...: runs CMD in DIR; one line for the result, the output on failure.
check() {
	local what=$1 dir=$2 out
	shift 2
	if out=$(cd "$dir" && "$@" 2>&1); then
		echo "ok    $what"
		passed=$((passed + 1))
	else
		echo "FAIL  $what"
		echo "$out" | sed 's/^/      /' | tail -20
		failed=$((failed + 1))
	fi
}
n=0
for d in "${mods[@]}"; do
	m=$root
	[ "$d" = . ] || m=$root/$d
	replaces=$(cd "$d" && go mod edit -json | awk '/"Replace": \[/ { r = 1 } r' | grep -c '"Old"')
	# The module's packages at the release commit, resolved through the proxy alone
	# (its go.mod names no local directory).
	pkgs=$(cd "$d" && go list -f '{{.Name}} {{.ImportPath}}' ./... 2>"$tmp/list.err") ||
		{ echo "FAIL  go list $m"; sed 's/^/      /' "$tmp/list.err"; failed=$((failed + 1)); continue; }
	progs=() libs=()
	while read -r name p; do
		case "/$p/" in */internal/* | */testdata/*) continue ;; esac
		if [ "$name" = main ]; then progs+=("$p"); else libs+=("$p"); fi
	done <<<"$pkgs"
	# The release commit's go.mod and go.sum are complete and their hashes are those
	# the proxy serves: the module builds with -mod=readonly, which adds nothing.
	check "go build ./... of $m at the release commit, -mod=readonly" "$d" env GOFLAGS="$baseflags -mod=readonly" go build ./...
	if [ "$replaces" = 0 ]; then
		for p in "${progs[@]}"; do
			check "go install $p@$version" "$tmp" go install "$p@$version"
		done
	fi
	n=$((n + 1))
	use=$tmp/use$n
	mkdir -p "$use"
	(cd "$use" && go mod init -q example.com/use$n 2>/dev/null || go mod init example.com/use$n) >/dev/null 2>&1
	if [ "$replaces" != 0 ]; then
		# The user's go.mod needs the module's replace block (Go ignores a dependency's).
		(cd "$d" && go mod edit -json) | awk '/"Replace": \[/ { r = 1 } r' |
			awk '/"Old": \{/ { o = 1 } /"New": \{/ { o = 0; nw = 1 } /"Path"/ { gsub(/.*"Path": "|".*/, ""); if (o) op = $0; else np = $0 }
				/"Version"/ { gsub(/.*"Version": "|".*/, ""); if (nw) nv = $0 }
				/^\t\t\},?$/ && nw { print op "=" np (nv == "" ? "" : "@" nv); nw = 0; nv = "" }' |
			while read -r r; do (cd "$use" && go mod edit -replace="$r"); done
	fi
	{
		echo "package main"
		echo
		echo "import ("
		for p in "${libs[@]}"; do echo "	_ \"$p\""; done
		echo ")"
		echo
		echo "func main() {}"
	} >"$use/main.go"
	what="go get $m@$version; go build of a file importing its ${#libs[@]} packages"
	[ "$replaces" = 0 ] || what="$what, with its $replaces replace directives"
	check "$what" "$use" sh -c "go get '$m@$version' && go mod tidy && go build -o /dev/null . $( [ "$replaces" = 0 ] || printf '&& go build -o /dev/null %s ' "${progs[@]}")"
done
echo "releasecheck $version: $passed passed, $failed failed"
[ "$failed" = 0 ]
