package tlsreload_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStaysLight guards what the agent in every runtime pulls in through
// this package and pki: the standard library and logr, nothing else.
func TestStaysLight(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	require.NoError(t, err)
	allowed := map[string]bool{
		"github.com/go-logr/logr":                      true,
		"github.com/lifecycle-manager/certs/pki":       true,
		"github.com/lifecycle-manager/certs/tlsreload": true,
	}
	for _, dep := range strings.Fields(string(out)) {
		if !allowed[dep] {
			t.Errorf("tlsreload must stay stdlib+logr for the agent, but depends on %s", dep)
		}
	}
}
