#!/usr/bin/env bash
# Provides prometheus and promtool for the tests (e2e/promtest): Debian's
# package, installed with apt-get when missing (root), copied into a cache
# folder named by its version, and prints that folder. A second run finds the
# binaries and installs nothing. The package's service is never used: the
# tests run the binary themselves with their own configuration.
set -euo pipefail

PROMETHEUS_VERSION="${PROMETHEUS_VERSION:-2.42.0}"
cache="${LM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/lifecycle-manager}"
out="$cache/prometheus-${PROMETHEUS_VERSION}"

log() { echo "prometheus.sh: $*" >&2; }

if [[ -x "$out/prometheus" && -x "$out/promtool" ]]; then
	echo "$out"
	exit 0
fi

mkdir -p "$out"
# Test packages run in parallel: one installs, the others wait for it.
exec 9>"$out/.lock"
flock 9
if [[ -x "$out/prometheus" && -x "$out/promtool" ]]; then
	echo "$out"
	exit 0
fi

if [[ ! -x /usr/bin/prometheus || ! -x /usr/bin/promtool ]]; then
	if [[ "$(id -u)" != 0 ]]; then
		log "prometheus is not installed and installing it needs root: apt-get install prometheus"
		exit 1
	fi
	log "installing Debian's prometheus package (apt-get)"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y -qq --no-install-recommends prometheus >&2; then
		log "apt-get install failed; updating the package lists and trying again"
		apt-get update -qq >&2
		apt-get install -y -qq --no-install-recommends prometheus >&2 ||
			{ log "cannot install prometheus with apt-get"; exit 1; }
	fi
fi

version="$(/usr/bin/prometheus --version 2>&1 | head -1)"
if [[ "$version" != *"version ${PROMETHEUS_VERSION}"* ]]; then
	log "/usr/bin/prometheus is not ${PROMETHEUS_VERSION}: $version"
	exit 1
fi
cp /usr/bin/prometheus "$out/.prometheus" && mv "$out/.prometheus" "$out/prometheus"
cp /usr/bin/promtool "$out/.promtool" && mv "$out/.promtool" "$out/promtool"
echo "$out"
