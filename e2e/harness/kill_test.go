package harness

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestKillEndsAProcessThatIgnoresSIGTERM: Kill is SIGKILL, which no
// process can catch, and returns once the process is gone.
func TestKillEndsAProcessThatIgnoresSIGTERM(t *testing.T) {
	p := &Process{Name: "stubborn", Bin: "/bin/sh", Args: []string{"-c", "trap '' TERM; echo ready; sleep 600"},
		Log: filepath.Join(t.TempDir(), "stubborn.log")}
	require.NoError(t, p.Start(t.Context()))
	// Once it echoes, the trap is set.
	require.Eventually(t, func() bool { return strings.Contains(p.Tail(200), "ready") }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, p.Kill())
	require.False(t, p.Running())
	require.Zero(t, p.Pid())
	require.NoError(t, p.Kill(), "killing a process that does not run is no error")
}
