package pkiclient

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/certs/issuer"
	"github.com/lifecycle-manager/certs/issuer/builtin"
	"github.com/lifecycle-manager/certs/trust"
)

// Client writes through the embedded direct client. It reads a Secret
// from the first of Secrets that has it, else from the API server; it lists
// Kymas from Kymas (the rotator's sweep over every agent). Everything else
// goes to the API server: a cache holding only some Secrets could answer a
// Get with "not found" and be asked the next, but it cannot answer a List.
type Client struct {
	client.Client
	Secrets []client.Reader
	Kymas   client.Reader
}

// Get reads obj. Any cache error (not found, not started) falls through
// to the next reader.
func (c *Client) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.Secret); ok {
		for _, r := range c.Secrets {
			if err := r.Get(ctx, key, obj, opts...); err == nil {
				return nil
			}
		}
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// List lists Kymas from the cache, anything else from the API server.
func (c *Client) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if _, ok := list.(*v1beta2.KymaList); ok && c.Kymas != nil {
		return c.Kymas.List(ctx, list, opts...)
	}
	return c.Client.List(ctx, list, opts...)
}

// SingletonPurposes are the values of the purpose label on the PKI's own
// Secrets, one or few each: the trust bundle, the built-in CA, the
// endpoint certificate. Agent certificates, one per Kyma, are not among
// them: the manager's cache holds those already.
var SingletonPurposes = []string{trust.PurposeBundle, builtin.PurposeCA, issuer.PurposeEndpoint.PurposeLabelValue()}

// NewSingletonCache returns an informer cache of the Secrets labelled with
// one of SingletonPurposes in namespaces; add it to the manager to run it.
func NewSingletonCache(cfg *rest.Config, opts cache.Options, namespaces ...string) (cache.Cache, error) {
	purpose, err := labels.NewRequirement(shared.PurposeLabel, selection.In, SingletonPurposes)
	if err != nil {
		return nil, fmt.Errorf("selecting the PKI's Secrets: %w", err)
	}
	opts.DefaultNamespaces = map[string]cache.Config{}
	for _, ns := range slices.Compact(slices.Sorted(slices.Values(namespaces))) {
		opts.DefaultNamespaces[ns] = cache.Config{}
	}
	opts.ByObject = map[client.Object]cache.ByObject{&corev1.Secret{}: {Label: labels.NewSelector().Add(*purpose)}}
	c, err := cache.New(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("creating the cache of the PKI's Secrets: %w", err)
	}
	return c, nil
}
