package main_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/pkitest"
	"github.com/lifecycle-manager/skr-agent/internal/kcptest"
)

// These benchmarks measure the real binary, built with go build and run as
// a child process, the way it runs in a pod: the API server's view of
// admission latency, the delivery rate to a KCP stand-in (an in-process
// mTLS server), and resident memory read from /proc/<pid>/status.

// process is a running agent binary.
type process struct {
	cmd        *exec.Cmd
	webhookURL string
	metricsURL string
	client     *http.Client
}

type kcpMode string

const (
	kcpHealthy kcpMode = "healthy"
	kcpSlow    kcpMode = "slow"
	kcpDown    kcpMode = "down"
)

// startAgent starts the binary against a KCP stand-in in the given mode.
func startAgent(tb testing.TB, mode kcpMode, args ...string) (*process, *kcptest.Receiver) {
	tb.Helper()
	ca := pkitest.NewCA(tb, "kcp-ca")
	srvCert, srvKey := ca.Issue("skr-events.kcp", pki.UsageServer)
	receiver := kcptest.Start(tb, srvCert, srvKey, ca.PEM())
	receiver.CountOnly()
	switch mode {
	case kcpSlow:
		receiver.SetAnswer(func(*http.Request) kcptest.Answer {
			return kcptest.Answer{Status: http.StatusOK, Delay: time.Second}
		})
	case kcpDown:
		receiver.Stop()
	case kcpHealthy:
	}
	cert, key := ca.Issue("runtime-bench", pki.UsageClient|pki.UsageServer)
	files := pkitest.WriteFiles(tb, tb.TempDir(), cert, key, ca.PEM())
	webhookPort, metricsPort := freePort(tb), freePort(tb)
	ctx, stop := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, agentBinary(tb), append([]string{"--bind-address=127.0.0.1", "--kcp-server-name=127.0.0.1",
		"--shutdown-delay=0s", "--drain-timeout=1s", "--log-level=error"}, args...)...)
	cmd.Env = append(os.Environ(),
		"KCP_ADDR="+receiver.Addr, "KCP_CONTRACT=v2", "CA_CERT="+files.CA, "TLS_CERT="+files.Cert, "TLS_KEY="+files.Key,
		"WEBHOOK_PORT="+strconv.Itoa(webhookPort), "METRICS_PORT="+strconv.Itoa(metricsPort))
	cmd.Stderr = agentLog(tb)
	// Stopped as Kubernetes stops it: SIGTERM, then SIGKILL after a grace period.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	stopWithParent(cmd)
	if err := cmd.Start(); err != nil {
		stop()
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		stop()
		_ = cmd.Wait()
	})
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.PEM())
	p := &process{
		cmd:        cmd,
		webhookURL: fmt.Sprintf("https://127.0.0.1:%d/validate/lifecycle-manager", webhookPort),
		metricsURL: fmt.Sprintf("http://127.0.0.1:%d", metricsPort),
		// Like the API server: one HTTP/2 client that verifies the agent with the caBundle.
		client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}, ForceAttemptHTTP2: true,
			MaxIdleConnsPerHost: 16,
		}},
	}
	p.waitReady(tb)
	return p, receiver
}

func (p *process) waitReady(tb testing.TB) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if code, _ := p.get(p.metricsURL + "/readyz"); code == http.StatusOK {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	tb.Fatal("the agent did not become ready")
}

func (p *process) get(url string) (int, string) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		return 0, ""
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, ""
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// metric reads one unlabelled sample from /metrics.
func (p *process) metric(tb testing.TB, name string) float64 {
	tb.Helper()
	v, ok := p.sample(name)
	if !ok {
		tb.Fatalf("metric %s not found", name)
	}
	return v
}

// sample reads one sample from /metrics, named with its labels as
// exposed (sorted), e.g. x_total{a="1",b="2"}; false when there is none.
func (p *process) sample(name string) (float64, bool) {
	_, body := p.get(p.metricsURL + "/metrics")
	s := bufio.NewScanner(strings.NewReader(body))
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

// histogramQuantileBound is the upper bound of the histogram bucket that
// holds quantile q: the agent's own view of its handling time, without
// TLS, HTTP and scheduling.
func (p *process) histogramQuantileBound(b *testing.B, name string, q float64) float64 {
	b.Helper()
	_, body := p.get(p.metricsURL + "/metrics")
	type bucket struct{ le, count float64 }
	var buckets []bucket
	total := 0.0
	s := bufio.NewScanner(strings.NewReader(body))
	for s.Scan() {
		line := s.Text()
		if rest, ok := strings.CutPrefix(line, name+`_bucket{le="`); ok {
			le, count, _ := strings.Cut(rest, `"} `)
			l, _ := strconv.ParseFloat(le, 64)
			c, _ := strconv.ParseFloat(count, 64)
			buckets = append(buckets, bucket{l, c})
		}
		if v, ok := strings.CutPrefix(line, name+"_count "); ok {
			total, _ = strconv.ParseFloat(v, 64)
		}
	}
	for _, bk := range buckets {
		if bk.count >= q*total {
			return bk.le
		}
	}
	b.Fatalf("histogram %s not found", name)
	return 0
}

// rssKiB reads the resident set size of the process.
func (p *process) rssKiB(b *testing.B, field string) float64 {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kib, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			if err != nil {
				b.Fatal(err)
			}
			return kib
		}
	}
	b.Fatalf("no %s in /proc status", field)
	return 0
}

// namePlaceholder is replaced by the object's name in reviewTemplate.
const namePlaceholder = "NAME-PLACEHOLDER"

