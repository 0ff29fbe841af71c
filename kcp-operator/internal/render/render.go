package render

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"golang.org/x/sync/singleflight"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Type is what an install layer holds; the values are those of the
// Manifest's ImageSpec.Type (v1beta2.RefType).
type Type string

// Layer types.
const (
	RawManifest Type = "raw-manifest"
	HelmChart   Type = "helm-chart"
)

// renderVersion changes whenever a change of this package changes its
// output, so that cached renders of an older version are never returned.
const renderVersion = 1

// Layer is the content of a layer, given or loaded on demand.
type Layer struct {
	// Digest identifies Data (sha256:…); the render cache is keyed by it.
	// When empty, the digest of Data is computed.
	Digest string
	// Data is the content; when nil, Load fetches it.
	Data []byte
	// Load returns the content; called only when the render is not cached,
	// so an unchanged Manifest downloads nothing. It needs Digest.
	Load func(context.Context) ([]byte, error)
}

// Request is everything a render depends on.
type Request struct {
	// Module is the module's name, the value of the module-name label.
	Module string
	// Namespace is the runtime namespace (kyma-system): the namespace of
	// namespaced objects that name none, and the Helm release namespace.
	Namespace string
	// Type of Install.
	Type Type
	// Install is the layer with the module's resources.
	Install Layer
	// Config is the optional layer with Helm values (a YAML map). Only for
	// Helm charts; raw manifests ignore it.
	Config *Layer
	// Values are laid over the config layer's values (Helm only):
	// chart defaults <- Config <- Values.
	Values map[string]any
	// ReleaseName of the Helm release; default Module.
	ReleaseName string
	// KubeVersion charts see (Helm only); default DefaultKubeVersion.
	KubeVersion string
	// LocalizedImages replace the images of workloads; see the package doc.
	LocalizedImages []string
	// PullSecret, when set, is the image pull Secret in the runtime that
	// Deployments and StatefulSets pull with; see PullSecretEnv.
	PullSecret string
	// Trusted charts (the operator's own, such as the skr-agent's) render
	// in process even with Options.Isolate, sparing a process per render;
	// the Limits still apply. Not part of the cache key.
	Trusted bool
}

// Options configure a Renderer.
type Options struct {
	// CacheEntries bounds the number of cached renders (default 512;
	// negative disables the cache).
	CacheEntries int
	// CacheBytes bounds their approximate size as JSON (default 256 MiB).
	CacheBytes int64
	// Metrics, when set, counts cache hits and misses.
	Metrics *Metrics
	// Limits bound every render; see Limits.
	Limits Limits
	// Concurrency bounds the renders running at once (default
	// DefaultConcurrency); a render abandoned at its deadline holds its
	// place until it really ends.
	Concurrency int
	// Isolate renders Helm charts in a child process (this binary again)
	// that is killed at the deadline and limited in memory; without it, a
	// chart that loops is abandoned at the deadline but runs on in the
	// process until it ends.
	Isolate bool
}

// Renderer renders module layers into objects and caches the results.
// It is safe for concurrent use.
type Renderer struct {
	cache    *cache
	flight   singleflight.Group
	metrics  *Metrics
	limits   Limits
	isolate  bool
	slots    chan struct{}
	failures *failures
}

