package componentsource

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/kcp-operator/internal/descriptor"
	"github.com/lifecycle-manager/kcp-operator/internal/oci"
)

// SecretTTL is how long a read of the login Secret is used.
const SecretTTL = 10 * time.Second

// maxEntries bounds the descriptors kept in memory; a module version is
// one entry, and forgetting them all costs one download each.
const maxEntries = 4096

// Config says where the descriptors are.
type Config struct {
	// Host is host[:port][/path] of the registry, with an optional scheme;
	// plain HTTP is for the Fetcher's insecure registries only. Empty: the
	// only login of CredSecret.
	Host string
	// SubPath is appended to Host, e.g. a project in a general-purpose registry.
	SubPath string
	// CredSecret is a kubernetes.io/dockerconfigjson Secret with the
	// registry's login; zero: anonymous.
	CredSecret types.NamespacedName
	// Secrets reads CredSecret: an uncached reader, as the manager's
	// cache holds only the Secrets of Kymas.
	Secrets client.Reader
	// Fetcher reads the registry.
	Fetcher *oci.Fetcher
}

// Configured reports whether there is a registry to read from.
func (c Config) Configured() bool { return c.Host != "" || c.CredSecret.Name != "" }

// base is Host without its scheme, with SubPath.
func base(host, subPath string) string {
	host = strings.TrimPrefix(strings.TrimPrefix(host, "https://"), "http://")
	host = strings.TrimRight(host, "/")
	if sub := strings.Trim(subPath, "/"); sub != "" {
		host += "/" + sub
	}
	return host
}

// Fetched is a descriptor read from the registry.
type Fetched struct {
	// Raw is component-descriptor.yaml as stored; a signature covers it.
	Raw []byte
	// Digest is the digest of the layer that holds Raw.
	Digest string
	// Repository is where it was read: <base>/component-descriptors/<name>.
	Repository string
	// Descriptor is Raw parsed, with Repository's base as the last
	// repository context. Shared: never modify it.
	Descriptor *descriptor.Descriptor
}

// Source reads descriptors from the registry. It is safe for concurrent
// use; a nil *Source has no registry.
type Source struct {
	cfg Config

	mu         sync.Mutex
	byManifest map[string]*Fetched // manifest digest → descriptor
	byLayer    map[string]*Fetched // descriptor layer digest → descriptor
	login      login
}

type login struct {
	readAt   time.Time
	revision string
	creds    *oci.Credentials
	err      error
}

// New returns a Source, or nil when cfg names no registry.
func New(cfg Config) (*Source, error) {
	if !cfg.Configured() {
		return nil, nil
	}
	if cfg.Fetcher == nil {
		return nil, errors.New("componentsource: no fetcher")
	}
	if cfg.CredSecret.Name != "" && cfg.Secrets == nil {
		return nil, errors.New("componentsource: a login Secret but no reader for it")
	}
	return &Source{cfg: cfg, byManifest: map[string]*Fetched{}, byLayer: map[string]*Fetched{}}, nil
}

// Get returns the descriptor of component version name:version.
func (s *Source) Get(ctx context.Context, name, version string) (*Fetched, error) {
	if s == nil {
		return nil, &Error{Reason: ReasonRegistryNotConfigured, Err: errors.New(
			"the ModuleTemplate has no descriptor (spec.descriptor is empty) and no registry is configured to read it from (--oci-registry-host or --oci-registry-cred-secret)")}
	}
	if name == "" {
		return nil, &Error{Reason: ReasonComponentNameMissing, Err: errors.New(
			"the ModuleTemplate has no descriptor (spec.descriptor is empty) and no ModuleReleaseMeta names the module's OCM component (spec.ocmComponentName)")}
	}
	if version == "" {
		return nil, &Error{Reason: ReasonVersionNotFound, Err: fmt.Errorf(
			"the ModuleTemplate has no descriptor (spec.descriptor is empty) and no spec.version to read component %s in", name)}
	}
	keys, host, err := s.credentials(ctx)
	if err != nil {
		return nil, err
	}
	root := base(host, s.cfg.SubPath)
	repo := oci.ComponentRepository(root, name)
	pinned, err := s.cfg.Fetcher.Pin(ctx, oci.Ref{Repository: repo, Tag: oci.VersionTag(version)}, keys)
	if err != nil {
		return nil, s.fail(ctx, err, name, version, repo, keys)
	}
	if f := s.cached(s.byManifest, pinned.Digest); f != nil {
		return f, nil
	}
	cv, err := s.cfg.Fetcher.ComponentVersion(ctx, repo, version, keys)
	if err != nil {
		return nil, s.fail(ctx, err, name, version, repo, keys)
	}
	f := s.cached(s.byLayer, cv.DescriptorDigest)
	if f == nil {
		if f, err = parse(cv, name, version, root, repo); err != nil {
			return nil, err
		}
	}
	s.store(cv.ManifestDigest, f)
	return f, nil
}

func parse(cv *oci.ComponentVersion, name, version, root, repo string) (*Fetched, error) {
	d, err := descriptor.Parse(cv.Descriptor)
	if err == nil && (d.Name != name || d.Version != version) {
		err = fmt.Errorf("it describes %s:%s", d.Name, d.Version)
	}
	if err != nil {
		return nil, &Error{Reason: ReasonInvalidDescriptor, Err: fmt.Errorf("the descriptor of %s:%s in %s: %w", name, version, repo, err)}
	}
	// Its local blobs are beside it, where it was found.
	d.RepositoryContexts = append(d.RepositoryContexts, descriptor.RepositoryContext{
		Type: descriptor.RepositoryTypeOCI, BaseURL: root, ComponentNameMapping: "urlPath",
	})
	return &Fetched{Raw: cv.Descriptor, Digest: cv.DescriptorDigest, Repository: repo, Descriptor: d}, nil
}

// fail explains a registry error; a missing version names the versions there are.
func (s *Source) fail(ctx context.Context, err error, name, version, repo string, keys authn.Keychain) error {
	reason := classify(err)
	var tags []string
	if reason == ReasonVersionNotFound {
		var terr error
		if tags, terr = s.cfg.Fetcher.Tags(ctx, repo, keys); errors.Is(terr, oci.ErrNotFound) {
			reason = ReasonComponentNotFound
		}
	}
	switch reason {
	case ReasonComponentNotFound:
		return &Error{Reason: reason, Err: fmt.Errorf("the registry has no component %s (repository %s): %w", name, repo, err)}
	case ReasonVersionNotFound:
		return &Error{Reason: reason, Err: fmt.Errorf("component %s has no version %s in %s%s: %w", name, version, repo, versions(tags), err)}
	default:
		return &Error{Reason: reason, Err: fmt.Errorf("reading the descriptor of %s:%s from %s: %w", name, version, repo, err)}
	}
}

// versions lists a few of a repository's tags for a message, or "".
func versions(tags []string) string {
	if len(tags) == 0 {
		return ""
	}
	if len(tags) > 10 {
		tags = append(tags[:10:10], "…")
	}
	return " (it has " + strings.Join(tags, ", ") + ")"
}

func (s *Source) cached(m map[string]*Fetched, digest string) *Fetched {
	s.mu.Lock()
	defer s.mu.Unlock()
	return m[digest]
}

func (s *Source) store(manifestDigest string, f *Fetched) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.byManifest) >= maxEntries || len(s.byLayer) >= maxEntries {
		clear(s.byManifest)
		clear(s.byLayer)
	}
	s.byManifest[manifestDigest], s.byLayer[f.Digest] = f, f
}