// reviewTemplate is a realistic AdmissionReview: an UPDATE of a Kyma with
// ten modules and a status, whose spec changed (about 2.5 KB).
var reviewTemplate = sync.OnceValue(func() []byte {
	modules := make([]map[string]any, 10)
	for i := range modules {
		modules[i] = map[string]any{"name": fmt.Sprintf("module-%d", i), "channel": "regular", "customResourcePolicy": "CreateAndDelete"}
	}
	kyma := func(ch string) map[string]any {
		return map[string]any{
			"apiVersion": "operator.kyma-project.io/v1beta2", "kind": "Kyma",
			"metadata": map[string]any{"name": namePlaceholder, "namespace": "kyma-system", "resourceVersion": "12345",
				"labels": map[string]string{"operator.kyma-project.io/watched-by": "lifecycle-manager"}},
			"spec": map[string]any{"channel": ch, "modules": modules},
			"status": map[string]any{"state": "Ready",
				"lastOperation": map[string]any{"operation": "ok", "lastUpdateTime": "2026-01-01T00:00:00Z"}},
		}
	}
	body, _ := json.Marshal(map[string]any{
		"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
		"request": map[string]any{
			"uid": "7b8c9d", "kind": map[string]string{"group": "operator.kyma-project.io", "version": "v1beta2", "kind": "Kyma"},
			"resource": map[string]string{"group": "operator.kyma-project.io", "version": "v1beta2", "resource": "kymas"},
			"name":     namePlaceholder, "namespace": "kyma-system", "operation": "UPDATE",
			"userInfo": map[string]any{"username": "admin"},
			"object":   kyma("fast"), "oldObject": kyma("regular"),
		},
	})
	return body
})

// review is the template for the named Kyma.
func review(name string) []byte {
	return bytes.ReplaceAll(reviewTemplate(), []byte(namePlaceholder), []byte(name))
}

func (p *process) admit(tb testing.TB, body []byte) {
	if code, out := p.review(tb, body); code != http.StatusOK || !bytes.Contains(out, []byte(`"allowed":true`)) {
		tb.Fatalf("answer %d: %s", code, out)
	}
}

// review posts an AdmissionReview as the API server does and returns the answer.
func (p *process) review(tb testing.TB, body []byte) (int, []byte) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, p.webhookURL, bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// BenchmarkAdmissionLatency is the time the API server waits for the
// webhook, one review after the other, with the KCP healthy, answering
// after 1 s, and down. It reports p50 and p99 in microseconds.
func BenchmarkAdmissionLatency(b *testing.B) {
	for _, mode := range []kcpMode{kcpHealthy, kcpSlow, kcpDown} {
		b.Run("kcp="+string(mode), func(b *testing.B) {
			p, _ := startAgent(b, mode)
			const objects = 1000
			bodies := make([][]byte, objects)
			for i := range bodies {
				bodies[i] = review(fmt.Sprintf("kyma-%d", i))
			}
			for i := range 200 { // warm up the connection and the agent
				p.admit(b, bodies[i%objects])
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				p.admit(b, bodies[i%objects])
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(p.metric(b, "skr_agent_queue_depth"), "queued")
			b.ReportMetric(p.histogramQuantileBound(b, "skr_agent_admission_duration_seconds", 0.99)*1e6, "handler-p99-max-µs")
		})
	}
}

// BenchmarkDelivery is the rate at which changes of distinct objects get
// from admission to the KCP: b.N reviews, posted by 8 clients at once,
// until the KCP stand-in has counted b.N events.
func BenchmarkDelivery(b *testing.B) {
	p, receiver := startAgent(b, kcpHealthy, "--workers=4")
	b.ResetTimer()
	start := time.Now()
	post(b, p, b.N, 8)
	for receiver.Count() < int64(b.N) {
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
}

// post sends n reviews of n distinct objects from the given number of clients.
func post(b *testing.B, p *process, n, clients int) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				p.admit(b, review(fmt.Sprintf("kyma-%d", i)))
			}
		})
	}
	wg.Wait()
}

// BenchmarkResidentMemory reports the agent's resident memory (VmRSS)
// idle, and with 100,000 distinct objects queued while the KCP is down,
// plus the peak (VmHWM) and the anonymous part when idle. One run takes
// long enough that the framework does not repeat it.
func BenchmarkResidentMemory(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc")
	}
	p, _ := startAgent(b, kcpDown)
	time.Sleep(2 * time.Second) // let start-up garbage go and the first retries happen
	idle, idleAnon := p.rssKiB(b, "VmRSS"), p.rssKiB(b, "RssAnon")
	const queued = 100000
	post(b, p, queued, 8)
	depth := p.metric(b, "skr_agent_queue_depth")
	if depth < queued {
		b.Fatalf("queue depth %v, want %d", depth, queued)
	}
	time.Sleep(time.Second)
	b.ReportMetric(idle/1024, "idle-RSS-MiB")
	b.ReportMetric(idleAnon/1024, "idle-anon-MiB") // heap and stacks; the rest is the mapped binary
	b.ReportMetric(p.rssKiB(b, "VmRSS")/1024, "queued-RSS-MiB")
	b.ReportMetric(p.rssKiB(b, "VmHWM")/1024, "peak-RSS-MiB")
	b.ReportMetric(depth, "queued")
}

// agentLog is where the agent's log goes: a file that lives as long as the benchmark.
func agentLog(tb testing.TB) *os.File {
	tb.Helper()
	f, err := os.Create(filepath.Join(tb.TempDir(), "agent.log"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = f.Close() })
	return f
}
