#!/usr/bin/env bash
# Builds the cert-manager controllers that tests run (hack/cert-manager, a
# main of our own over cert-manager's controller packages: the module proxy
# serves cert-manager's library, not its controller binary) into a cache
# folder named by the version, and prints the binary's path. A second run
# finds the binary and builds nothing.
set -euo pipefail

CERT_MANAGER_VERSION="${CERT_MANAGER_VERSION:-1.21.2}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${LM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/lifecycle-manager}"
out="$cache/cert-manager-v${CERT_MANAGER_VERSION}"
bin="$out/cert-manager-controller"

if [[ -x "$bin" ]]; then
	echo "$bin"
	exit 0
fi

log() { echo "cert-manager: $*" >&2; }

# The module pins the version in its go.mod; refuse to build something
# other than what the folder name promises.
grep -q "github.com/cert-manager/cert-manager v${CERT_MANAGER_VERSION}\$" "$root/hack/cert-manager/go.mod" ||
	{ log "hack/cert-manager/go.mod does not pin github.com/cert-manager/cert-manager v${CERT_MANAGER_VERSION}"; exit 1; }

mkdir -p "$out"
tmp="$(mktemp -d "$out/.build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

log "building the cert-manager v${CERT_MANAGER_VERSION} controllers (a few minutes the first time)"
(cd "$root/hack/cert-manager" &&
	GOWORK=off GOFLAGS=-mod=readonly CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp/cert-manager-controller" .)
mv "$tmp/cert-manager-controller" "$bin"
echo "$bin"
