package listener_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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

// Environment of the load generator process.
const (
	loadHelperEnv = "LISTENER_LOAD_HELPER_URL"
	loadCAEnv     = "LISTENER_LOAD_HELPER_CA_DIR"
	loadEventsEnv = "LISTENER_LOAD_HELPER_EVENTS"
	loadRateEnv   = "LISTENER_BENCH_RATE" // events/s of BenchmarkLatencyAtRate, default 10000
	loadClients   = 64
	// unlimitedRate and unlimitedBurst are per-runtime limits no benchmark reaches.
	unlimitedRate  = 1e9
	unlimitedBurst = 1 << 30
)

// BenchmarkEventsOverMTLS measures throughput: 64 clients, each with its
// own certificate and keep-alive mTLS connection (HTTP/1.1), send b.N
// events as fast as the server answers. The clients run in a child process
// (this test binary running TestLoadClientsHelper), so that cpu-us/event
// is the server process's CPU time alone; both processes share the
// machine's cores.
func BenchmarkEventsOverMTLS(b *testing.B) {
	runLoad(b, 0)
}

// BenchmarkLatencyAtRate measures latency at a fixed offered load,
// LISTENER_BENCH_RATE events/s (default 10000, half the throughput goal),
// spread evenly over the 64 clients. Latency runs from the moment a
// request was due, so a client that falls behind counts its wait.
func BenchmarkLatencyAtRate(b *testing.B) {
	rate := 10000.0
	if v := os.Getenv(loadRateEnv); v != "" {
		var err error
		if rate, err = strconv.ParseFloat(v, 64); err != nil {
			b.Fatalf("%s: %v", loadRateEnv, err)
		}
	}
	runLoad(b, rate)
}

// runLoad serves in this process and lets a child process send b.N
// events (rate 0: as fast as possible).
func runLoad(b *testing.B, rate float64) {
	b.Helper()
	ca := pkitest.NewCA(b, "kcp-ca")
	caDir := writeCA(b, ca)
	cfg := listener.Config{
		Managers: []string{manager}, KeyPair: ca.Server().KeyPair(b), ClientCAs: ca.Bundle(),
		Registerer: prometheus.NewRegistry(), Log: logr.Discard(), QueueCapacity: 1 << 16,
		// Far beyond the default, which one benchmark client exceeds:
		// the limiter's work stays in the measurement, its refusals do not.
		RuntimeEventRate: unlimitedRate, RuntimeEventBurst: unlimitedBurst,
	}
	srv, ln := newBenchServer(b, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = srv.Serve(ctx, ln) }()
	var delivered atomic.Int64
	go func() { _ = srv.Consume(ctx, manager, func(event.Event) { delivered.Add(1) }) }()

	child := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestLoadClientsHelper$", "-test.timeout=30m")
	child.Env = append(os.Environ(), loadHelperEnv+"=https://"+ln.Addr().String()+"/v2/klm/event",
		loadCAEnv+"="+caDir, loadEventsEnv+"="+strconv.Itoa(b.N), loadRateEnv+"="+strconv.FormatFloat(rate, 'f', -1, 64))
	stdin, err := child.StdinPipe()
	require.NoError(b, err)
	stdout, err := child.StdoutPipe()
	require.NoError(b, err)
	child.Stderr = os.Stderr
	require.NoError(b, child.Start())
	lines := bufio.NewScanner(stdout)
	expectLine(b, lines, "CONNECTED") // handshakes are done before the clock runs
	for delivered.Load() < loadClients {
		time.Sleep(time.Millisecond) // the warm-up events, one per client
	}
	b.ResetTimer()
	warmUp := delivered.Load()
	cpuBefore := cpuTime()
	_ = stdin.Close() // go
	result := expectLine(b, lines, "RESULT")
	cpu := cpuTime() - cpuBefore
	b.StopTimer()
	require.NoError(b, child.Wait())

	var events, failed int
	var seconds, p50, p99, clientCPU float64
	_, err = fmt.Sscanf(result, "RESULT events=%d failed=%d seconds=%g p50=%g p99=%g cpu=%g",
		&events, &failed, &seconds, &p50, &p99, &clientCPU)
	require.NoError(b, err, result)
	if failed > 0 {
		b.Fatalf("%d of %d events not accepted", failed, events)
	}
	b.ReportMetric(float64(events)/seconds, "events/s")
	b.ReportMetric(p50, "p50-ms")
	b.ReportMetric(p99, "p99-ms")
	b.ReportMetric(float64(cpu.Microseconds())/float64(events), "server-cpu-us/event")
	b.ReportMetric(clientCPU*1e6/float64(events), "client-cpu-us/event")
	// Below 1 when events for one object coalesced while waiting.
	b.ReportMetric(float64(delivered.Load()-warmUp)/float64(events), "delivered/event")
}

