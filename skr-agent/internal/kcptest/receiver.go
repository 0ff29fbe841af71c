package kcptest

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lifecycle-manager/certs/tlsreload"
	"github.com/lifecycle-manager/skr-agent/internal/event"
)

// Received is one event as the receiver saw it.
type Received struct {
	// CN and Serial identify the client certificate.
	CN     string
	Serial string
	Path   string
	Proto  string
	Body   event.Body
	// Raw is the body as sent.
	Raw string
}

// Answer is how the receiver answers a request.
type Answer struct {
	Status     int
	RetryAfter string
	Delay      time.Duration
}

// Receiver is a running stand-in listener.
type Receiver struct {
	// Addr is host:port, the same across Stop and Start.
	Addr string

	tb     testing.TB
	tlsCfg *tls.Config
	// conns counts accepted TCP connections, to observe reuse.
	conns atomic.Int64
	count atomic.Int64

	mu     sync.Mutex
	events []Received
	answer func(*http.Request) Answer
	srv    *http.Server
	// record false keeps only the count, for benchmarks.
	record bool
}

// Start starts a receiver with the server certificate and the client CA
// bundle; it is stopped when the test ends.
func Start(tb testing.TB, certPEM, keyPEM, clientCAPEM []byte) *Receiver {
	tb.Helper()
	kp, err := tlsreload.NewKeyPair(certPEM, keyPEM)
	if err != nil {
		tb.Fatal(err)
	}
	cas, err := tlsreload.NewBundle(clientCAPEM)
	if err != nil {
		tb.Fatal(err)
	}
	r := &Receiver{tb: tb, tlsCfg: tlsreload.ServerConfig(kp, cas), record: true}
	r.listen("127.0.0.1:0")
	tb.Cleanup(r.Stop)
	return r
}

// SetAnswer decides the answers from now on; nil answers 200 at once.
func (r *Receiver) SetAnswer(fn func(*http.Request) Answer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answer = fn
}

// CountOnly stops recording events; Count still counts them.
func (r *Receiver) CountOnly() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record = false
}

// Events returns the events accepted so far.
func (r *Receiver) Events() []Received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Received(nil), r.events...)
}

// Count is the number of events accepted so far.
func (r *Receiver) Count() int64 { return r.count.Load() }

// Conns is the number of connections accepted so far.
func (r *Receiver) Conns() int64 { return r.conns.Load() }

// Stop closes the listener and every connection: the KCP is down.
func (r *Receiver) Stop() {
	r.mu.Lock()
	srv := r.srv
	r.srv = nil
	r.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// Restart listens again on the same address.
func (r *Receiver) Restart() {
	r.tb.Helper()
	r.listen(r.Addr)
}

func (r *Receiver) listen(addr string) {
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", addr)
	if err != nil {
		r.tb.Fatalf("receiver listening on %s: %v", addr, err)
	}
	r.Addr = ln.Addr().String()
	srv := &http.Server{
		// A copy per server: net/http adds its protocols to the server's
		// config, which races with a server of an earlier Restart.
		Handler: http.HandlerFunc(r.serve), TLSConfig: r.tlsCfg.Clone(), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: log.New(io.Discard, "", 0), // refused handshakes are part of some tests
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				r.conns.Add(1)
			}
		},
	}
	r.mu.Lock()
	r.srv = srv
	r.mu.Unlock()
	go func() {
		if err := srv.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			r.tb.Errorf("receiver: %v", err)
		}
	}()
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	answerFn := r.answer
	r.mu.Unlock()
	a := Answer{Status: http.StatusOK}
	if answerFn != nil {
		a = answerFn(req)
	}
	if a.Delay > 0 {
		select {
		case <-time.After(a.Delay):
		case <-req.Context().Done():
			return
		}
	}
	raw, err := io.ReadAll(io.LimitReader(req.Body, 1<<16))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if a.RetryAfter != "" {
		w.Header().Set("Retry-After", a.RetryAfter)
	}
	if a.Status < 200 || a.Status > 299 {
		http.Error(w, "told to fail", a.Status)
		return
	}
	r.accept(req, raw)
	w.WriteHeader(a.Status)
}

func (r *Receiver) accept(req *http.Request, raw []byte) {
	r.count.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.record {
		return
	}
	got := Received{Path: req.URL.Path, Proto: req.Proto, Raw: string(raw)}
	if len(req.TLS.PeerCertificates) > 0 {
		got.CN = req.TLS.PeerCertificates[0].Subject.CommonName
		got.Serial = req.TLS.PeerCertificates[0].SerialNumber.String()
	}
	if err := json.Unmarshal(raw, &got.Body); err != nil {
		r.tb.Errorf("receiver: event body %q: %v", raw, err)
	}
	r.events = append(r.events, got)
}
