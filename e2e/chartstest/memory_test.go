package chartstest

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Memory the operator was measured to need (docs/performance.md): a
// baseline and a share per runtime, peak while converging, and the
// render bounds' worst case.
const (
	baselineBytes    = 60 << 20
	perRuntimeBytes  = 230 << 10 // 2.24 GiB peak at 10,000
	renderBoundBytes = 420 << 20
	// renderChildren: 2 render child processes (render.DefaultConcurrency)
	// of at most render.MaxHeap, 64 MiB + 8 × 16 MiB, each, outside the Go heap.
	renderChildren = 2 * (64 + 8*16) << 20
	targetRuntimes = 10000
)

// TestDefaultMemoryFitsTheFleet: with the chart's defaults the operator
// must manage the product's 10,000 runtimes without being OOM-killed, and
// GOMEMLIMIT must leave the render children room under the container's
// limit (a GOMEMLIMIT below the live heap makes the Go runtime collect
// without end; one above the limit lets the kernel kill first).
func TestDefaultMemoryFitsTheFleet(t *testing.T) {
	c := mustRender(t, baseValues(), "lifecycle-manager").container(t)
	limits := c["resources"].(map[string]any)["limits"].(map[string]any)
	q := resource.MustParse(limits["memory"].(string))
	limit := q.Value()
	goLimit := goMemLimit(t, envValue(t, c, "GOMEMLIMIT"))

	need := int64(baselineBytes + targetRuntimes*perRuntimeBytes + renderBoundBytes)
	assert.GreaterOrEqual(t, goLimit, need, "GOMEMLIMIT holds the heap of %d runtimes and a large render", targetRuntimes)
	assert.GreaterOrEqual(t, limit-goLimit, int64(renderChildren), "the container limit leaves the Helm render children room above GOMEMLIMIT")
}

func envValue(t *testing.T, c map[string]any, name string) string {
	t.Helper()
	env, _ := c["env"].([]any)
	for _, e := range env {
		if m := e.(map[string]any); m["name"] == name {
			return m["value"].(string)
		}
	}
	require.Failf(t, "no env", "the container sets no %s", name)
	return ""
}

// goMemLimit parses GOMEMLIMIT's format: a number with B, KiB, MiB, GiB or TiB.
func goMemLimit(t *testing.T, s string) int64 {
	t.Helper()
	for i, unit := range []string{"TiB", "GiB", "MiB", "KiB", "B"} {
		if n, ok := strings.CutSuffix(s, unit); ok {
			v, err := strconv.ParseInt(n, 10, 64)
			require.NoError(t, err, "GOMEMLIMIT %q", s)
			return v << (10 * (4 - i))
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	require.NoError(t, err, "GOMEMLIMIT %q", s)
	return v
}
