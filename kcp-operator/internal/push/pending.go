package push

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/lifecycle-manager/listener/eventsource"
)

// Pending is what one reconcile has to see: the waits it took. Its reads
// may run concurrently.
type Pending struct {
	owner *Waits
	req   types.NamespacedName
	mu    sync.Mutex
	waits map[Object]wait
	skip  bool
}

// Read calls read, which returns the resourceVersion of what it read of
// obj ("" when the object is gone), and, while that is older than the
// write a pushed event reported, reads again after a growing pause, a
// bounded number of times. read must reset what it reads into before
// reading: decoding into a used object keeps fields the new one lacks.
// Whether the write was seen, the object's wait ends here, unless every
// reread was early: then Finish asks for a second look.
func (p *Pending) Read(ctx context.Context, obj Object, read func(context.Context) (string, error)) error {
	rv, err := read(ctx)
	p.mu.Lock()
	w, ok := p.waits[obj]
	p.mu.Unlock()
	if err != nil || !ok {
		return err
	}
	if rv == "" || !Stale(rv, w.version) {
		p.settle(obj, OutcomeFresh)
		return nil
	}
	p.owner.early.Inc()
	pause := p.owner.opts.FirstBackoff
	for range p.owner.opts.Rereads {
		if err := sleep(ctx, pause); err != nil {
			return err
		}
		pause *= 2
		if rv, err = read(ctx); err != nil {
			return err
		}
		if rv == "" || !Stale(rv, w.version) {
			p.settle(obj, OutcomeCaughtUp)
			return nil
		}
	}
	p.owner.reads.WithLabelValues(OutcomeGaveUp).Inc()
	return nil
}

// Awaits tells whether a pushed event reported a write of obj that this
// reconcile has yet to see: its reads must then go to the API server's
// storage, not to the API server's cache, which may lag behind it.
func (p *Pending) Awaits(obj Object) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.waits[obj]
	return ok
}

// Skip says that the reconcile found nothing to reconcile (its object
// gone, paused or unreadable): its waits end with it, neither kept nor
// looked at again, and Bookkeeping does not observe it.
func (p *Pending) Skip() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.waits, p.skip = nil, true
}

func (p *Pending) skipped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.skip
}

func (p *Pending) settle(obj Object, outcome string) {
	p.mu.Lock()
	delete(p.waits, obj)
	p.mu.Unlock()
	p.owner.reads.WithLabelValues(outcome).Inc()
}

// Finish returns what the reconcile could not settle to the waits of its
// request, unless older than MaxAge, and, when it did, makes res look
// again within recheck with the pushed priority: the second look of a
// pushed write must not queue behind a release's bulk work, or a push that
// the runtime's API server was slow to store waits seconds. res is
// returned as it is when everything was seen.
func (p *Pending) Finish(res ctrl.Result, recheck time.Duration) ctrl.Result {
	if !p.keep() || recheck <= 0 {
		return res
	}
	if res.RequeueAfter == 0 || res.RequeueAfter > recheck {
		res.RequeueAfter = recheck
	}
	res.Priority = ptr.To(eventsource.Priority)
	return res
}

// keep hands the waits not yet seen back to the owner and tells whether
// there were any.
func (p *Pending) keep() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.owner == nil || len(p.waits) == 0 {
		return false
	}
	w := p.owner
	now := w.opts.Now()
	kept := 0
	w.mu.Lock()
	for obj, wt := range p.waits {
		if now.Sub(wt.since) > w.opts.MaxAge {
			w.reads.WithLabelValues(OutcomeExpired).Inc()
			continue
		}
		if w.expectLocked(p.req, obj, wt) {
			kept++
		}
	}
	w.mu.Unlock()
	p.waits = nil
	return kept > 0
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("waiting to read a pushed write again: %w", ctx.Err())
	case <-t.C:
		return nil
	}
}

type contextKey struct{}

// NewContext returns ctx carrying p, for the reads of one reconcile.
func NewContext(ctx context.Context, p *Pending) context.Context {
	return context.WithValue(ctx, contextKey{}, p)
}

// FromContext returns the Pending of the reconcile ctx belongs to; one
// without waits when there is none.
func FromContext(ctx context.Context) *Pending {
	if p, ok := ctx.Value(contextKey{}).(*Pending); ok {
		return p
	}
	return &Pending{}
}
