package render

import (
	"container/list"
	"errors"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// cache keeps rendered objects by request key, least recently used out
// first. Stored objects are never handed out, only copies of them, so they
// never change and copies can be made without holding the lock. A nil
// *cache caches nothing.
type cache struct {
	maxEntries int
	maxBytes   int64

	mu    sync.Mutex
	lru   *list.List // of *cached, most recently used in front
	items map[string]*list.Element
	bytes int64
}

type cached struct {
	key  string
	objs []*unstructured.Unstructured
	size int64
}

func newCache(maxEntries int, maxBytes int64) *cache {
	return &cache{maxEntries: maxEntries, maxBytes: maxBytes, lru: list.New(), items: map[string]*list.Element{}}
}

func (c *cache) get(key string) ([]*unstructured.Unstructured, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	el, ok := c.items[key]
	if ok {
		c.lru.MoveToFront(el)
	}
	c.mu.Unlock()
	if !ok {
		return nil, false
	}
	return deepCopies(el.Value.(*cached).objs), true
}

// put stores objs, which the caller must not change afterwards.
func (c *cache) put(key string, objs []*unstructured.Unstructured) {
	if c == nil {
		return
	}
	size := approximateSize(objs)
	if size > c.maxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.lru.MoveToFront(el)
		return
	}
	c.items[key] = c.lru.PushFront(&cached{key: key, objs: objs, size: size})
	c.bytes += size
	for c.lru.Len() > c.maxEntries || c.bytes > c.maxBytes {
		old := c.lru.Remove(c.lru.Back()).(*cached)
		delete(c.items, old.key)
		c.bytes -= old.size
	}
}

// Len returns the number of cached renders.
func (r *Renderer) Len() int {
	if r.cache == nil {
		return 0
	}
	r.cache.mu.Lock()
	defer r.cache.mu.Unlock()
	return r.cache.lru.Len()
}

// approximateSize is the objects' size as JSON, a fair measure of the
// memory they hold.
func approximateSize(objs []*unstructured.Unstructured) int64 {
	var n int64
	for _, o := range objs {
		raw, err := o.MarshalJSON()
		if err != nil {
			n += 4096 // cannot happen for decoded YAML; count something
			continue
		}
		n += int64(len(raw))
	}
	return n
}

// Results of a render, the values of the "result" label.
const (
	resultHit   = "hit"
	resultMiss  = "miss"
	resultError = "error"
)

// Metrics of rendering. A nil *Metrics records nothing.
type Metrics struct {
	renders  *prometheus.CounterVec
	inFlight prometheus.Gauge
	exceeded *prometheus.CounterVec
}

// NewMetrics registers the render metrics on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		renders: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lifecycle_manager_renders_total",
			Help: "Module renders asked for, by result: hit (from the render cache), miss (rendered), error.",
		}, []string{"result"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "lifecycle_manager_renders_running",
			Help: "Renders holding a render slot, including renders abandoned at their deadline that have not ended yet.",
		}),
		exceeded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lifecycle_manager_render_limits_exceeded_total",
			Help: "Renders that went over a bound, by bound: time, bytes, objects, memory.",
		}, []string{"bound"}),
	}
	for _, c := range []prometheus.Collector{m.renders, m.inFlight, m.exceeded} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering render metrics: %w", err)
		}
	}
	return m, nil
}

func (m *Metrics) rendered(result string) {
	if m != nil {
		m.renders.WithLabelValues(result).Inc()
	}
}

func (m *Metrics) running(delta float64) {
	if m != nil {
		m.inFlight.Add(delta)
	}
}

func (m *Metrics) overLimit(err error) {
	var limit *LimitError
	if m != nil && errors.As(err, &limit) {
		m.exceeded.WithLabelValues(string(limit.Bound)).Inc()
	}
}
