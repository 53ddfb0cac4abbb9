#!/usr/bin/env bash
# release.sh: build dynops for linux and darwin, amd64 and arm64, into dist/
# (one tar.gz per platform) with the version and commit stamped, and write
# dist/SHA256SUMS. Run by `make release`; VERSION defaults to `git describe`.
#
# The version goes in with -ldflags -X main.version; the commit is Go's own
# build info (vcs.revision, -buildvcs=true), read back from every binary with
# `go version -m` before it is packed. A tree with uncommitted changes is
# refused: a release names exactly one commit.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "release: the work tree has uncommitted changes; commit or stash them (a release is one commit)" >&2
  exit 1
fi
version=${VERSION:-$(git describe --tags --always)}
commit=$(git rev-parse HEAD)
out=${DIST:-dist}
rm -rf "$out"
mkdir -p "$out"

for os in linux darwin; do
  for arch in amd64 arm64; do
    name="dynops_${version}_${os}_${arch}"
    dir="$out/$name"
    mkdir -p "$dir"
    CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -buildvcs=true \
      -ldflags "-s -w -X main.version=$version" -o "$dir/dynops" ./cmd/dynops
    info=$(go version -m "$dir/dynops")
    grep -q "vcs.revision=$commit" <<<"$info" || { echo "release: $dir/dynops does not carry commit $commit:" >&2; echo "$info" >&2; exit 1; }
    grep -q "main.version=$version" <<<"$info" || { echo "release: $dir/dynops does not carry version $version" >&2; exit 1; }
    cp README.md "$dir/"
    # Same bytes for the same commit: fixed order, owner and times, no gzip name/time.
    tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$(git log -1 --format=%ct)" \
      -C "$out" -cf - "$name" | gzip -n -9 >"$out/$name.tar.gz"
    rm -rf "$dir"
    echo "release: $out/$name.tar.gz ($os/$arch, $version, $commit)"
  done
done
(cd "$out" && sha256sum -- *.tar.gz >SHA256SUMS)
echo "release: $out/SHA256SUMS"
cat "$out/SHA256SUMS"
