package listener

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	"github.com/lifecycle-manager/certs/tlsreload"
	"github.com/lifecycle-manager/listener/event"
	"github.com/lifecycle-manager/listener/internal/identity"
	"github.com/lifecycle-manager/listener/internal/metrics"
	"github.com/lifecycle-manager/listener/internal/queue"
	"github.com/lifecycle-manager/listener/internal/ratelimit"
)

// Server is the event listener. Create it with New, run it with Start (as
// a controller-runtime manager.Runnable) or Serve, and attach one consumer
// per manager with Consume (package eventsource does that for
// controller-runtime).
type Server struct {
	cfg        Config
	log        logr.Logger
	metrics    *metrics.Metrics
	queues     map[string]*queue.Queue
	limiter    *ratelimit.Limiter // nil: no limit per runtime
	identify   identity.Identifier
	tlsConfig  *tls.Config
	watcher    *tlsreload.Watcher
	handler    http.Handler
	retryAfter string

	started  atomic.Bool
	draining atomic.Bool
	addr     atomic.Pointer[net.Addr]
}

// New checks cfg, loads the certificate files it names and returns a
// Server that is not running yet.
func New(cfg Config) (*Server, error) {
	cfg.applyDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("listener config: %w", err)
	}
	m, err := metrics.New(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg: cfg, log: cfg.Log, metrics: m, queues: make(map[string]*queue.Queue, len(cfg.Managers)),
		limiter:    ratelimit.New(cfg.RuntimeEventRate, cfg.RuntimeEventBurst, cfg.Now),
		retryAfter: strconv.Itoa(int((cfg.RetryAfter + time.Second - 1) / time.Second)),
	}
	for _, name := range cfg.Managers {
		q := queue.New(cfg.QueueCapacity)
		s.queues[name] = q
		if err := m.AddManager(name, q.Len); err != nil {
			return nil, err
		}
	}
	keyPair, bundle, err := s.loadMaterial()
	if err != nil {
		return nil, err
	}
	verifier := identity.NewVerifier(bundle, cfg.Now, cfg.VerificationCacheSize).WithDenyList(cfg.DeniedCertificates)
	switch cfg.Mode {
	case ModeDirect:
		s.identify = identity.NewDirect(verifier)
		s.tlsConfig = tlsreload.ServerConfig(keyPair, bundle)
		identity.ObserveHandshakes(s.tlsConfig, s.countFailure)
	case ModeGateway:
		if s.identify, err = identity.NewGateway(verifier, cfg.TrustedProxies, cfg.XFCCElement); err != nil {
			return nil, fmt.Errorf("listener config: %w", err)
		}
		if keyPair != nil {
			s.tlsConfig = tlsreload.ServerConfig(keyPair, nil)
		}
	}
	s.handler = s.routes()
	return s, nil
}

// loadMaterial returns the serving certificate (nil when there is none)
// and the CA bundle, from the embedder or from files.
func (s *Server) loadMaterial() (*tlsreload.KeyPair, *tlsreload.Bundle, error) {
	keyPair, bundle := s.cfg.KeyPair, s.cfg.ClientCAs
	files := s.cfg.Files
	if files.CertFile == "" && files.KeyFile == "" && files.CAFile == "" {
		return keyPair, bundle, nil
	}
	hooks := tlsreload.Hooks{
		Reloaded: func(what string) { s.metrics.TLSReloads.WithLabelValues(what, "success").Inc() },
		Failed:   func(what string, _ error) { s.metrics.TLSReloads.WithLabelValues(what, "failure").Inc() },
	}
	w, err := tlsreload.WatchFiles(files, s.cfg.ReloadInterval, hooks, s.log.WithName("tls"))
	if err != nil {
		return nil, nil, fmt.Errorf("listener certificates: %w", err)
	}
	s.watcher = w
	if w.KeyPair != nil {
		keyPair = w.KeyPair
	}
	if w.Bundle != nil {
		bundle = w.Bundle
	}
	return keyPair, bundle, nil
}

func (s *Server) countFailure(reason string) {
	s.metrics.VerificationFailures.WithLabelValues(reason).Inc()
}

// Handler returns the HTTP handler of the listener's routes. Start and
// Serve use it with the listener's TLS setup; in ModeDirect the handler
// relies on that setup having verified the client certificate's chain.
func (s *Server) Handler() http.Handler { return s.handler }

// Managers returns the registered managers.
func (s *Server) Managers() []string { return append([]string(nil), s.cfg.Managers...) }

