#!/usr/bin/env bash
# release.sh: build dynops for linux and darwin, amd64 and arm64, into dist/
# (one tar.gz per platform) with the version and commit stamped, and write
# dist/SHA256SUMS. Run by `make release`; VERSION defaults to `git describe`,
# PLATFORMS to "linux/amd64 linux/arm64 darwin/amd64 darwin/arm64".
#
# It builds from a clean clone of HEAD in a temp dir, so nothing uncommitted
# or untracked gets in and Go stamps the commit (vcs.revision; Go does not
# see git worktrees). The version goes in with -ldflags -X main.version. Both
# are read back from every binary before it is packed. A tree with
# uncommitted changes is refused: a release names exactly one commit.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "release: the work tree has uncommitted changes; commit or stash them (a release is one commit)" >&2
  exit 1
fi
version=${VERSION:-$(git describe --tags --always)}
commit=$(git rev-parse HEAD)
platforms=${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}
out="$repo/${DIST:-dist}"
rm -rf "$out"
mkdir -p "$out"
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
git clone -q --shared --no-checkout "$(git rev-parse --git-common-dir)" "$src"
git -C "$src" checkout -q --detach "$commit"

for platform in $platforms; do
  os=${platform%/*} arch=${platform#*/}
  name="dynops_${version}_${os}_${arch}"
  dir="$out/$name"
  mkdir -p "$dir"
  (cd "$src" && CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -buildvcs=true \
    -ldflags "-s -w -X main.version=$version" -o "$dir/dynops" ./cmd/dynops)
  grep -q "vcs.revision=$commit" <<<"$(go version -m "$dir/dynops")" \
    || { echo "release: $dir/dynops does not carry commit $commit (go version -m)" >&2; exit 1; }
  if [ "$platform" = "$(go env GOOS)/$(go env GOARCH)" ]; then
    got=$("$dir/dynops" version -o json)
    grep -q "\"version\": *\"$version\"" <<<"$got" && grep -q "\"commit\": *\"$commit\"" <<<"$got" \
      || { echo "release: $dir/dynops version says $got, want $version $commit" >&2; exit 1; }
  else
    grep -qaF "$version" "$dir/dynops" || { echo "release: $dir/dynops does not carry version $version" >&2; exit 1; }
  fi
  cp README.md "$dir/"
  # Same bytes for the same commit: fixed order, owner and times, no gzip name/time.
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$(git log -1 --format=%ct)" \
    -C "$out" -cf - "$name" | gzip -n -9 >"$out/$name.tar.gz"
  rm -rf "$dir"
  echo "release: $out/$name.tar.gz ($os/$arch, $version, commit $commit)"
done
(cd "$out" && sha256sum -- *.tar.gz >SHA256SUMS)
echo "release: $out/SHA256SUMS"
cat "$out/SHA256SUMS"
