package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	"k8s.io/client-go/util/flowcontrol"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/index"
	"github.com/lifecycle-manager/kcp-operator/internal/kubeconfig"
)

// Options tune the runtime clients.
type Options struct {
	// QPS and Burst are the request budget of each runtime client.
	QPS   float32
	Burst int
	// Timeout bounds every request to a runtime.
	Timeout time.Duration
	// IdleTTL drops clients unused for this long.
	IdleTTL time.Duration
	// MaxEntries bounds the connections kept; the least recently used goes
	// first. Zero means DefaultMaxEntries.
	MaxEntries int
	// Now is the clock; time.Now when nil. Not a flag: tests move it.
	Now func() time.Time
	// SingleCluster makes the KCP its own runtime (local use).
	SingleCluster bool
	// UserAgent identifies the operator to the runtimes.
	UserAgent string
	// WrapTransport wraps the HTTP transport of every runtime connection,
	// e.g. to count requests.
	WrapTransport transport.WrapperFunc
	// Kubeconfig is what runtime kubeconfigs may use beyond inline
	// credentials; the zero value allows nothing more.
	Kubeconfig kubeconfig.Allow
	// Unlabelled, when set, finds a Kyma's access Secrets that the cache
	// does not hold (a sharded operator caches only Secrets labelled for
	// its shard, and a provisioner may replace a Secret without the label).
	Unlabelled func(ctx context.Context, kyma *v1beta2.Kyma) ([]corev1.Secret, error)
}

// ErrNoKubeconfig means the KCP has no usable access Secret for a Kyma.
var ErrNoKubeconfig = errors.New("no runtime kubeconfig")

const localKey = "single-cluster"

// Cache hands out runtime clients; see the package doc.
//
// Its memory follows the live Kymas, not what their Secrets went through:
// a Kyma's client lives on exactly one connection (the one of its current
// kubeconfig; kymaKey), a connection goes with its last Kyma, a Kyma that
// is gone loses its client at the next Sweep, an unused connection goes
// after IdleTTL, and there are never more than MaxEntries connections.
type Cache struct {
	kcp     client.Reader
	local   *rest.Config
	scheme  *runtime.Scheme
	opts    Options
	metrics *Metrics
	log     logr.Logger
	now     func() time.Time

	mu      sync.Mutex
	entries map[string]*entry
	kymaKey map[types.NamespacedName]string
}

// entry is the connection to one runtime API server with one identity:
// the HTTP client and REST mapper that Kymas with the same kubeconfig
// share, and a client per Kyma, each with its own rate limiter.
type entry struct {
	config     *rest.Config
	httpClient *http.Client
	mapper     meta.RESTMapper
	facts      *Facts
	lastUsed   time.Time
	clients    map[types.NamespacedName]client.Client
}

// Runtime is the client for one Kyma's runtime.
type Runtime struct {
	client.Client
	// Namespace is the runtime-side namespace of the Kyma.
	Namespace string
	// Facts remembers what is known to be in place in this runtime while
	// the client lives, so that unchanged things cost no requests.
	Facts *Facts

	key string
}

// New returns a Cache. kcp reads the access Secrets (a cached client is
// fine); local is the KCP's own config for single-cluster mode.
func New(kcp client.Reader, local *rest.Config, scheme *runtime.Scheme, opts Options, m *Metrics, log logr.Logger) *Cache {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = DefaultMaxEntries
	}
	return &Cache{
		kcp: kcp, local: local, scheme: scheme, opts: opts, metrics: m, log: log,
		now: now, entries: map[string]*entry{}, kymaKey: map[types.NamespacedName]string{},
	}
}

// For returns the client for kyma's runtime.
func (c *Cache) For(ctx context.Context, kyma *v1beta2.Kyma) (*Runtime, error) {
	ns := RuntimeNamespace(kyma)
	id := types.NamespacedName{Namespace: kyma.Namespace, Name: kyma.Name}
	if c.opts.SingleCluster {
		cl, e, err := c.client(localKey, id, func() (*rest.Config, error) { return rest.CopyConfig(c.local), nil })
		if err != nil {
			return nil, err
		}
		return &Runtime{Client: cl, Namespace: ns, Facts: e.facts, key: localKey}, nil
	}
	raw, secret, err := c.kubeconfig(ctx, kyma)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(raw)
	key := hex.EncodeToString(sum[:])
	// The check runs where a connection is built: a cached one was built
	// from the same content, so it was checked already.
	cl, e, err := c.client(key, id, func() (*rest.Config, error) {
		cfg, err := c.opts.Kubeconfig.RESTConfig(raw)
		var refused *kubeconfig.RefusedError
		if errors.As(err, &refused) {
			return nil, &KubeconfigRefusedError{Kyma: id.String(), Secret: secret, Err: refused}
		}
		if err != nil {
			return nil, fmt.Errorf("runtime kubeconfig of Kyma %s/%s is invalid: %w", kyma.Namespace, kyma.Name, err)
		}
		return cfg, nil
	})
	if err != nil {
		return nil, err
	}
	return &Runtime{Client: cl, Namespace: ns, Facts: e.facts, key: key}, nil
}

// Forget drops rt's client when err shows it is broken (connection, TLS,
// authorization); the next For builds a new one from the current Secret.
// It returns whether it did.
func (c *Cache) Forget(rt *Runtime, err error) bool {
	reason, broken := Classify(err)
	if !broken || rt == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[rt.key]; !ok {
		return false
	}
	c.removeLocked(rt.key, string(reason))
	return true
}

