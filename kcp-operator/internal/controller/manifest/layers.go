package manifest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/oci"
	"github.com/lifecycle-manager/kcp-operator/internal/render"
	"github.com/lifecycle-manager/kcp-operator/internal/runtimewrite"
)

// LayerSource renders a Manifest from its OCI layers: the install layer
// (raw manifests or a Helm chart) and the optional config layer (values).
// Layers are pinned by digest and rendered through the render cache, so an
// unchanged Manifest downloads nothing.
type LayerSource struct {
	Fetcher  *oci.Fetcher
	Renderer *render.Renderer
	// Secrets reads pull Secrets; an uncached reader, as the cache holds
	// only the Secrets of Kymas.
	Secrets client.Reader
	// PullSecret (namespace/name) is used for every registry when set.
	PullSecret string
	// RuntimePullSecret is the image pull Secret in every runtime that module
	// Deployments and StatefulSets pull with (--skr-image-pull-secret).
	RuntimePullSecret string
}

// Render implements Source.
func (s *LayerSource) Render(ctx context.Context, mf *v1beta2.Manifest, target Target) (*Rendered, error) {
	install, err := installSpec(mf)
	if err != nil {
		return nil, err
	}
	keys, err := s.keychain(ctx, mf.Namespace, install.CredSecretSelector)
	if err != nil {
		return nil, err
	}
	installLayer, installRef, err := s.layer(ctx, install, keys)
	if err != nil {
		return nil, fmt.Errorf("install layer: %w", err)
	}
	req := render.Request{
		Module: mf.Labels[shared.ModuleNameLabel], Namespace: target.Namespace, Type: render.Type(install.Type),
		Install: installLayer, LocalizedImages: mf.Spec.LocalizedImages, PullSecret: s.RuntimePullSecret,
	}
	if req.Module == "" {
		req.Module = mf.Name
	}
	if req.Type == "" {
		req.Type = render.RawManifest
	}
	configRef, ignored := "", []string(nil)
	switch {
	case mf.Spec.Config != nil && req.Type != render.HelmChart:
		// Raw manifests take no values. The marker in the hash makes adding
		// or removing the layer an apply, which tells it.
		configRef = "ignored"
		ignored = append(ignored, fmt.Sprintf("spec.config (Helm values) is ignored: the module installs %s, which takes no values", req.Type))
	case mf.Spec.Config != nil:
		config, ref, err := s.layer(ctx, *mf.Spec.Config, keys)
		if err != nil {
			return nil, fmt.Errorf("config layer: %w", err)
		}
		req.Config, configRef = &config, ref
	}
	objs, err := s.Renderer.Render(ctx, req, target.Namespaced)
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w", installRef, err)
	}
	parts := []any{installRef, configRef, req.Type, req.Module, req.Namespace, req.LocalizedImages}
	if req.PullSecret != "" {
		// Only when set: the hash of every Manifest stays as it was without one.
		parts = append(parts, req.PullSecret)
	}
	hash := runtimewrite.Hash(parts)
	return &Rendered{Objects: objs, Hash: hash, Ignored: ignored}, nil
}

// layer pins a layer to its digest and loads it only when the render cache misses.
func (s *LayerSource) layer(ctx context.Context, spec v1beta2.ImageSpec, keys authn.Keychain) (render.Layer, string, error) {
	ref, err := oci.RefFromImageSpec(spec)
	if err != nil {
		return render.Layer{}, "", err
	}
	pinned, err := s.Fetcher.Pin(ctx, ref, keys)
	if err != nil {
		return render.Layer{}, "", err
	}
	return render.Layer{
		Digest: pinned.Digest,
		Load: func(ctx context.Context) ([]byte, error) {
			blob, err := s.Fetcher.Fetch(ctx, pinned, keys)
			if err != nil {
				return nil, err
			}
			return blob.Data, nil
		},
	}, pinned.String(), nil
}

func installSpec(mf *v1beta2.Manifest) (v1beta2.ImageSpec, error) {
	var spec v1beta2.ImageSpec
	if len(mf.Spec.Install.Source.Raw) == 0 {
		return spec, errors.New("spec.install.source is empty")
	}
	if err := json.Unmarshal(mf.Spec.Install.Source.Raw, &spec); err != nil {
		return spec, fmt.Errorf("spec.install.source is not an image spec: %w", err)
	}
	return spec, nil
}

// keychain returns the registry logins: the flag's pull Secret, else the
// Secrets the selector picks in the Manifest's namespace, else none.
func (s *LayerSource) keychain(ctx context.Context, ns string, selector *metav1.LabelSelector) (authn.Keychain, error) {
	var secrets []corev1.Secret
	switch {
	case s.PullSecret != "":
		secretNS, name, ok := strings.Cut(s.PullSecret, "/")
		if !ok {
			secretNS, name = ns, s.PullSecret
		}
		secret := corev1.Secret{}
		if err := s.Secrets.Get(ctx, client.ObjectKey{Namespace: secretNS, Name: name}, &secret); err != nil {
			return nil, fmt.Errorf("reading the registry pull Secret %s: %w", s.PullSecret, err)
		}
		secrets = append(secrets, secret)
	case selector != nil:
		sel, err := metav1.LabelSelectorAsSelector(selector)
		if err != nil {
			return nil, fmt.Errorf("credSecretSelector is invalid: %w", err)
		}
		var list corev1.SecretList
		if err := s.Secrets.List(ctx, &list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return nil, fmt.Errorf("listing registry pull Secrets: %w", err)
		}
		if len(list.Items) == 0 {
			return nil, fmt.Errorf("no registry pull Secret in namespace %s matches %q", ns, sel.String())
		}
		secrets = list.Items
	default:
		return nil, nil
	}
	creds, err := oci.CredentialsFromSecretData(secrets[0].Data)
	if err != nil {
		return nil, fmt.Errorf("registry pull Secret %s/%s: %w", secrets[0].Namespace, secrets[0].Name, err)
	}
	return creds, nil
}
