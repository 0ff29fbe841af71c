#!/usr/bin/env bash
# Builds kube-apiserver and etcd for envtest from the Go module proxy into a
# cache folder named by their versions, and prints that folder (the value for
# KUBEBUILDER_ASSETS). A second run finds the binaries and builds nothing.
# Prebuilt envtest downloads are not reachable from every machine; the Go
# module proxy is.
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-1.36.3}"
ETCD_VERSION="${ETCD_VERSION:-3.6.5}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${LM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/lifecycle-manager}"
out="$cache/envtest/k8s-${K8S_VERSION}-etcd-${ETCD_VERSION}"

if [[ -x "$out/kube-apiserver" && -x "$out/etcd" ]]; then
	echo "$out"
	exit 0
fi

mkdir -p "$out"
tmp="$(mktemp -d "$out/.build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

log() { echo "envtest-assets: $*" >&2; }

# The tools modules pin the versions in their go.mod; refuse to build
# something other than what the folder name promises.
grep -q "k8s.io/kubernetes v${K8S_VERSION}\$" "$root/hack/envtest/kube-apiserver/go.mod" ||
	{ log "hack/envtest/kube-apiserver/go.mod does not pin k8s.io/kubernetes v${K8S_VERSION}"; exit 1; }
grep -q "go.etcd.io/etcd/server/v3 v${ETCD_VERSION}\$" "$root/hack/envtest/etcd/go.mod" ||
	{ log "hack/envtest/etcd/go.mod does not pin go.etcd.io/etcd/server/v3 v${ETCD_VERSION}"; exit 1; }

minor="${K8S_VERSION#*.}"; minor="${minor%%.*}"
ldflags="-s -w"
ldflags+=" -X k8s.io/component-base/version.gitVersion=v${K8S_VERSION}"
ldflags+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor}"
ldflags+=" -X k8s.io/component-base/version.gitTreeState=clean"

log "building kube-apiserver v${K8S_VERSION} (a few minutes the first time)"
(cd "$root/hack/envtest/kube-apiserver" &&
	GOWORK=off GOFLAGS=-mod=readonly CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" \
		-o "$tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver)

log "building etcd v${ETCD_VERSION}"
(cd "$root/hack/envtest/etcd" &&
	GOWORK=off GOFLAGS=-mod=readonly CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp/etcd" .)

"$tmp/kube-apiserver" --version >&2
"$tmp/etcd" --version | head -1 >&2
mv "$tmp/kube-apiserver" "$tmp/etcd" "$out/"
echo "$out"
