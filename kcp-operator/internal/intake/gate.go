package intake

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Gate admits new Kymas while fewer than its limit of new Manifests wait
// for the Manifest controller's first look. A Kyma not admitted waits in
// line, oldest first, and is enqueued again when its turn comes. A nil
// Gate, or one with limit 0, admits every Kyma.
//
// A Manifest counts as waiting from its creation until the Manifest
// controller reconciles it, or for at most the expiry: a Manifest that is
// never reconciled (its namespace not watched, say) slows the intake for a
// while instead of stopping it.
type Gate struct {
	limit  int
	expiry time.Duration
	now    func() time.Time

	mu sync.Mutex
	// manifests are the new Manifests not reconciled yet, with the time
	// they were created; created keeps them in that order for expiry.
	manifests map[types.NamespacedName]time.Time
	created   []createdAt
	// line holds the Kymas waiting for their turn, oldest first; admitted
	// those whose turn came and that have not been back yet, with when.
	line     []types.NamespacedName
	inLine   map[types.NamespacedName]struct{}
	admitted map[types.NamespacedName]time.Time
	queue    workqueue.TypedRateLimitingInterface[reconcile.Request]
}

type createdAt struct {
	key types.NamespacedName
	at  time.Time
}

// New returns a Gate that admits new Kymas while fewer than limit new
// Manifests wait, each for at most expiry.
func New(limit int, expiry time.Duration) *Gate {
	return &Gate{
		limit: limit, expiry: expiry, now: time.Now,
		manifests: map[types.NamespacedName]time.Time{},
		inLine:    map[types.NamespacedName]struct{}{},
		admitted:  map[types.NamespacedName]time.Time{},
	}
}

// Start keeps the Kyma controller's queue, through which Kymas come back
// when their turn comes.
func (g *Gate) Start(_ context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.queue = queue
	return nil
}

// Admit reports whether the new Kyma may be taken over now; if not, it
// waits in line.
func (g *Gate) Admit(kyma types.NamespacedName) bool {
	if g == nil || g.limit <= 0 {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.admitted[kyma]; ok {
		delete(g.admitted, kyma)
		return true
	}
	if _, ok := g.inLine[kyma]; !ok {
		if len(g.line) == 0 && g.free() > 0 {
			return true
		}
		g.line = append(g.line, kyma)
		g.inLine[kyma] = struct{}{}
	}
	g.release()
	return false
}

// Created counts a new Manifest as waiting for its first reconcile.
func (g *Gate) Created(manifest types.NamespacedName) {
	if g == nil || g.limit <= 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.manifests[manifest]; !ok {
		now := g.now()
		g.manifests[manifest] = now
		g.created = append(g.created, createdAt{key: manifest, at: now})
	}
}

// Started ends the wait of a Manifest: the Manifest controller reconciles
// it. Kymas whose turn it is go back to the Kyma controller's queue.
func (g *Gate) Started(manifest types.NamespacedName) {
	if g == nil || g.limit <= 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.manifests, manifest)
	g.release()
}

// Forget drops a Kyma that is gone from the line.
func (g *Gate) Forget(kyma types.NamespacedName) {
	if g == nil || g.limit <= 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.admitted, kyma)
	if _, ok := g.inLine[kyma]; !ok {
		return
	}
	delete(g.inLine, kyma)
	for i, k := range g.line {
		if k == kyma {
			g.line = append(g.line[:i], g.line[i+1:]...)
			break
		}
	}
}

// release admits Kymas from the front of the line while there is room,
// each counted as one Manifest until it creates its own.
func (g *Gate) release() {
	if g.queue == nil {
		return
	}
	for len(g.line) > 0 && g.free() > 0 {
		kyma := g.line[0]
		g.line = g.line[1:]
		delete(g.inLine, kyma)
		g.admitted[kyma] = g.now()
		g.queue.Add(reconcile.Request{NamespacedName: kyma})
	}
}

// free is the room for new Manifests, after the waiting ones expire. An
// admitted Kyma that does not come back (it was paused, say) gives its room
// back after the expiry too.
func (g *Gate) free() int {
	g.expire()
	return g.limit - len(g.manifests) - len(g.admitted)
}

func (g *Gate) expire() {
	cutoff := g.now().Add(-g.expiry)
	for kyma, at := range g.admitted {
		if !at.After(cutoff) {
			delete(g.admitted, kyma)
		}
	}
	for len(g.created) > 0 {
		first := g.created[0]
		at, waiting := g.manifests[first.key]
		current := waiting && at.Equal(first.at)
		if current && at.After(cutoff) {
			return
		}
		if current {
			delete(g.manifests, first.key)
		}
		g.created = g.created[1:]
	}
}

// Collectors are the Gate's metrics.
func (g *Gate) Collectors() []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "lifecycle_manager_kyma_intake_waiting",
			Help: "New Kymas waiting to be taken over until the Manifest controller has room (--new-manifest-backlog).",
		}, func() float64 { return float64(g.waiting()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "lifecycle_manager_new_manifests_waiting",
			Help: "New Manifests waiting for the Manifest controller's first reconcile.",
		}, func() float64 { return float64(g.backlog()) }),
	}
}

func (g *Gate) waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.line)
}

func (g *Gate) backlog() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.expire()
	return len(g.manifests)
}