func writeCA(b *testing.B, ca *pkitest.CA) string {
	b.Helper()
	dir := b.TempDir()
	certPEM, keyPEM, err := ca.CA.PEM()
	require.NoError(b, err)
	require.NoError(b, os.WriteFile(filepath.Join(dir, "ca.crt"), certPEM, 0o600))
	require.NoError(b, os.WriteFile(filepath.Join(dir, "ca.key"), keyPEM, 0o600))
	return dir
}

func readCA(t *testing.T, dir string) *pki.CA {
	t.Helper()
	certPEM, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	require.NoError(t, err)
	keyPEM, err := os.ReadFile(filepath.Join(dir, "ca.key"))
	require.NoError(t, err)
	ca, err := pki.ParseCA(certPEM, keyPEM)
	require.NoError(t, err)
	return ca
}

// cpuTime is the user and system CPU time of this process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func expectLine(b *testing.B, sc *bufio.Scanner, prefix string) string {
	b.Helper()
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), prefix) {
			return sc.Text()
		}
	}
	b.Fatalf("the client process ended before %s: %v", prefix, sc.Err())
	return ""
}

// TestLoadClientsHelper is the client side of the load benchmarks; it does
// nothing unless one of them started it. It connects 64 clients, reports
// CONNECTED, waits for its stdin to close, sends the events and reports
// the RESULT.
func TestLoadClientsHelper(t *testing.T) {
	url := os.Getenv(loadHelperEnv)
	if url == "" {
		t.Skip("started by the load benchmarks only")
	}
	total, err := strconv.Atoi(os.Getenv(loadEventsEnv))
	require.NoError(t, err)
	rate, err := strconv.ParseFloat(os.Getenv(loadRateEnv), 64)
	require.NoError(t, err)
	clients := loadClientsFor(t, readCA(t, os.Getenv(loadCAEnv)))
	payloads := bodies()
	for _, c := range clients {
		require.Equal(t, http.StatusOK, sendEvent(c, url, payloads[0]), "warm-up")
	}
	fmt.Println("CONNECTED") //nolint:forbidigo // the parent process reads this line
	_, _ = io.Copy(io.Discard, os.Stdin)

	cpuBefore := cpuTime()
	perClient := (total + len(clients) - 1) / len(clients)
	latencies := make([][]time.Duration, len(clients))
	var failed atomic.Int64
	var next atomic.Int64
	start := time.Now()
	var interval time.Duration
	if rate > 0 {
		interval = time.Duration(float64(time.Second) * float64(len(clients)) / rate)
	}
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			due := start.Add(interval * time.Duration(i) / time.Duration(len(clients)))
			for n := 0; ; n++ {
				if rate > 0 {
					if n == perClient {
						return
					}
					time.Sleep(time.Until(due))
				} else if next.Add(1) > int64(total) {
					return
				} else {
					due = time.Now()
				}
				if sendEvent(c, url, payloads[n%len(payloads)]) != http.StatusOK {
					failed.Add(1)
				}
				latencies[i] = append(latencies[i], time.Since(due))
				due = due.Add(interval)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := slices.Concat(latencies...)
	slices.Sort(all)
	at := func(q float64) float64 {
		return float64(all[min(len(all)-1, int(q*float64(len(all))))].Microseconds()) / 1000
	}
	fmt.Printf("RESULT events=%d failed=%d seconds=%g p50=%g p99=%g cpu=%g\n", //nolint:forbidigo // read by the parent
		len(all), failed.Load(), elapsed.Seconds(), at(0.5), at(0.99), (cpuTime() - cpuBefore).Seconds())
}

// loadClientsFor returns 64 clients with certificates of ca: one HTTP/1.1
// keep-alive connection each.
func loadClientsFor(t *testing.T, ca *pki.CA) []*http.Client {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	clients := make([]*http.Client, loadClients)
	for i := range clients {
		certPEM, keyPEM, err := ca.Issue(pki.LeafRequest{
			CommonName: fmt.Sprintf("rt-%d", i), Usage: pki.UsageClient, NotBefore: time.Now(), Duration: time.Hour,
		}, pki.ECDSAP256)
		require.NoError(t, err)
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		require.NoError(t, err)
		clients[i] = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{
				RootCAs: roots, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert},
			},
			MaxIdleConnsPerHost: 1, MaxConnsPerHost: 1,
		}}
	}
	return clients
}

func sendEvent(c *http.Client, url string, body []byte) int {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// bodies are events for 100 objects, so that the queue delivers rather
// than coalesces most of them.
func bodies() [][]byte {
	out := make([][]byte, 100)
	for i := range out {
		out[i] = []byte(eventBody("object-" + strconv.Itoa(i)))
	}
	return out
}