// NeedLeaderElection is false: the listener serves on every replica.
//
// Why: the port then answers on every replica (health checks, TLS reloads
// and draining work the same everywhere), and no event is ever accepted
// that nobody delivers, because events for a manager without an attached
// consumer are answered 503 with Retry-After. On a replica that is not the
// leader the controllers do not run, so nothing consumes there; the
// embedder keeps such replicas out of the path of events (the operator's
// leader names only itself in its Service's EndpointSlice, see HasConsumer).
// Serving only on the leader would instead refuse connections on the
// other replicas, which agents and gateways see as errors all the same.
func (s *Server) NeedLeaderElection() bool { return false }

// Consume attaches deliver as the only consumer of manager's events and
// calls it with each event until ctx ends; deliver runs on the caller's
// goroutine, one event at a time, and should be quick: while it runs,
// further events wait (coalesced) in the queue. It fails at once for an
// unknown manager or when the manager has a consumer already.
func (s *Server) Consume(ctx context.Context, manager string, deliver func(event.Event)) error {
	q, ok := s.queues[manager]
	if !ok {
		return fmt.Errorf("listener: unknown manager %q", manager)
	}
	delivered := s.metrics.Delivered.WithLabelValues(manager)
	err := q.Consume(ctx, func(batch []event.Event) {
		for i := range batch {
			deliver(batch[i])
		}
		delivered.Add(float64(len(batch)))
	})
	if err != nil {
		return fmt.Errorf("listener: manager %q: %w", manager, err)
	}
	return nil
}

// CanConsume fails when manager is not registered or has a consumer already.
func (s *Server) CanConsume(manager string) error {
	q, ok := s.queues[manager]
	switch {
	case !ok:
		return fmt.Errorf("listener: unknown manager %q", manager)
	case q.Consuming():
		return fmt.Errorf("listener: manager %q: %w", manager, queue.ErrConsumerAttached)
	}
	return nil
}

// Addr returns the address the server listens on, nil before it serves.
func (s *Server) Addr() net.Addr {
	if a := s.addr.Load(); a != nil {
		return *a
	}
	return nil
}

// HasConsumer reports whether a consumer is attached to manager, e.g. for
// a readiness check of the embedder.
func (s *Server) HasConsumer(manager string) bool {
	q, ok := s.queues[manager]
	return ok && q.Consuming()
}

// Start listens on Config.Addr and serves until ctx ends; see Serve.
func (s *Server) Start(ctx context.Context) error {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listener: %w", err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves on ln (TLS is added here) until ctx ends, then shuts down
// gracefully: new event requests are answered 503 (for DrainDelay with the
// port still open), the port closes, and requests in flight get up to
// ShutdownTimeout to finish. It also keeps Config.Files reloaded. A Server
// serves once.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if !s.started.CompareAndSwap(false, true) {
		_ = ln.Close()
		return errors.New("listener: the server was started before")
	}
	srv := &http.Server{
		Handler:           s.handler,
		TLSConfig:         s.tlsConfig,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      s.cfg.WriteTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    DefaultMaxHeaderBytes,
		// Failed handshakes are counted in metrics; their log lines are detail.
		ErrorLog: log.New(logWriter{s.log.V(1)}, "", 0),
	}
	if s.watcher != nil {
		watchCtx, stopWatch := context.WithCancel(ctx)
		defer stopWatch()
		go func() { _ = s.watcher.Start(watchCtx) }()
	}
	addr := ln.Addr()
	s.addr.Store(&addr)
	served := make(chan error, 1)
	go func() {
		if s.tlsConfig != nil {
			served <- srv.ServeTLS(ln, "", "")
		} else {
			served <- srv.Serve(ln)
		}
	}()
	s.log.Info("listening for events", "address", ln.Addr().String(), "mode", s.cfg.Mode, "managers", s.cfg.Managers)
	select {
	case err := <-served:
		return fmt.Errorf("listener: serving on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	return s.shutdown(context.WithoutCancel(ctx), srv, served)
}

func (s *Server) shutdown(ctx context.Context, srv *http.Server, served <-chan error) error {
	s.draining.Store(true)
	s.log.Info("stopping: answering 503 to new events", "drainDelay", s.cfg.DrainDelay)
	if s.cfg.DrainDelay > 0 {
		t := time.NewTimer(s.cfg.DrainDelay)
		<-t.C
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		_ = srv.Close()
		s.logServeEnd(<-served)
		return fmt.Errorf("listener: requests in flight did not finish within %s: %w", s.cfg.ShutdownTimeout, err)
	}
	s.logServeEnd(<-served)
	s.log.Info("stopped")
	return nil
}

// logServeEnd logs how serving ended, unless it ended by the shutdown.
func (s *Server) logServeEnd(err error) {
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		s.log.Error(err, "serving ended")
	}
}

// logWriter feeds http.Server's error log into logr.
type logWriter struct{ log logr.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	msg := string(p)
	if n := len(msg); n > 0 && msg[n-1] == '\n' {
		msg = msg[:n-1]
	}
	w.log.Info(msg)
	return len(p), nil
}
