package listener_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/certs/pkitest"
	"github.com/lifecycle-manager/listener"
	"github.com/lifecycle-manager/listener/event"
)

const (
	kymaBody = `{"watched":{"Namespace":"kyma-system","Name":"default"},` +
		`"watchedGvk":{"group":"operator.kyma-project.io","version":"v1beta2","kind":"Kyma"}}`
	manager = "klm"
)

// eventBody is a valid body for an object name.
func eventBody(name string) string {
	return strings.Replace(kymaBody, `"default"`, `"`+name+`"`, 1)
}

// pki is the certificate material of one test: a CA, the listener's server
// certificate and a registry for the metrics.
type fixture struct {
	ca     *pkitest.CA
	server pkitest.Leaf
	reg    *prometheus.Registry
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ca := pkitest.NewCA(t, "kcp-ca")
	return &fixture{ca: ca, server: ca.Server(), reg: prometheus.NewRegistry()}
}

// directConfig is a ModeDirect config with the fixture's material.
func (f *fixture) directConfig(t *testing.T) listener.Config {
	t.Helper()
	return listener.Config{
		Managers:   []string{manager, "other"},
		KeyPair:    f.server.KeyPair(t),
		ClientCAs:  f.ca.Bundle(),
		Registerer: f.reg,
		Log:        testr.NewWithOptions(t, testr.Options{Verbosity: 1}),
	}
}

// running is a started server.
type running struct {
	srv  *listener.Server
	addr string
	stop context.CancelFunc
	done chan struct{} // closed when Serve returned, with its result in err
	err  error
}

// start serves cfg on a loopback port until the test ends.
func start(t *testing.T, cfg listener.Config) *running {
	t.Helper()
	srv, err := listener.New(cfg)
	require.NoError(t, err)
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	r := &running{srv: srv, addr: ln.Addr().String(), stop: cancel, done: make(chan struct{})}
	go func() {
		r.err = srv.Serve(ctx, ln)
		close(r.done)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(30 * time.Second):
			t.Error("the server did not stop")
		}
	})
	return r
}

// collector gathers the events of one manager.
type collector struct {
	mu     sync.Mutex
	events []event.Event
}

// consume attaches a collector to the manager and waits until it is attached.
func consume(t *testing.T, srv *listener.Server) *collector {
	t.Helper()
	c := &collector{}
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	done := make(chan error, 1)
	go func() {
		done <- srv.Consume(ctx, manager, func(ev event.Event) {
			c.mu.Lock()
			c.events = append(c.events, ev)
			c.mu.Unlock()
		})
	}()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done)
	})
	require.Eventually(t, func() bool { return srv.HasConsumer(manager) }, 5*time.Second, time.Millisecond)
	return c
}

func (c *collector) all() []event.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]event.Event(nil), c.events...)
}

// mtlsClient is an HTTP/1.1 client presenting leaf and trusting ca.
func mtlsClient(t testing.TB, ca *pkitest.CA, leaf *pkitest.Leaf) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(ca.CA.Cert)
	cfg := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	if leaf != nil {
		cfg.Certificates = []tls.Certificate{leaf.TLSCertificate(t)}
	}
	tr := &http.Transport{TLSClientConfig: cfg}
	// Before the server stops (cleanups run last first): a connection that
	// never carried a request holds up http.Server.Shutdown for 5 s.
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// answer is what a request got back.
type answer struct {
	code   int
	header http.Header
	body   string
}

// do sends a request; body may be nil, a string or an io.Reader (sent
// without Content-Length).
func do(t *testing.T, c *http.Client, method, url string, body any, header http.Header) (answer, error) {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case string:
		r = strings.NewReader(b)
	case io.Reader:
		r = b
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, r)
	require.NoError(t, err)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return answer{code: resp.StatusCode, header: resp.Header, body: string(data)}, err
}

// post sends an event and requires an answer.
func post(t *testing.T, c *http.Client, url, body string) answer {
	t.Helper()
	a, err := do(t, c, http.MethodPost, url, body, nil)
	require.NoError(t, err)
	return a
}

// metric returns the value of a counter or gauge with the given labels, 0
// when it does not exist.
func metric(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if matches(m, labels) {
				switch {
				case m.GetCounter() != nil:
					return m.GetCounter().GetValue()
				case m.GetGauge() != nil:
					return m.GetGauge().GetValue()
				case m.GetHistogram() != nil:
					return float64(m.GetHistogram().GetSampleCount())
				}
			}
		}
	}
	return 0
}

func matches(m *dto.Metric, labels map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := labels[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(labels)
}

// newBenchServer creates a server and a loopback listener for it.
func newBenchServer(b *testing.B, cfg listener.Config) (*listener.Server, net.Listener) {
	b.Helper()
	srv, err := listener.New(cfg)
	require.NoError(b, err)
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	require.NoError(b, err)
	return srv, ln
}
