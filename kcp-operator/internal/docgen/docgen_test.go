package docgen_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/kcp-operator/internal/docgen"
)

// reference is docs/reference/ of the repository.
const reference = "../../../docs/reference"

// TestReferencePagesAreCurrent regenerates every page in memory and
// compares it with the committed one.
func TestReferencePagesAreCurrent(t *testing.T) {
	kcp, err := docgen.StartKCP()
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, kcp.Stop()) })
	pages, err := docgen.Pages(t.Context(), "../..", kcp.Config)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"flags.md", "metrics.md", "events.md", "conditions.md"}, keys(pages))
	for name, want := range pages {
		got, err := os.ReadFile(filepath.Join(reference, name))
		if err != nil {
			t.Errorf("docs/reference/%s: %v: run `%s` and commit the result", name, err, docgen.Command)
			continue
		}
		if line, diff := firstDifference(string(got), string(want)); diff != "" {
			t.Errorf("docs/reference/%s is stale: run `%s` and commit the result; line %d differs:\n%s", name, docgen.Command, line, diff)
		}
	}
}

func keys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// firstDifference names the first line where got and want differ.
func firstDifference(got, want string) (int, string) {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl || i >= len(g) || i >= len(w) {
			return i + 1, "committed: " + gl + "\ngenerated: " + wl
		}
	}
	return 0, ""
}
