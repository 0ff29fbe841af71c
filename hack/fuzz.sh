#!/usr/bin/env bash
# Runs every Go fuzz target of the repository for a fixed number of inputs
# (FUZZTIME, default 20000x), one after the other. New targets are found by
# their name: func FuzzXxx in a _test.go file. The budget is a count, not a
# duration: with a duration, Go 1.26's fuzz coordinator can stall at the
# deadline and fail with "context deadline exceeded" (go.dev/issue/75804).
set -euo pipefail

fuzztime="${FUZZTIME:-20000x}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

found=0
while IFS=: read -r file _ match; do
	name="$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/' <<<"$match")"
	dir="$(dirname "$file")"
	module="${dir%%/*}"
	rel="${dir#"$module"}"
	rel="${rel#/}"
	pkg="./${rel:-.}"
	echo "fuzz: $name in ./$dir for $fuzztime"
	(cd "$module" && go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg")
	found=$((found + 1))
done < <(grep -rHn --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(' api certs listener skr-agent kcp-operator e2e 2>/dev/null | sort)

echo "fuzz: ran $found targets"
