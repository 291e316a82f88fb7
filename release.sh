#!/usr/bin/env bash
# release.sh — prepare a release of every published module at one version, in one commit.
#
#   ./release.sh v0.1.0            dry run: show the go.mod changes and the tags, change nothing
#   ./release.sh v0.1.0 --apply    edit the go.mod files, commit, and create the tags locally
#
# Go finds a nested module's version by a tag prefixed with its directory
# (status/kubeclient/v0.1.0 for github.com/podstatus/podstatus/status/kubeclient), so one
# release is one tag per published module, all on the same commit:
#   v0.1.0, status/kubeclient/v0.1.0, examples/simnode/kube/v0.1.0.
# internal/upstream is a test harness nobody can import (internal/), so it is not tagged.
#
# Before tagging, each nested go.mod's requirements on the repository's own modules are
# raised from the placeholder v0.0.0-00010101000000-000000000000 (or the previous release)
# to the new version: the placeholder exists nowhere, and a user's `go get` resolves these
# requirements from the module proxy. The replace directives that point at the local
# directories are kept: Go ignores replace directives in every go.mod but the main
# module's, so they change nothing for users, while in the repository they make each
# nested module build and test against the root at the same commit.
#
# The script never pushes; it prints the push command. Run ./test.sh before releasing.
set -euo pipefail
cd "$(dirname "$0")"

usage() { echo "usage: $0 vMAJOR.MINOR.PATCH [--apply]" >&2; exit 2; }
[ $# -ge 1 ] || usage
version=$1
apply=false
case "${2:-}" in
--apply) apply=true ;;
"") ;;
*) usage ;;
esac
[[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || { echo "not a semantic version: $version" >&2; exit 2; }

root=$(go list -m -f '{{.Path}}')
nested=()
for f in $(git ls-files '*/go.mod'); do
	nested+=("$(dirname "$f")")
done

# The modules users can depend on, and their tags.
published=(.)
tags=("$version")
for d in "${nested[@]}"; do
	case "/$d/" in */internal/*) continue ;; esac
	published+=("$d")
	tags+=("$d/$version")
done
modpath() { if [ "$1" = . ]; then echo "$root"; else echo "$root/$1"; fi; }

if $apply; then
	[ -z "$(git status --porcelain)" ] || { echo "the work tree is not clean; commit or stash first" >&2; exit 1; }
fi
for t in "${tags[@]}"; do
	if git rev-parse -q --verify "refs/tags/$t" >/dev/null; then
		echo "tag $t already exists" >&2
		exit 1
	fi
done

# bump FILE: require every published module FILE already requires at $version.
bump() {
	local file=$1 p
	for p in "${published[@]}"; do
		p=$(modpath "$p")
		# A requirement line: "require PATH vX" or, inside a block, "PATH vX".
		if grep -Eq "^[[:space:]]*(require[[:space:]]+)?${p//./\\.}[[:space:]]+v" "$file"; then
			go mod edit -require="$p@$version" "$file"
		fi
	done
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for d in "${nested[@]}"; do
	if $apply; then
		bump "$d/go.mod"
	else
		mkdir -p "$work/$d"
		cp "$d/go.mod" "$work/$d/go.mod"
		bump "$work/$d/go.mod"
		diff -u --label "a/$d/go.mod" --label "b/$d/go.mod" "$d/go.mod" "$work/$d/go.mod" || true
	fi
done

if ! $apply; then
	echo
	echo "dry run: would commit the changes above as \"release $version\" and create the tags:"
	printf '  %s\n' "${tags[@]}"
	echo "rerun with --apply to do it"
	exit 0
fi

git add $(printf '%s/go.mod ' "${nested[@]}")
git commit -q -m "release $version: the nested modules require $version of the repository's modules"
for t in "${tags[@]}"; do
	git tag -a "$t" -m "podstatus $version"
done
echo "committed and tagged:"
printf '  %s\n' "${tags[@]}"
echo "publish with: git push origin HEAD ${tags[*]}"
