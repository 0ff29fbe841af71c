package chartstest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// TestReadmeListsEveryValue keeps the Values table of the chart's README
// equal to values.yaml: every value has a row (a map may have one row for
// all of it), and every row names a value.
func TestReadmeListsEveryValue(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	require.NoError(t, err)
	var values map[string]any
	require.NoError(t, yaml.Unmarshal(raw, &values))
	readme, err := os.ReadFile(filepath.Join(chartDir, "README.md"))
	require.NoError(t, err)
	rows := valueRows(t, string(readme))

	var missing []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			path := prefix + k
			if rows[path] {
				continue
			}
			if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
				walk(path+".", sub)
				continue
			}
			missing = append(missing, path)
		}
	}
	walk("", values)
	assert.Empty(t, missing, "values without a row in the README's Values table")

	for row := range rows {
		_, found := lookup(values, row)
		assert.True(t, found, "the README documents %s, which values.yaml does not have", row)
	}
}

var valueRow = regexp.MustCompile("^\\| `([A-Za-z0-9.]+)` \\|")

// valueRows returns the value names of the rows of the "## Values" section.
func valueRows(t *testing.T, readme string) map[string]bool {
	t.Helper()
	_, section, ok := strings.Cut(readme, "\n## Values\n")
	require.True(t, ok, "the README has a Values section")
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		if m := valueRow.FindStringSubmatch(line); m != nil {
			rows[m[1]] = true
		}
	}
	require.NotEmpty(t, rows)
	return rows
}

func lookup(values map[string]any, path string) (any, bool) {
	var cur any = values
	for _, p := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}
