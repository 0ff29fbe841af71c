#!/usr/bin/env bash
# Copies charts/skr-agent into the operator, which embeds it to install the
# agent into runtimes. `make generate` runs this; `make verify-generated`
# and a test in kcp-operator/internal/agent catch a stale copy.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dst="$root/kcp-operator/internal/agent/chart"
rm -rf "$dst"
mkdir -p "$dst"
cp -R "$root/charts/skr-agent" "$dst/skr-agent"