// New returns a Renderer.
func New(opts Options) *Renderer {
	if opts.CacheEntries == 0 {
		opts.CacheEntries = 512
	}
	if opts.CacheBytes <= 0 {
		opts.CacheBytes = 256 << 20
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	r := &Renderer{
		metrics: opts.Metrics, limits: opts.Limits.withDefaults(), isolate: opts.Isolate,
		slots: make(chan struct{}, opts.Concurrency), failures: newFailures(),
	}
	if opts.CacheEntries > 0 {
		r.cache = newCache(opts.CacheEntries, opts.CacheBytes)
	}
	return r
}

// Render returns the objects of a module, transformed and sorted for apply
// (see SortForApply). The result is the caller's to change: a cache hit
// returns deep copies. scope answers for kinds not defined by CRDs in the
// render; nil means BuiltinScope.
//
// Scope answers are not part of the cache key: a kind's scope is a
// property of its definition, the same in every runtime. A render that
// fails (for example, a kind whose CRD is not installed yet) is not cached.
func (r *Renderer) Render(ctx context.Context, req Request, scope ScopeFunc) ([]*unstructured.Unstructured, error) {
	if scope == nil {
		scope = BuiltinScope
	}
	req = normalize(req)
	key, err := cacheKey(&req)
	if err != nil {
		return nil, err
	}
	if objs, ok := r.cache.get(key); ok {
		r.metrics.rendered(resultHit)
		return objs, nil
	}
	if err := r.failures.get(key); err != nil {
		r.metrics.rendered(resultError)
		return nil, err
	}
	// Concurrent renders of one key (many runtimes, one module) share one.
	v, err, _ := r.flight.Do(key, func() (any, error) {
		if objs, ok := r.cache.get(key); ok {
			return objs, nil
		}
		objs, err := r.render(ctx, &req, scope)
		if err != nil {
			r.failures.put(key, err)
			r.metrics.overLimit(err)
			return nil, err
		}
		r.cache.put(key, objs)
		return objs, nil
	})
	if err != nil {
		r.metrics.rendered(resultError)
		return nil, err
	}
	r.metrics.rendered(resultMiss)
	return deepCopies(v.([]*unstructured.Unstructured)), nil
}

func normalize(req Request) Request {
	if req.ReleaseName == "" {
		req.ReleaseName = req.Module
	}
	if req.KubeVersion == "" {
		req.KubeVersion = DefaultKubeVersion
	}
	if req.Type != HelmChart {
		// Values do not apply to raw manifests; leave them out of the key.
		req.Config, req.Values, req.ReleaseName, req.KubeVersion = nil, nil, "", ""
	}
	return req
}

// cacheKey hashes every input of a render.
func cacheKey(req *Request) (string, error) {
	if req.Module == "" || req.Namespace == "" {
		return "", errors.New("render request needs a module and a namespace")
	}
	if req.Type != RawManifest && req.Type != HelmChart {
		return "", fmt.Errorf("layer type %q is neither %s nor %s", req.Type, RawManifest, HelmChart)
	}
	install, err := layerDigest("install", req.Install)
	if err != nil {
		return "", err
	}
	config := ""
	if req.Config != nil {
		if config, err = layerDigest("config", *req.Config); err != nil {
			return "", err
		}
	}
	raw, err := json.Marshal(struct {
		V                                           int
		Type                                        Type
		Install, Config, Module, Namespace, Release string
		KubeVersion                                 string
		Values                                      map[string]any
		Images                                      []string
		PullSecret                                  string `json:",omitempty"`
	}{renderVersion, req.Type, install, config, req.Module, req.Namespace, req.ReleaseName, req.KubeVersion, req.Values, req.LocalizedImages, req.PullSecret})
	if err != nil {
		return "", fmt.Errorf("values are not JSON: %w", err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:]), nil
}

func layerDigest(name string, l Layer) (string, error) {
	switch {
	case l.Digest != "":
		return l.Digest, nil
	case l.Data != nil:
		sum := sha256.Sum256(l.Data)
		return "sha256:" + hex.EncodeToString(sum[:]), nil
	default:
		return "", fmt.Errorf("%s layer has neither data nor a digest", name)
	}
}

func (l *Layer) content(ctx context.Context, name string) ([]byte, error) {
	if l.Data != nil {
		return l.Data, nil
	}
	if l.Load == nil {
		return nil, fmt.Errorf("%s layer %s has neither data nor a loader", name, l.Digest)
	}
	data, err := l.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("loading the %s layer %s: %w", name, l.Digest, err)
	}
	return data, nil
}

// render does the work of a cache miss: it loads the layers, then renders
// within the limits in one of the slots.
func (r *Renderer) render(ctx context.Context, req *Request, scope ScopeFunc) ([]*unstructured.Unstructured, error) {
	install, err := req.Install.content(ctx, "install")
	if err != nil {
		return nil, err
	}
	var config []byte
	if req.Type == HelmChart && req.Config != nil {
		if config, err = req.Config.content(ctx, "config"); err != nil {
			return nil, err
		}
	}
	s, err := r.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer s.done()
	ctx, cancel := context.WithTimeoutCause(ctx, r.limits.Timeout, timeLimit(r.limits))
	defer cancel()
	b := &budget{limits: r.limits, ctx: ctx}
	var parsed []parsedObject
	switch req.Type {
	case RawManifest:
		parsed, err = parseManifests(install, b)
	case HelmChart:
		parsed, err = r.renderChart(ctx, req, install, config, s, b)
	}
	if err == nil {
		return transform(req, scope, parsed)
	}
	if ctx.Err() != nil {
		// Past the deadline, whatever the render said is because of it.
		var limit *LimitError
		if cause := context.Cause(ctx); errors.As(cause, &limit) {
			return nil, cause
		}
	}
	return nil, err
}

// renderChart runs Helm, isolated or in a goroutine that may be abandoned
// at the deadline and then keeps the slot until it ends.
func (r *Renderer) renderChart(ctx context.Context, req *Request, install, config []byte, s *slot, b *budget) ([]parsedObject, error) {
	job, err := newHelmJob(req, install, config, r.limits)
	if err != nil {
		return nil, err
	}
	var out *helmOutput
	if r.isolate && !req.Trusted {
		out, err = runIsolated(ctx, job)
	} else {
		out, err = inProcess(ctx, job, s)
	}
	if err != nil {
		return nil, err
	}
	return out.objects(b)
}

func inProcess(ctx context.Context, job *helmJob, s *slot) (*helmOutput, error) {
	type result struct {
		out *helmOutput
		err error
	}
	done := make(chan result, 1)
	s.handOff()
	go func() {
		defer s.release()
		out, err := runHelm(job)
		done <- result{out, err}
	}()
	select {
	case res := <-done:
		return res.out, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func transform(req *Request, scope ScopeFunc, parsed []parsedObject) ([]*unstructured.Unstructured, error) {
	t, err := newTransformer(req, scope, parsed)
	if err != nil {
		return nil, err
	}
	seen := make(map[objectID]origin, len(parsed))
	for _, p := range parsed {
		if err := t.apply(p); err != nil {
			return nil, err
		}
		id := objectID{p.obj.GroupVersionKind().GroupKind(), p.obj.GetNamespace(), p.obj.GetName()}
		if first, dup := seen[id]; dup {
			return nil, p.origin.fail(p.obj, fmt.Errorf("the same object is already defined in %s", first))
		}
		seen[id] = p.origin
	}
	objs := objectsOf(parsed)
	SortForApply(objs)
	return objs, nil
}

func deepCopies(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		out[i] = o.DeepCopy()
	}
	return out
}
