package publish_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/controller/kyma"
	"github.com/lifecycle-manager/kcp-operator/internal/descriptor"
	"github.com/lifecycle-manager/kcp-operator/internal/oci"
	"github.com/lifecycle-manager/kcp-operator/internal/publish"
	"github.com/lifecycle-manager/kcp-operator/internal/render"
)

// The descriptor resource names modulectl writes are the ones the Kyma
// controller looks for.
func TestResourceNamesAreTheOperators(t *testing.T) {
	require.Equal(t, kyma.LayerRawManifest, publish.ResourceRawManifest)
	require.Equal(t, kyma.LayerHelmChart, publish.ResourceHelmChart)
	require.Equal(t, kyma.LayerConfig, publish.ResourceConfig)
	require.Equal(t, string(v1beta2.RefTypeRawManifest), string(render.RawManifest))
	require.Equal(t, string(v1beta2.RefTypeHelmChart), string(render.HelmChart))
}

// operatorImageSpec is the ImageSpec the Kyma controller writes into a
// Manifest for a descriptor resource (kyma.imageSpec, which is not
// exported): Repo + "/" + Name is the layer's repository, split before the
// component name; Ref is the digest.
func operatorImageSpec(t *testing.T, d *descriptor.Descriptor, resource string) v1beta2.ImageSpec {
	t.Helper()
	layer, err := d.LayerOf(resource)
	require.NoError(t, err)
	repo, name := layer.Repository, ""
	if base, ok := strings.CutSuffix(layer.Repository, "/"+d.Name); ok {
		repo, name = base, d.Name
	} else if i := strings.LastIndex(layer.Repository, "/"); i > 0 {
		repo, name = layer.Repository[:i], layer.Repository[i+1:]
	}
	ref := layer.Digest
	if ref == "" {
		ref = layer.Tag
	}
	return v1beta2.ImageSpec{Repo: repo, Name: name, Ref: ref}
}

// operatorRender renders a published module the way the operator does:
// the Kyma controller turns the template's descriptor into the Manifest's
// install source (raw manifests, else the Helm chart) and config; the
// Manifest controller fetches them with oci.RefFromImageSpec and a
// Fetcher and renders them with render.Renderer for the runtime namespace.
func operatorRender(t *testing.T, tmpl *v1beta2.ModuleTemplate) []*unstructured.Unstructured {
	t.Helper()
	d, err := descriptor.Parse(tmpl.Spec.Descriptor.Raw)
	require.NoError(t, err)
	install := v1beta2.ImageSpec{}
	for _, l := range []struct {
		name string
		typ  v1beta2.RefType
	}{{kyma.LayerRawManifest, v1beta2.RefTypeRawManifest}, {kyma.LayerHelmChart, v1beta2.RefTypeHelmChart}} {
		if _, ok := d.Resource(l.name); ok {
			install = operatorImageSpec(t, d, l.name)
			install.Type = l.typ
			break
		}
	}
	require.NotEmpty(t, install.Type, "the descriptor has no install layer")
	// The test registries serve plain HTTP on loopback: listed as insecure,
	// as the operator's --insecure-registries would list them.
	fetcher, err := oci.NewFetcher(oci.Options{InsecureRegistries: []string{strings.SplitN(install.Repo, "/", 2)[0]}})
	require.NoError(t, err)
	fetch := func(spec v1beta2.ImageSpec) *render.Layer {
		ref, err := oci.RefFromImageSpec(spec)
		require.NoError(t, err)
		blob, err := fetcher.Fetch(t.Context(), ref, nil)
		require.NoError(t, err)
		return &render.Layer{Digest: blob.Digest, Data: blob.Data}
	}
	req := render.Request{
		Module: tmpl.Spec.ModuleName, Namespace: "kyma-system",
		Type: render.Type(install.Type), Install: *fetch(install),
	}
	if _, ok := d.Resource(kyma.LayerConfig); ok {
		req.Config = fetch(operatorImageSpec(t, d, kyma.LayerConfig))
	}
	objs, err := render.New(render.Options{}).Render(t.Context(), req, render.BuiltinScope)
	require.NoError(t, err)
	return objs
}
