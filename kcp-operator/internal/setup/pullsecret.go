package setup

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	catalogctrl "github.com/lifecycle-manager/kcp-operator/internal/controller/catalog"
	"github.com/lifecycle-manager/kcp-operator/internal/pullsecret"
)

// pullSecretName is the name of the runtimes' image pull Secret
// (--skr-image-pull-secret); empty without one.
func (b *builder) pullSecretName() string {
	n, _ := b.opts.SKRImagePullSecretName() // validated
	return n.Name
}

// pullSecret is what the catalog controller needs to keep the image pull
// Secret in every runtime: the manager's cache holds only the Secrets of
// Kymas, so a cache of its own watches the one KCP Secret. Nil without
// --skr-image-pull-secret.
func (b *builder) pullSecret() (*catalogctrl.PullSecret, error) {
	src, _ := b.opts.SKRImagePullSecretName() // validated
	if src.Name == "" {
		return nil, nil
	}
	c, err := cache.New(b.mgr.GetConfig(), cache.Options{
		Scheme: b.mgr.GetScheme(), Mapper: b.mgr.GetRESTMapper(), HTTPClient: b.mgr.GetHTTPClient(),
		DefaultNamespaces: map[string]cache.Config{src.Namespace: {}},
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: {Field: fields.OneTermEqualSelector("metadata.name", src.Name)},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("creating the cache of the image pull Secret %s: %w", src, err)
	}
	// Registered now, so that the manager waits for it before the controllers start.
	if _, err := c.GetInformer(context.Background(), &corev1.Secret{}); err != nil {
		return nil, fmt.Errorf("watching the image pull Secret %s: %w", src, err)
	}
	if err := b.mgr.Add(c); err != nil {
		return nil, fmt.Errorf("adding the cache of the image pull Secret %s: %w", src, err)
	}
	return &catalogctrl.PullSecret{Copier: &pullsecret.Copier{Source: src, Reader: c}, Cache: c}, nil
}
