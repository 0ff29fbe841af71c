package setup

import (
	"fmt"

	"github.com/lifecycle-manager/kcp-operator/internal/componentsource"
	"github.com/lifecycle-manager/kcp-operator/internal/descriptor"
	"github.com/lifecycle-manager/kcp-operator/internal/oci"
	"github.com/lifecycle-manager/kcp-operator/internal/options"
)

// components builds the source of the descriptors templates do not embed
// (--oci-registry-host, --oci-registry-cred-secret,
// --modules-repository-subpath); nil without a registry. Descriptors are
// a few KiB and kept in memory by digest, so its fetcher has no disk cache.
func (b *builder) components() (*componentsource.Source, error) {
	o := b.opts
	cfg := componentsource.Config{
		Host: o.DescriptorRegistry.Host, SubPath: o.DescriptorRegistry.SubPath,
		CredSecret: o.CredSecretName(), Secrets: b.mgr.GetAPIReader(),
	}
	if !cfg.Configured() {
		return nil, nil
	}
	fetcher, err := oci.NewFetcher(oci.Options{
		MaxLayerBytes: descriptor.MaxSize << 2, InsecureRegistries: o.AllInsecureRegistries(), Timeout: options.RegistryTimeout,
		Logger: b.log.WithName("descriptors"),
	})
	if err != nil {
		return nil, fmt.Errorf("setting up the descriptor registry: %w", err)
	}
	cfg.Fetcher = fetcher
	b.log.Info("descriptors that templates do not embed are read from the registry",
		"host", cfg.Host, "subPath", cfg.SubPath, "credSecret", cfg.CredSecret.String())
	return componentsource.New(cfg)
}
