#!/usr/bin/env bash
# Builds istiod (pilot-discovery) from the Go module proxy into a cache folder
# named by its version, and prints the binary's path. A second run finds the
# binary and builds nothing. Beside it goes Istio's CRD YAML of the same
# version (crd-all.gen.yaml), which the e2e suite installs into the KCP
# before it runs istiod against it (docs/testing.md, "Istio").
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
mod="$root/hack/istiod"
# The version is the one hack/istiod/go.mod pins: the folder name follows it.
version="$(cd "$mod" && GOWORK=off go list -m -f '{{.Version}}' istio.io/istio)"
[[ -n "$version" ]] || { echo "istiod: hack/istiod/go.mod pins no istio.io/istio" >&2; exit 1; }
cache="${LM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/lifecycle-manager}"
out="$cache/istiod-${version}"

if [[ -x "$out/pilot-discovery" && -f "$out/crd-all.gen.yaml" ]]; then
	echo "$out/pilot-discovery"
	exit 0
fi

mkdir -p "$out"
tmp="$(mktemp -d "$out/.build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

echo "istiod: building pilot-discovery ${version} (a few minutes the first time)" >&2
(cd "$mod" &&
	GOWORK=off GOFLAGS=-mod=readonly CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" \
		-o "$tmp/pilot-discovery" istio.io/istio/pilot/cmd/pilot-discovery)

"$tmp/pilot-discovery" version --short >&2 || true
src="$(cd "$mod" && GOWORK=off go list -m -f '{{.Dir}}' istio.io/istio)"
cp "$src/manifests/charts/base/files/crd-all.gen.yaml" "$tmp/"
chmod 644 "$tmp/crd-all.gen.yaml"
mv "$tmp/crd-all.gen.yaml" "$tmp/pilot-discovery" "$out/"
echo "$out/pilot-discovery"
