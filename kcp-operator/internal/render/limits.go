package render

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Default bounds of one render; see Limits.
const (
	// DefaultTimeout is far above any real module (a cold render takes
	// milliseconds), and below the time a reconcile may reasonably hold a
	// worker.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxBytes is several times the largest real module (a few MiB,
	// most of it CRD schemas) and keeps the parsed objects, about 13 times
	// the YAML, within a few hundred MiB.
	DefaultMaxBytes = 16 << 20
	// DefaultMaxObjects is ten times the objects of the largest real module.
	DefaultMaxObjects = 5000
	// DefaultConcurrency is the renders running at once. Each may hold
	// about 13 × MaxBytes while it parses; renders are cached, so two are
	// enough.
	DefaultConcurrency = 2
)

// Limits bound one render, so that one published module cannot take the
// operator's time or memory from every other module. Zero values mean the
// defaults.
type Limits struct {
	// Timeout bounds a render from its start (the wait for a free slot aside).
	Timeout time.Duration
	// MaxBytes bounds the YAML a module renders: raw manifests
	// uncompressed (never more than MaxManifestBytes), or a chart's
	// rendered templates and CRDs. An isolated chart render may use a heap
	// of MaxHeap(MaxBytes).
	MaxBytes int64
	// MaxObjects bounds the objects of one module.
	MaxObjects int
}

// MaxHeap is the heap an isolated Helm render may use before it is
// killed: 64 MiB for the process itself, and 8 × maxBytes because Helm's
// engine builds every template's output in memory, as strings that grow
// by doubling, and a chart needs values and files besides.
func MaxHeap(maxBytes int64) int64 { return 64<<20 + 8*maxBytes }

func (l Limits) withDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxObjects <= 0 {
		l.MaxObjects = DefaultMaxObjects
	}
	return l
}

// Bound names a limit, in LimitError and in the metric of exceeded limits.
type Bound string

// The bounds of a render.
const (
	BoundTime    Bound = "time"
	BoundBytes   Bound = "bytes"
	BoundObjects Bound = "objects"
	BoundMemory  Bound = "memory"
)

// LimitError says that a module went over a bound of its render. The same
// module renders the same, so the Renderer remembers it for FailureTTL.
type LimitError struct {
	Bound Bound
	// Limit is the bound's value, e.g. "30s" or "5000 objects".
	Limit string
	// Detail says what went over it.
	Detail string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("render limit %q of %s exceeded: %s", e.Bound, e.Limit, e.Detail)
}

func timeLimit(l Limits) *LimitError {
	return &LimitError{Bound: BoundTime, Limit: l.Timeout.String(), Detail: "the render did not finish in time and was abandoned"}
}

func bytesLimit(l Limits, what string) *LimitError {
	return &LimitError{Bound: BoundBytes, Limit: fmt.Sprintf("%d bytes", l.MaxBytes), Detail: what}
}

func memoryLimit(l Limits) *LimitError {
	return &LimitError{Bound: BoundMemory, Limit: fmt.Sprintf("%d bytes of heap", MaxHeap(l.MaxBytes)),
		Detail: "the Helm engine used more memory and was killed"}
}

// budget counts the objects and bytes of one render as they are parsed.
type budget struct {
	limits  Limits
	objects int
	ctx     context.Context // of the render, which may be abandoned
}

// object counts one parsed object, and notices an abandoned render.
func (b *budget) object() error {
	if b == nil {
		return nil
	}
	b.objects++
	if b.objects > b.limits.MaxObjects {
		return &LimitError{Bound: BoundObjects, Limit: fmt.Sprintf("%d objects", b.limits.MaxObjects),
			Detail: "the module has more objects"}
	}
	if b.ctx != nil && b.objects%64 == 0 {
		return b.ctx.Err()
	}
	return nil
}

// FailureTTL is how long a render that went over a bound is remembered:
// asking again within it returns the same error without rendering, so a
// bad module is not rendered again on every retry of every runtime.
const FailureTTL = 10 * time.Minute

// maxFailures bounds the remembered failures; beyond it the oldest go.
const maxFailures = 256

type failure struct {
	err   error
	until time.Time
}

// failures remembers renders that went over a bound, by cache key.
type failures struct {
	mu    sync.Mutex
	items map[string]failure
	order []string
	now   func() time.Time
}

func newFailures() *failures {
	return &failures{items: map[string]failure{}, now: time.Now}
}

func (f *failures) get(key string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	it, ok := f.items[key]
	if !ok || f.now().After(it.until) {
		return nil
	}
	return it.err
}

// put remembers err when it is a LimitError.
func (f *failures) put(key string, err error) {
	var limit *LimitError
	if !errors.As(err, &limit) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.items[key]; !ok {
		f.order = append(f.order, key)
	}
	f.items[key] = failure{err: err, until: f.now().Add(FailureTTL)}
	for len(f.order) > maxFailures {
		delete(f.items, f.order[0])
		f.order = f.order[1:]
	}
}
