package listener_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/listener"
	"github.com/lifecycle-manager/listener/event"
	"github.com/lifecycle-manager/listener/internal/testpki"
)

// benchClients is the number of concurrent runtimes of the load benchmarks.
const benchClients = 64

// benchServer starts a direct-mode server with a consumer that drops the
// events, and returns the event URL and the clients: one HTTP/1.1
// keep-alive connection each, with its own certificate.
func benchServer(b *testing.B) (string, []*http.Client) {
	b.Helper()
	ca := testpki.NewCA(b, "kcp-ca")
	cfg := listener.Config{
		Managers: []string{manager}, KeyPair: ca.Server().KeyPair(b), ClientCAs: ca.Bundle(),
		Registerer: prometheus.NewRegistry(), Log: logr.Discard(), QueueCapacity: 1 << 16,
	}
	srv, ln := newBenchServer(b, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ctx, ln)
	}()
	go func() { _ = srv.Consume(ctx, manager, func(event.Event) {}) }()
	b.Cleanup(func() {
		cancel()
		<-done
	})
	clients := make([]*http.Client, benchClients)
	pool := x509.NewCertPool()
	pool.AddCert(ca.CA.Cert)
	for i := range clients {
		leaf := ca.Client(fmt.Sprintf("rt-%d", i))
		tr := &http.Transport{
			TLSClientConfig: &tls.Config{
				RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12,
				Certificates: []tls.Certificate{leaf.TLSCertificate(b)},
			},
			MaxIdleConnsPerHost: 1, MaxConnsPerHost: 1,
		}
		clients[i] = &http.Client{Transport: tr, Timeout: 10 * time.Second}
	}
	url := "https://" + ln.Addr().String() + "/v2/klm/event"
	for !srv.HasConsumer(manager) {
		time.Sleep(time.Millisecond)
	}
	for _, c := range clients { // handshakes before the clock runs
		if code := sendEvent(c, url, []byte(kymaBody)); code != http.StatusAccepted {
			b.Fatalf("warm-up answer %d", code)
		}
	}
	return url, clients
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

// bodies are events for 100 objects per runtime, so that the queue
// delivers rather than coalesces most of them.
func bodies() [][]byte {
	out := make([][]byte, 100)
	for i := range out {
		out[i] = []byte(eventBody("object-" + strconv.Itoa(i)))
	}
	return out
}

// BenchmarkEventsOverMTLS measures throughput: 64 clients send events as
// fast as they can, each over its own keep-alive mTLS connection. Clients
// and server share the machine's cores.
func BenchmarkEventsOverMTLS(b *testing.B) {
	url, clients := benchServer(b)
	payloads := bodies()
	var next atomic.Int64
	latencies := make([][]time.Duration, len(clients))
	var failed atomic.Int64
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			for n := next.Add(1); n <= int64(b.N); n = next.Add(1) {
				t0 := time.Now()
				if sendEvent(c, url, payloads[n%int64(len(payloads))]) != http.StatusAccepted {
					failed.Add(1)
				}
				latencies[i] = append(latencies[i], time.Since(t0))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if failed.Load() > 0 {
		b.Fatalf("%d events not accepted", failed.Load())
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	reportPercentiles(b, latencies)
}

// BenchmarkLatencyAtRate measures latency at a fixed offered load
// (LISTENER_BENCH_RATE events/s, default 10000: half the throughput goal),
// spread evenly over the 64 clients. Latency runs from the moment a
// request was due, so a client that falls behind counts its wait.
func BenchmarkLatencyAtRate(b *testing.B) {
	rate := 10000.0
	if v := os.Getenv("LISTENER_BENCH_RATE"); v != "" {
		var err error
		if rate, err = strconv.ParseFloat(v, 64); err != nil {
			b.Fatalf("LISTENER_BENCH_RATE: %v", err)
		}
	}
	url, clients := benchServer(b)
	payloads := bodies()
	interval := time.Duration(float64(time.Second) * float64(len(clients)) / rate)
	perClient := (b.N + len(clients) - 1) / len(clients)
	latencies := make([][]time.Duration, len(clients))
	var failed atomic.Int64
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			// Stagger the clients over one interval.
			due := start.Add(interval * time.Duration(i) / time.Duration(len(clients)))
			for n := range perClient {
				time.Sleep(time.Until(due))
				if sendEvent(c, url, payloads[n%len(payloads)]) != http.StatusAccepted {
					failed.Add(1)
				}
				latencies[i] = append(latencies[i], time.Since(due))
				due = due.Add(interval)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if failed.Load() > 0 {
		b.Fatalf("%d events not accepted", failed.Load())
	}
	b.ReportMetric(float64(perClient*len(clients))/elapsed.Seconds(), "events/s")
	reportPercentiles(b, latencies)
}

func reportPercentiles(b *testing.B, perClient [][]time.Duration) {
	b.Helper()
	all := slices.Concat(perClient...)
	if len(all) == 0 {
		return
	}
	slices.Sort(all)
	at := func(q float64) float64 {
		return float64(all[min(len(all)-1, int(q*float64(len(all))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}

// BenchmarkHandler measures the server's own work per event, without the
// network and TLS: identification (cached), decoding, queueing, metrics.
// Its allocs/op are the allocations per event of the listener's code and
// the router; net/http's connection handling adds its own.
func BenchmarkHandler(b *testing.B) {
	for _, mode := range []listener.Mode{listener.ModeDirect, listener.ModeGateway} {
		b.Run(string(mode), func(b *testing.B) {
			handler, r := handlerFixture(b, mode)
			payloads := bodies()
			w := &discardWriter{header: http.Header{}}
			body := &reusableBody{}
			r.Body = body
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				// The handler does not change the request, so one serves all.
				body.Reset(payloads[i%len(payloads)])
				clear(w.header)
				handler.ServeHTTP(w, r)
				if w.code != http.StatusAccepted {
					b.Fatalf("answer %d", w.code)
				}
			}
		})
	}
}

// handlerFixture returns the handler of a server with a consumer, and a
// request that looks as it comes from a verified runtime.
func handlerFixture(b *testing.B, mode listener.Mode) (http.Handler, *http.Request) {
	b.Helper()
	ca := testpki.NewCA(b, "kcp-ca")
	leaf := ca.Client("rt-1")
	cfg := listener.Config{
		Mode: mode, Managers: []string{manager}, ClientCAs: ca.Bundle(), KeyPair: ca.Server().KeyPair(b),
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
		Registerer:     prometheus.NewRegistry(), Log: logr.Discard(), QueueCapacity: 1 << 16,
	}
	srv, err := listener.New(cfg)
	require.NoError(b, err)
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	go func() { _ = srv.Consume(ctx, manager, func(event.Event) {}) }()
	for !srv.HasConsumer(manager) {
		time.Sleep(time.Millisecond)
	}
	r, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "/v2/klm/event", nil)
	require.NoError(b, err)
	r.RemoteAddr = "10.0.0.1:4000"
	if mode == listener.ModeDirect {
		r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf.Cert}}
	} else {
		r.Header.Set("X-Forwarded-Client-Cert", testpki.Element(leaf.Cert))
	}
	return srv.Handler(), r
}

type discardWriter struct {
	header http.Header
	code   int
}

func (w *discardWriter) Header() http.Header         { return w.header }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(code int)        { w.code = code }

type reusableBody struct{ bytes.Reader }

func (b *reusableBody) Close() error { return nil }
