package remote

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lifecycle-manager/api/v1beta2"
)

const (
	// DefaultMaxEntries is above any fleet one operator serves: the bound
	// that holds when every Kyma has its own kubeconfig.
	DefaultMaxEntries = 1 << 15
	// maxSweepEvery is how often Start looks for clients of deleted Kymas
	// at the latest.
	maxSweepEvery = time.Minute
)

// Reasons a connection leaves the cache besides Classify's, the reason label.
const (
	reasonIdle       = "idle"
	reasonSuperseded = "superseded"   // its Kymas moved to a new kubeconfig
	reasonDeleted    = "kyma-deleted" // its Kymas are gone
	reasonCapacity   = "capacity"     // MaxEntries reached: the least recently used
)

// Sweep drops the connections unused for IdleTTL and the clients of
// Kymas that no longer exist (with their connection when it was their
// last). A Kyma that cannot be read keeps its client.
func (c *Cache) Sweep(ctx context.Context) {
	if c.opts.IdleTTL > 0 {
		c.expireIdle()
	}
	c.mu.Lock()
	ids := make([]types.NamespacedName, 0, len(c.kymaKey))
	for id := range c.kymaKey {
		ids = append(ids, id)
	}
	c.mu.Unlock()
	for _, id := range ids {
		err := c.kcp.Get(ctx, id, &v1beta2.Kyma{})
		if !apierrors.IsNotFound(err) {
			continue
		}
		c.mu.Lock()
		if key, ok := c.kymaKey[id]; ok {
			c.detachLocked(id, key, reasonDeleted)
		}
		c.mu.Unlock()
	}
}

func (c *Cache) expireIdle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	cutoff := c.now().Add(-c.opts.IdleTTL)
	for key, e := range c.entries {
		if e.lastUsed.Before(cutoff) {
			c.removeLocked(key, reasonIdle)
		}
	}
}

// removeLocked drops the connection key and its Kymas' clients.
func (c *Cache) removeLocked(key, reason string) {
	e, ok := c.entries[key]
	if !ok {
		return
	}
	for id := range e.clients {
		if c.kymaKey[id] == key {
			delete(c.kymaKey, id)
		}
	}
	delete(c.entries, key)
	c.metrics.evicted(reason, len(c.entries))
}

// detachLocked drops Kyma id's client from the connection key, and the
// connection when no Kyma is left on it.
func (c *Cache) detachLocked(id types.NamespacedName, key, reason string) {
	if c.kymaKey[id] == key {
		delete(c.kymaKey, id)
	}
	e, ok := c.entries[key]
	if !ok {
		return
	}
	delete(e.clients, id)
	if len(e.clients) == 0 {
		delete(c.entries, key)
		c.metrics.evicted(reason, len(c.entries))
	}
}

// makeRoomLocked drops the least recently used connection while the cache
// is full; only a full cache pays for the scan.
func (c *Cache) makeRoomLocked() {
	for len(c.entries) >= c.opts.MaxEntries {
		var oldest string
		var at time.Time
		for key, e := range c.entries {
			if oldest == "" || e.lastUsed.Before(at) {
				oldest, at = key, e.lastUsed
			}
		}
		c.removeLocked(oldest, reasonCapacity)
	}
}

// attachLocked records that Kyma id's client lives on the connection key,
// and drops it from the connection of its previous kubeconfig.
func (c *Cache) attachLocked(id types.NamespacedName, key string) {
	if prev, ok := c.kymaKey[id]; ok && prev != key {
		c.detachLocked(id, prev, reasonSuperseded)
	}
	c.kymaKey[id] = key
}
