package chartstest

import (
	"maps"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pendingFlags are flags the chart passes that the operator does not have
// yet. The test fails once the operator knows one of them, so that it
// leaves this list.
var pendingFlags = []string{}

// TestOperatorKnowsEveryFlag builds kcp-operator and checks that every flag
// the chart passes, for the representative values, is one of its flags.
func TestOperatorKnowsEveryFlag(t *testing.T) {
	known := operatorFlags(t)
	passed := map[string]bool{}
	for _, v := range representativeValues() {
		objs := mustRender(t, v, "lifecycle-manager")
		for _, d := range objs.all("Deployment") {
			for flag := range objs.shardArgs(t, d.GetName()) {
				passed[flag] = true
			}
		}
	}
	for _, flag := range slices.Sorted(maps.Keys(passed)) {
		if slices.Contains(pendingFlags, flag) {
			continue
		}
		assert.True(t, known[flag], "the chart passes %s, which kcp-operator does not know", flag)
	}
	for _, flag := range pendingFlags {
		assert.False(t, known[flag], "kcp-operator knows %s now: remove it from pendingFlags", flag)
		assert.True(t, passed[flag], "pendingFlags lists %s, which the chart does not pass", flag)
	}
}

var flagName = regexp.MustCompile(`(?m)^\s+(?:-[a-z], )?(--[a-z0-9][a-z0-9-]*)`)

// operatorFlags returns the flag names of kcp-operator --help.
func operatorFlags(t *testing.T) map[string]bool {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kcp-operator")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./cmd/kcp-operator")
	build.Dir = filepath.Join(repoRoot, "kcp-operator")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "building kcp-operator: %s", out)
	out, err = exec.CommandContext(t.Context(), bin, "--help").CombinedOutput()
	require.NoError(t, err, "kcp-operator --help: %s", out)
	known := map[string]bool{}
	for _, m := range flagName.FindAllStringSubmatch(string(out), -1) {
		known[m[1]] = true
	}
	require.Contains(t, known, "--namespaces", "the help lists the operator's flags:\n%s", out)
	return known
}