// Start runs Sweep until ctx ends; it is a manager.Runnable.
func (c *Cache) Start(ctx context.Context) error {
	every := maxSweepEvery
	if c.opts.IdleTTL > 0 {
		every = min(every, c.opts.IdleTTL/4)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			c.Sweep(ctx)
		}
	}
}

// Len returns the number of cached clients.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// client returns the client of Kyma id on the connection key, creating
// the connection and the client as needed.
func (c *Cache) client(key string, id types.NamespacedName, config func() (*rest.Config, error)) (client.Client, *entry, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		cfg, err := config()
		if err != nil {
			return nil, nil, err
		}
		if e, err = c.newEntry(cfg); err != nil {
			return nil, nil, err
		}
		c.makeRoomLocked()
		c.entries[key] = e
		c.metrics.size(len(c.entries))
	}
	e.lastUsed = c.now()
	if cl, ok := e.clients[id]; ok {
		c.attachLocked(id, key)
		return cl, e, nil
	}
	// Each Kyma gets its own rate limiter, so that runtimes that share an
	// API server and credentials (several runtimes per API server, as in the
	// scale harness) do not share one budget.
	cfg := rest.CopyConfig(e.config)
	cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(c.opts.QPS, c.opts.Burst)
	cl, err := client.New(cfg, client.Options{Scheme: c.scheme, Mapper: e.mapper, HTTPClient: e.httpClient})
	if err != nil {
		return nil, nil, fmt.Errorf("building the runtime client: %w", err)
	}
	e.clients[id] = cl
	c.attachLocked(id, key)
	return cl, e, nil
}

func (c *Cache) newEntry(cfg *rest.Config) (*entry, error) {
	cfg.QPS, cfg.Burst, cfg.Timeout = c.opts.QPS, c.opts.Burst, c.opts.Timeout
	if c.opts.UserAgent != "" {
		cfg.UserAgent = c.opts.UserAgent
	}
	if c.opts.WrapTransport != nil {
		cfg.Wrap(c.opts.WrapTransport)
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the runtime HTTP client: %w", err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("building the runtime REST mapper: %w", err)
	}
	return &entry{config: cfg, httpClient: httpClient, mapper: NewMemoMapper(mapper), facts: &Facts{}, lastUsed: c.now(),
		clients: map[types.NamespacedName]client.Client{}}, nil
}

// kubeconfig returns the kubeconfig of kyma's runtime and namespace/name
// of the Secret that holds it.
func (c *Cache) kubeconfig(ctx context.Context, kyma *v1beta2.Kyma) ([]byte, string, error) {
	var secrets corev1.SecretList
	err := c.kcp.List(ctx, &secrets, append(index.OfKyma(kyma), client.UnsafeDisableDeepCopy)...)
	if err != nil {
		return nil, "", fmt.Errorf("listing the access Secrets of Kyma %s/%s: %w", kyma.Namespace, kyma.Name, err)
	}
	found := withKubeconfig(secrets.Items)
	if len(found) == 0 && c.opts.Unlabelled != nil {
		more, err := c.opts.Unlabelled(ctx, kyma)
		if err != nil {
			return nil, "", err
		}
		found = withKubeconfig(more)
	}
	switch len(found) {
	case 0:
		return nil, "", fmt.Errorf("%w: no Secret in namespace %s labelled %s=%s has the key %q",
			ErrNoKubeconfig, kyma.Namespace, shared.KymaNameLabel, kyma.Name, shared.KubeconfigSecretKey)
	case 1:
		return found[0].Data[shared.KubeconfigSecretKey], found[0].Namespace + "/" + found[0].Name, nil
	default:
		return nil, "", fmt.Errorf("%w: %d Secrets in namespace %s labelled %s=%s have the key %q, want one",
			ErrNoKubeconfig, len(found), kyma.Namespace, shared.KymaNameLabel, kyma.Name, shared.KubeconfigSecretKey)
	}
}

func withKubeconfig(secrets []corev1.Secret) []corev1.Secret {
	var found []corev1.Secret
	for _, s := range secrets {
		if _, ok := s.Data[shared.KubeconfigSecretKey]; ok {
			found = append(found, s)
		}
	}
	return found
}

// RuntimeNamespace is the runtime-side namespace of kyma: kyma-system, or
// the sync-namespace annotation.
func RuntimeNamespace(kyma *v1beta2.Kyma) string {
	if ns := kyma.Annotations[shared.SyncNamespaceAnnotation]; ns != "" {
		return ns
	}
	return shared.DefaultRuntimeNamespace
}

// Facts is a small concurrent memo of what a runtime is known to hold.
type Facts struct {
	m sync.Map
}

// Recall returns the remembered value of key.
func (f *Facts) Recall(key string) string {
	v, _ := f.m.Load(key)
	s, _ := v.(string)
	return s
}

// Remember stores value under key.
func (f *Facts) Remember(key, value string) { f.m.Store(key, value) }

// Forget drops key.
func (f *Facts) Forget(key string) { f.m.Delete(key) }

// FromServerCache makes a Get read what the runtime's API server holds in
// its watch cache (resourceVersion "0") instead of a quorum read from
// etcd, which costs the API server and etcd about half again as much. The
// cache lags its storage (milliseconds, longer on a saturated server), so
// only reads that tolerate that use it: an ownership check before a first
// apply (a write racing it would race a quorum read too) and the first
// recheck of an install (a stale answer costs an apply or a recheck),
// never a read that must see a change an agent pushed.
func FromServerCache() client.GetOption {
	return &client.GetOptions{Raw: &metav1.GetOptions{ResourceVersion: "0"}}
}
