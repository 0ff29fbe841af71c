package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lifecycle-manager/certs/tlsreload"
	"github.com/lifecycle-manager/skr-agent/internal/admission"
	"github.com/lifecycle-manager/skr-agent/internal/config"
	"github.com/lifecycle-manager/skr-agent/internal/event"
	"github.com/lifecycle-manager/skr-agent/internal/forward"
	"github.com/lifecycle-manager/skr-agent/internal/kcp"
	"github.com/lifecycle-manager/skr-agent/internal/metrics"
	"github.com/lifecycle-manager/skr-agent/internal/queue"
	"github.com/lifecycle-manager/skr-agent/internal/server"
)

// The runtime's Kyma that a resync names: the KCP reconciles the whole
// runtime for it.
const (
	resyncNamespace = "kyma-system"
	resyncName      = "default"
)

// serverShutdownTimeout bounds waiting for webhook calls in progress.
const serverShutdownTimeout = 5 * time.Second

// Agent is an assembled agent, listening but not yet serving.
type Agent struct {
	cfg       config.Config
	log       logr.Logger
	files     *tlsreload.Watcher
	forwarder *forward.Forwarder
	health    *server.Health
	webhook   *server.Server
	ops       *server.Server
}

// New loads the TLS files, binds both ports and wires the parts; metrics
// are registered on reg and served from g.
func New(ctx context.Context, cfg config.Config, reg prometheus.Registerer, g prometheus.Gatherer, log logr.Logger) (*Agent, error) {
	resync := event.NewKey(cfg.ResyncManager, event.KymaGVK, resyncNamespace, resyncName)
	q, err := queue.New(cfg.QueueSize, resync)
	if err != nil {
		return nil, err
	}
	m, err := metrics.New(reg, q.Len)
	if err != nil {
		return nil, err
	}
	// The hooks run from files.Start only, once client is set.
	var client *kcp.Client
	files, err := tlsreload.WatchFiles(tlsreload.Files{CertFile: cfg.TLSCertFile, KeyFile: cfg.TLSKeyFile, CAFile: cfg.CACertFile},
		cfg.ReloadInterval, tlsreload.Hooks{
			Reloaded: func(what string) {
				m.CertificateReloads.WithLabelValues(what, "success").Inc()
				client.Reconnect()
			},
			Failed: func(what string, _ error) { m.CertificateReloads.WithLabelValues(what, "failure").Inc() },
		}, log.WithName("tls"))
	if err != nil {
		return nil, fmt.Errorf("loading TLS files: %w", err)
	}
	client = kcp.NewClient(kcp.Options{
		BaseURL: cfg.BaseURL(), Contract: cfg.KCPContract, Timeout: cfg.RequestTimeout, Conns: cfg.Workers,
		// TLS sends no SNI for an IP address: the name to verify is explicit.
		TLS: tlsreload.ClientConfig(files.KeyPair, files.Bundle, cfg.KCPServerName),
	})
	a := &Agent{
		cfg: cfg, log: log, files: files, health: &server.Health{},
		forwarder: forward.New(q, client, forward.Options{
			Workers: cfg.Workers, Backoff: forward.Backoff{Initial: cfg.BackoffInitial, Max: cfg.BackoffMax},
			Resync: resync, Metrics: m, Log: log.WithName("forward"),
		}),
	}
	webhookMux := http.NewServeMux()
	webhookMux.Handle(admission.Pattern, admission.NewHandler(a.forwarder, m, admission.Options{
		MaxBodyBytes: cfg.MaxReviewBytes, SendVersions: cfg.SendResourceVersions,
		MaxConcurrent: cfg.MaxConcurrentReviews, MaxBodyBytesInFlight: cfg.MaxReviewBytesInFlight, Wait: cfg.ReviewWait,
	}, log.WithName("webhook")))
	// The API server presents no client certificate: no client CAs.
	if a.webhook, err = server.Listen(ctx, cfg.WebhookAddr(), webhookMux, tlsreload.ServerConfig(files.KeyPair, nil),
		server.WebhookTimeouts, log); err != nil {
		return nil, err
	}
	if a.ops, err = server.Listen(ctx, cfg.MetricsAddr(), server.OpsHandler(g, a.health), nil, server.OpsTimeouts, log); err != nil {
		_ = a.webhook.Close()
		return nil, err
	}
	return a, nil
}

// WebhookAddr is where the webhook listens.
func (a *Agent) WebhookAddr() net.Addr { return a.webhook.Addr() }

// MetricsAddr is where /metrics, /healthz and /readyz listen.
func (a *Agent) MetricsAddr() net.Addr { return a.ops.Addr() }

// Run serves until ctx ends or a server fails, then shuts down in order.
func (a *Agent) Run(ctx context.Context) error {
	filesCtx, stopFiles := context.WithCancel(context.Background())
	defer stopFiles()
	go func() { _ = a.files.Start(filesCtx) }()
	// The queue of an earlier process, killed or drained out of time, is
	// lost, and nothing queued what changed while no agent ran: the KCP
	// reconciles the runtime's Kyma once this resync reaches it.
	a.forwarder.ResyncAtStart()
	a.forwarder.Start()
	failed := make(chan error, 2)
	for _, s := range []*server.Server{a.webhook, a.ops} {
		go func() {
			if err := s.Serve(); err != nil {
				failed <- err
			}
		}()
	}
	a.health.SetReady(true)
	a.log.Info("serving", "webhook", a.WebhookAddr().String(), "metrics", a.MetricsAddr().String(),
		"kcp", a.cfg.BaseURL(), "contract", a.cfg.KCPContract)

	var serveErr error
	select {
	case <-ctx.Done():
		a.log.Info("shutting down")
	case serveErr = <-failed:
		a.log.Error(serveErr, "a server failed; shutting down")
	}
	return errors.Join(serveErr, a.shutdown(serveErr == nil))
}

func (a *Agent) shutdown(graceful bool) error {
	a.health.SetReady(false)
	if graceful && a.cfg.ShutdownDelay > 0 {
		// Endpoints follow readiness with a delay; keep answering meanwhile.
		time.Sleep(a.cfg.ShutdownDelay)
	}
	ctx, cancel := context.WithTimeout(context.Background(), serverShutdownTimeout)
	errWebhook := a.webhook.Shutdown(ctx)
	cancel()

	drainCtx, cancelDrain := context.WithTimeout(context.Background(), a.cfg.DrainTimeout)
	left := a.forwarder.Shutdown(drainCtx)
	cancelDrain()

	ctx, cancel = context.WithTimeout(context.Background(), serverShutdownTimeout)
	errOps := a.ops.Shutdown(ctx)
	cancel()
	a.log.Info("stopped", "eventsLeft", left)
	return errors.Join(errWebhook, errOps)
}
