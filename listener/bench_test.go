package listener_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/certs/pkitest"
	"github.com/lifecycle-manager/listener"
	"github.com/lifecycle-manager/listener/event"
	"github.com/lifecycle-manager/listener/internal/xfcctest"
)

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
				if w.code != http.StatusOK {
					b.Fatalf("answer %d", w.code)
				}
			}
		})
	}
}

// BenchmarkHandlerThrottled measures the answer to a runtime over its
// rate: identification (cached), the bucket, the 429; no body is read.
func BenchmarkHandlerThrottled(b *testing.B) {
	handler, r := handlerFixture(b, listener.ModeDirect, func(c *listener.Config) {
		c.RuntimeEventRate, c.RuntimeEventBurst = 1e-9, 1
	})
	w := &discardWriter{header: http.Header{}}
	body := &reusableBody{}
	r.Body = body
	payload := []byte(kymaBody)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		body.Reset(payload)
		clear(w.header)
		handler.ServeHTTP(w, r)
		if want := http.StatusTooManyRequests; i > 0 && w.code != want {
			b.Fatalf("answer %d, want %d", w.code, want)
		}
	}
}

// handlerFixture returns the handler of a server with a consumer, and a
// request that looks as it comes from a verified runtime.
func handlerFixture(b *testing.B, mode listener.Mode, changes ...func(*listener.Config)) (http.Handler, *http.Request) {
	b.Helper()
	ca := pkitest.NewCA(b, "kcp-ca")
	leaf := ca.Client("rt-1")
	cfg := listener.Config{
		Mode: mode, Managers: []string{manager}, ClientCAs: ca.Bundle(), KeyPair: ca.Server().KeyPair(b),
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
		Registerer:     prometheus.NewRegistry(), Log: logr.Discard(), QueueCapacity: 1 << 16,
		RuntimeEventRate: unlimitedRate, RuntimeEventBurst: unlimitedBurst,
	}
	for _, change := range changes {
		change(&cfg)
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
		r.Header.Set("X-Forwarded-Client-Cert", xfcctest.Element(leaf.Cert))
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
