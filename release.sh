#!/usr/bin/env bash
# release.sh — release every published module at one version: one release commit, one tag
# per module on it, then a commit that returns the repository to local development.
#
#   ./release.sh v0.1.0            dry run: list the modules and the tags, change nothing
#   ./release.sh v0.1.0 --apply    make the two commits and create the tags locally
#
# Go finds a nested module's version by a tag prefixed with its directory
# (status/kubeclient/v0.1.0 for github.com/podstatus/podstatus/status/kubeclient), so one
# release is one tag per published module, all on the release commit.
#
# Published: the root and every nested module except those under an internal/ directory
# (test harnesses and tools nobody can import) and, by rule, any module that requires
# a module under internal/ (such as an example built on internal/upstream's API server),
# or requires a module so excluded: those could not be fetched by anyone.
#
# Installable as tagged. In development every nested go.mod replaces the repository's own
# modules with their local directories, so that a change to the root and to a nested
# module builds and tests together. `go install pkg@version` refuses a module whose go.mod
# has a replace directive, so the release commit drops those replaces: each published
# nested go.mod requires the repository's modules at the new version, as a user's build
# resolves them from the module proxy, and its go.sum holds their real hashes. Those are
# computed before tagging: the modules are zipped, in dependency order, from the very
# tree of the release commit (internal/releasetool, golang.org/x/mod/zip from git, what
# the proxy would serve) into a temporary file proxy, and `go mod tidy` of each nested
# module resolves its siblings from it. The commit after the tags restores the
# development go.mods (the local replaces, the requirements raised to the new version).
# Replaces of other modules stay: kubeletstatus needs its k8s.io staging replaces
# (k8s.io/kubernetes requires its staging modules at v0.0.0), so it is a library to
# `go get`, with the same replace block in the user's go.mod, never to `go install`.
# internal/releasecheck/run.sh proves all of it on a clone: it releases, serves the tags
# from a file proxy and installs every program and builds every library from it.
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

root=$(GOWORK=off go list -m -f '{{.Path}}')
modpath() { if [ "$1" = . ]; then echo "$root"; else echo "$root/$1"; fi; }
# own_requires DIR: the repository's modules DIR's go.mod requires, as directories.
own_requires() {
	go mod edit -json "$1/go.mod" | awk '/"Require": \[/ { r = 1 } r && /^\t\]/ { r = 0 } r && /"Path"/ { gsub(/.*"Path": "|".*/, ""); print }' | sort -u |
		while read -r p; do
			case "$p" in "$root") echo . ;; "$root"/*) echo "${p#"$root"/}" ;; esac
		done
}

nested=()
for f in $(git ls-files '*/go.mod'); do
	nested+=("$(dirname "$f")")
done

# The published modules, in dependency order (a module after those it requires).
excluded=" "
for d in "${nested[@]}"; do
	case "/$d/" in */internal/*) excluded+="$d " ;; esac
done
changed=true
while $changed; do
	changed=false
	for d in "${nested[@]}"; do
		case "$excluded" in *" $d "*) continue ;; esac
		for r in $(own_requires "$d"); do
			case "$excluded" in *" $r "*) excluded+="$d "; changed=true; break ;; esac
		done
	done
done
published=(.)
while :; do
	progress=false
	for d in "${nested[@]}"; do
		case "$excluded $(printf '%s ' "${published[@]}")" in *" $d "*) continue ;; esac
		ready=true
		for r in $(own_requires "$d"); do
			[ "$r" = "$d" ] && continue
			case " $(printf '%s ' "${published[@]}")" in *" $r "*) ;; *) ready=false ;; esac
		done
		if $ready; then published+=("$d"); progress=true; fi
	done
	$progress || break
done
for d in "${nested[@]}"; do
	case "$excluded $(printf '%s ' "${published[@]}")" in *" $d "*) ;; *) echo "module $d: its requirements on the repository's modules form a cycle" >&2; exit 1 ;; esac
done
tags=()
for d in "${published[@]}"; do
	if [ "$d" = . ]; then tags+=("$version"); else tags+=("$d/$version"); fi
done

if ! $apply; then
	echo "published modules, in dependency order:"
	for d in "${published[@]}"; do printf '  %s\n' "$(modpath "$d")"; done
	echo "not published:$excluded" | sed 's/ *$//'
	echo "dry run: --apply would commit \"release $version\" (no replaces of the repository's modules"
	echo "in the published go.mods), tag it, then commit the development go.mods back:"
	printf '  %s\n' "${tags[@]}"
	exit 0
fi

[ -z "$(git status --porcelain)" ] || { echo "the work tree is not clean; commit or stash first" >&2; exit 1; }
for t in "${tags[@]}"; do
	if git rev-parse -q --verify "refs/tags/$t" >/dev/null; then
		echo "tag $t already exists" >&2
		exit 1
	fi
done

work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
proxy=$work/proxy
go build -C internal/releasetool -o "$work/releasetool" .
start=$(git rev-parse HEAD)
# The module cache is private, so a stale zip of this version from an earlier attempt is
# never used; third-party modules come from the shared cache's download directory, a
# file proxy itself, before the configured proxy.
goenv=(env GOWORK=off GOMODCACHE="$work/modcache" GOFLAGS="$(go env GOFLAGS) -mod=mod -modcacherw"
	GOPROXY="file://$proxy,file://$(go env GOMODCACHE)/cache/download,$(go env GOPROXY)"
	GONOSUMDB="$root" GONOSUMCHECK=1)
# publish DIR REV: add module DIR as it is at REV to the temporary proxy.
publish() {
	local sub=$1
	[ "$sub" = . ] && sub=
	"$work/releasetool" -git . -rev "$2" -subdir "$sub" -module "$(modpath "$1")" -version "$version" -proxy "$proxy"
}
publish . "$start"
for d in "${published[@]:1}"; do
	f=$d/go.mod
	for p in $(go mod edit -json "$f" | awk '/"Old": \{/ { o = 1; next } o && /"Path"/ { gsub(/.*"Path": "|".*/, ""); print; o = 0 }' | sort -u); do
		case "$p" in "$root" | "$root"/*) go mod edit -dropreplace="$p" "$f" ;; esac
	done
	for r in $(own_requires "$d"); do
		go mod edit -require="$(modpath "$r")@$version" "$f"
	done
	(cd "$d" && "${goenv[@]}" go mod tidy)
	git add "$d/go.mod" "$d/go.sum"
	publish "$d" "$(git commit-tree "$(git write-tree)" -p "$start" -m "release $version (in progress)")"
done
git commit -q -m "release $version: the published modules require $version of each other, with no local replaces"
for t in "${tags[@]}"; do
	git tag -a "$t" -m "podstatus $version"
done
release=$(git rev-parse HEAD)

# Back to development: the go.mods and go.sums of before, requiring the new version.
for d in "${published[@]:1}"; do
	git checkout -q "$start" -- "$d/go.mod" "$d/go.sum"
	for r in $(own_requires "$d"); do
		go mod edit -require="$(modpath "$r")@$version" "$d/go.mod"
	done
	git add "$d/go.mod"
done
git commit -q -m "after release $version: the nested modules build against the local directories again"
echo "release commit $release, tagged:"
printf '  %s\n' "${tags[@]}"
echo "publish with: git push origin HEAD ${tags[*]}"
