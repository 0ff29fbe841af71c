package forward_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/pkitest"
	"github.com/lifecycle-manager/certs/tlsreload"
	"github.com/lifecycle-manager/skr-agent/internal/event"
	"github.com/lifecycle-manager/skr-agent/internal/forward"
	"github.com/lifecycle-manager/skr-agent/internal/kcp"
	"github.com/lifecycle-manager/skr-agent/internal/kcptest"
	"github.com/lifecycle-manager/skr-agent/internal/metrics"
	"github.com/lifecycle-manager/skr-agent/internal/queue"
)

// BenchmarkForward is the delivery rate of queued events of distinct
// objects over one mTLS HTTP/2 connection, by number of workers.
func BenchmarkForward(b *testing.B) {
	for _, workers := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			ca := pkitest.NewCA(b, "kcp-ca")
			srvCert, srvKey := ca.Issue("listener", pki.UsageServer)
			r := kcptest.Start(b, srvCert, srvKey, ca.PEM())
			r.CountOnly()
			cert, k := ca.Issue("runtime-1", pki.UsageClient)
			kp, _ := tlsreload.NewKeyPair(cert, k)
			roots, _ := tlsreload.NewBundle(ca.PEM())
			client := kcp.NewClient(kcp.Options{BaseURL: "https://" + r.Addr, Contract: "v2",
				TLS: tlsreload.ClientConfig(kp, roots, "127.0.0.1"), Timeout: 10 * time.Second, Conns: workers})
			q, _ := queue.New(b.N+1, resync)
			m, _ := metrics.New(prometheus.NewRegistry(), q.Len)
			f := forward.New(q, client, forward.Options{Workers: workers, Backoff: fast, Resync: resync, Metrics: m, Log: logr.Discard()})
			keys := make([]event.Key, b.N)
			for i := range keys {
				keys[i] = key(fmt.Sprintf("object-%d", i))
			}
			b.ResetTimer()
			start := time.Now()
			for _, k := range keys {
				f.Enqueue(k, "")
			}
			f.Start()
			for r.Count() < int64(b.N) {
				time.Sleep(100 * time.Microsecond)
			}
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
			b.Cleanup(func() { f.Shutdown(b.Context()) })
		})
	}
}
