package listener_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/pkitest"
	"github.com/lifecycle-manager/listener"
	"github.com/lifecycle-manager/listener/event"
)

// Environment of the idle connection measurement.
const (
	idleConnsEnv  = "LISTENER_IDLE_CONNS" // number of connections, default 10000
	idleHelperEnv = "LISTENER_IDLE_HELPER_ADDR"
	idleCAEnv     = "LISTENER_IDLE_HELPER_CA_DIR"
)

// BenchmarkIdleConnections measures the server's memory with many
// connected runtimes: LISTENER_IDLE_CONNS (default 10000) mTLS keep-alive
// connections, each with its own client certificate, that sent one event
// and then stay idle. A child process (this test binary running
// TestIdleClientsHelper) holds the client side, so that this process
// holds only the server's state and each process needs file descriptors
// for its own side only. It measures once, whatever b.N is.
func BenchmarkIdleConnections(b *testing.B) {
	n := 10000
	if v := os.Getenv(idleConnsEnv); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatalf("%s: %v", idleConnsEnv, err)
		}
	}
	var limit syscall.Rlimit
	require.NoError(b, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &limit))
	if limit.Cur < uint64(n)+256 {
		b.Skipf("file descriptor limit %d is too low for %d connections: raise ulimit -n", limit.Cur, n)
	}
	ca := pkitest.NewCA(b, "kcp-ca")
	caDir := writeCA(b, ca)

	cfg := listener.Config{
		Managers: []string{manager}, KeyPair: ca.Server().KeyPair(b), ClientCAs: ca.Bundle(),
		Registerer: prometheus.NewRegistry(), Log: logr.Discard(),
	}
	srv, ln := newBenchServer(b, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = srv.Serve(ctx, ln) }()
	go func() { _ = srv.Consume(ctx, manager, func(event.Event) {}) }()

	before := memory()
	child := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestIdleClientsHelper$", "-test.timeout=20m")
	child.Env = append(os.Environ(), idleHelperEnv+"="+ln.Addr().String(), idleCAEnv+"="+caDir, idleConnsEnv+"="+strconv.Itoa(n))
	stdin, err := child.StdinPipe()
	require.NoError(b, err)
	stdout, err := child.StdoutPipe()
	require.NoError(b, err)
	child.Stderr = os.Stderr
	start := time.Now()
	require.NoError(b, child.Start())
	expectLine(b, bufio.NewScanner(stdout), "READY")
	connected := time.Since(start)
	after := memory()
	_ = stdin.Close() // the child closes its connections and exits
	require.NoError(b, child.Wait())

	b.ReportMetric(float64(n), "conns")
	b.ReportMetric(mib(after.heap-before.heap), "heap-MiB")
	b.ReportMetric(mib(after.stack-before.stack), "stack-MiB")
	b.ReportMetric(mib(after.rss-before.rss), "rss-MiB")
	b.ReportMetric(float64(after.heap+after.stack-before.heap-before.stack)/1024/float64(n), "KiB/conn")
	b.ReportMetric(float64(after.goroutines-before.goroutines), "goroutines")
	b.ReportMetric(connected.Seconds(), "connect-s")
}

type memSnapshot struct {
	heap, stack, rss uint64
	goroutines       int
}

func memory() memSnapshot {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s := memSnapshot{heap: ms.HeapInuse, stack: ms.StackInuse, goroutines: runtime.NumGoroutine()}
	if data, err := os.ReadFile("/proc/self/statm"); err == nil {
		if fields := strings.Fields(string(data)); len(fields) > 1 {
			pages, _ := strconv.ParseUint(fields[1], 10, 64)
			s.rss = pages * uint64(os.Getpagesize())
		}
	}
	return s
}

func mib(bytes uint64) float64 { return float64(int64(bytes)) / (1 << 20) }

// TestIdleClientsHelper is the client side of BenchmarkIdleConnections; it
// does nothing unless that benchmark started it.
func TestIdleClientsHelper(t *testing.T) {
	addr := os.Getenv(idleHelperEnv)
	if addr == "" {
		t.Skip("started by BenchmarkIdleConnections only")
	}
	n, err := strconv.Atoi(os.Getenv(idleConnsEnv))
	require.NoError(t, err)
	ca := readCA(t, os.Getenv(idleCAEnv))
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)

	conns := make([]net.Conn, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < n; i += 16 {
				c, err := openIdleConn(t.Context(), ca, roots, addr, fmt.Sprintf("rt-%d", i))
				if err != nil {
					errs <- fmt.Errorf("connection %d: %w", i, err)
					return
				}
				conns[i] = c
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	fmt.Printf("READY %d\n", n) //nolint:forbidigo // the parent process reads this line
	_, _ = io.Copy(io.Discard, os.Stdin)
	for _, c := range conns {
		_ = c.Close()
	}
}

// openIdleConn issues a certificate for runtimeID, connects, sends one
// event, reads the answer and returns the open connection.
func openIdleConn(ctx context.Context, ca *pki.CA, roots *x509.CertPool, addr, runtimeID string) (net.Conn, error) {
	certPEM, keyPEM, err := ca.Issue(pki.LeafRequest{
		CommonName: runtimeID, Usage: pki.UsageClient, NotBefore: time.Now(), Duration: time.Hour,
	}, pki.ECDSAP256)
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	d := tls.Dialer{Config: &tls.Config{
		RootCAs: roots, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert},
	}}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+addr+"/v2/klm/event", strings.NewReader(kymaBody))
	if err == nil {
		err = req.Write(c)
	}
	var resp *http.Response
	if err == nil {
		resp, err = http.ReadResponse(bufio.NewReader(c), req)
	}
	if err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("answer %d", resp.StatusCode)
		}
	}
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}
