package forward

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	"github.com/lifecycle-manager/skr-agent/internal/event"
	"github.com/lifecycle-manager/skr-agent/internal/kcp"
	"github.com/lifecycle-manager/skr-agent/internal/metrics"
	"github.com/lifecycle-manager/skr-agent/internal/queue"
)

// Sender delivers one event; kcp.Client is the real one.
type Sender interface {
	Send(ctx context.Context, ev event.Event) error
}

// Options configure a Forwarder.
type Options struct {
	Workers int
	Backoff Backoff
	// Resync is the key the queue stands in for dropped changes.
	Resync  event.Key
	Metrics *metrics.Metrics
	Log     logr.Logger
}

// Forwarder moves events from the queue to the KCP.
type Forwarder struct {
	queue *queue.Queue
	send  Sender
	opts  Options

	// failures counts consecutive retryable failures; any answer from the KCP ends the streak.
	failures atomic.Int64
	// overflowed is set from an overflow (or Resync) until the resync is delivered.
	overflowed atomic.Bool
	// starting is set by ResyncAtStart until the resync is delivered.
	starting atomic.Bool

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New returns a Forwarder; Start starts it.
func New(q *queue.Queue, s Sender, o Options) *Forwarder {
	if o.Workers < 1 {
		o.Workers = 1
	}
	return &Forwarder{queue: q, send: s, opts: o}
}

// Enqueue queues the key's change; version is the object's resourceVersion
// before it, "" when unknown. It never blocks: it is called from the
// admission handler.
func (f *Forwarder) Enqueue(k event.Key, version string) {
	switch f.queue.Add(k, version) {
	case queue.Added:
	case queue.Coalesced:
		f.opts.Metrics.EventsCoalesced.Inc()
	case queue.Overflowed:
		f.opts.Metrics.EventsFailed.WithLabelValues(metrics.ReasonOverflow).Inc()
		if f.overflowed.CompareAndSwap(false, true) {
			f.opts.Log.Error(errors.New("event queue is full"),
				"dropping changes until the queue drains; a resync of the runtime's Kyma is queued to cover them",
				"resync", f.opts.Resync.String())
		}
	}
}

// Resync queues the resync event for changes the agent could not queue
// itself, e.g. reviews the webhook turned away while the API server let
// their writes through: once the KCP takes it, it reconciles the whole
// runtime. It never blocks; the caller counts and logs the cause.
func (f *Forwarder) Resync() {
	f.queue.Resync()
	f.overflowed.Store(true)
}

// ResyncAtStart queues the resync event ahead of everything, for the
// changes no agent process has queued: those made while no agent ran, and
// those a previous process still held when it was killed (the queue lives
// in memory only). It is delivered as soon as the KCP takes events, like
// any other. Call it before Start.
func (f *Forwarder) ResyncAtStart() {
	f.starting.Store(true)
	f.queue.Resync()
}

// Start starts the workers.
func (f *Forwarder) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	for range f.opts.Workers {
		f.wg.Go(func() {
			for {
				it, ok := f.queue.Get(ctx)
				if !ok {
					return
				}
				f.deliver(ctx, it)
			}
		})
	}
}

// Shutdown stops taking new work once the queue is empty and waits for the
// workers until ctx ends; then it stops them. It returns the number of
// events that were left undelivered.
func (f *Forwarder) Shutdown(ctx context.Context) int {
	f.queue.Close()
	done := make(chan struct{})
	go func() {
		f.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		f.cancel()
		<-done
	}
	f.cancel()
	left := f.queue.Len()
	if left > 0 {
		f.opts.Metrics.EventsFailed.WithLabelValues(metrics.ReasonShutdown).Add(float64(left))
		f.opts.Log.Error(errors.New("drain time ran out"), "events left undelivered at shutdown", "events", left)
	}
	return left
}

func (f *Forwarder) deliver(ctx context.Context, it queue.Item) {
	err := f.send.Send(ctx, event.Event{Key: it.Key, OldResourceVersion: it.OldResourceVersion})
	switch {
	case err == nil:
		f.delivered(it)
		return
	case ctx.Err() != nil:
		// Stopped while sending: the event stays queued and counts as left.
		f.queue.Retry(it)
		return
	}
	se, isStatus := kcp.AsStatusError(err)
	if isStatus && !se.Retryable() {
		f.failures.Store(0)
		f.queue.Done(it)
		f.opts.Metrics.EventsFailed.WithLabelValues(metrics.ReasonRejected).Inc()
		f.opts.Log.Error(err, "KCP rejected an event; not retrying", "key", it.Key.String())
		return
	}
	reason, retryAfter := metrics.ReasonTransport, time.Duration(0)
	if isStatus {
		reason, retryAfter = metrics.ReasonServerError, se.RetryAfter
		switch se.Code {
		case http.StatusTooManyRequests:
			reason = metrics.ReasonThrottled
		case http.StatusUnauthorized:
			reason = metrics.ReasonUnauthorized
		}
	}
	n := f.failures.Add(1)
	pause := f.opts.Backoff.Pause(int(n), retryAfter)
	f.queue.Pause(time.Now().Add(pause))
	f.queue.Retry(it)
	f.opts.Metrics.EventsFailed.WithLabelValues(reason).Inc()
	f.opts.Metrics.EventsRetried.Inc()
	// Log the start of an outage, then less and less often while it lasts.
	if n&(n-1) == 0 {
		f.opts.Log.Error(err, "delivering events to the KCP failed; retrying", "consecutiveFailures", n,
			"pause", pause.String(), "queued", f.queue.Len())
	}
}

func (f *Forwarder) delivered(it queue.Item) {
	if n := f.failures.Swap(0); n > 0 {
		f.opts.Log.Info("KCP reachable again", "afterFailures", n, "queued", f.queue.Len())
	}
	f.queue.Done(it)
	m := f.opts.Metrics
	m.EventsForwarded.Inc()
	m.DeliveryDuration.Observe(time.Since(it.Since).Seconds())
	m.LastDelivery.SetToCurrentTime()
	if it.Key == f.opts.Resync {
		f.resyncDelivered()
	}
	if log := f.opts.Log.V(1); log.Enabled() {
		log.Info("event delivered", "key", it.Key.String(), "attempts", it.Attempts+1)
	}
}

// resyncDelivered reports the delivered resync for what it stood for.
func (f *Forwarder) resyncDelivered() {
	if f.overflowed.CompareAndSwap(true, false) {
		f.opts.Metrics.Resyncs.Inc()
		f.opts.Log.Info("KCP accepted the resync that covers the changes dropped while the queue was full")
	}
	if f.starting.CompareAndSwap(true, false) {
		f.opts.Log.Info("KCP accepted the resync at start: it reconciles the runtime's Kyma, " +
			"including changes made while no agent ran or queued in an earlier process")
	}
}
