package main_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/pkitest"
)

// run runs the binary with only the given environment and returns its exit
// code and standard error.
func run(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	bin := agentBinary(t) // built on first use: its build must not eat the run's deadline
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), stderr.String()
	}
	require.NoError(t, err)
	return 0, stderr.String()
}

func TestBadConfigurationFailsClearly(t *testing.T) {
	code, stderr := run(t, nil)
	assert.Equal(t, 2, code)
	for _, want := range []string{"KCP_ADDR", "KCP_CONTRACT", "CA_CERT", "TLS_CERT", "TLS_KEY"} {
		assert.Contains(t, stderr, want)
	}

	code, stderr = run(t, []string{"KCP_ADDR=kcp.example.com", "KCP_CONTRACT=v2", "WEBHOOK_PORT=x",
		"CA_CERT=/nope/ca.crt", "TLS_CERT=/nope/tls.crt", "TLS_KEY=/nope/tls.key"})
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "WEBHOOK_PORT")

	code, stderr = run(t, []string{"KCP_ADDR=kcp.example.com", "KCP_CONTRACT=v2",
		"CA_CERT=/nope/ca.crt", "TLS_CERT=/nope/tls.crt", "TLS_KEY=/nope/tls.key"})
	assert.Equal(t, 1, code, "files that cannot be read stop the start")
	assert.Contains(t, stderr, "/nope/tls.crt")
}

func TestHelpExitsZero(t *testing.T) {
	code, stderr := run(t, nil, "-h")
	assert.Equal(t, 0, code)
	assert.Contains(t, stderr, "-queue-size")
}

func TestStopsCleanlyOnSIGTERM(t *testing.T) {
	ca := pkitest.NewCA(t, "kcp-ca")
	cert, key := ca.Issue("runtime-1", pki.UsageClient|pki.UsageServer)
	files := pkitest.WriteFiles(t, t.TempDir(), cert, key, ca.PEM())
	metricsPort := freePort(t)
	cmd := exec.CommandContext(t.Context(), agentBinary(t), "--bind-address=127.0.0.1", "--shutdown-delay=0s")
	cmd.Env = []string{"KCP_ADDR=127.0.0.1:1", "KCP_CONTRACT=v2", "CA_CERT=" + files.CA, "TLS_CERT=" + files.Cert,
		"TLS_KEY=" + files.Key, "WEBHOOK_PORT=" + strconv.Itoa(freePort(t)), "METRICS_PORT=" + strconv.Itoa(metricsPort)}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stopWithParent(cmd)
	require.NoError(t, cmd.Start())
	ready := fmt.Sprintf("http://127.0.0.1:%d/readyz", metricsPort)
	require.Eventually(t, func() bool {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, ready, nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 20*time.Second, 20*time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait(), stderr.String())
	assert.Contains(t, stderr.String(), `"msg":"stopped"`)
}
