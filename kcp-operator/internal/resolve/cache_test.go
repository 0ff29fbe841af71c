package resolve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/resolve"
)

const ns = "kcp-system"

// listOnly feeds an informer a fixed list and a watch that never sends:
// the controller-runtime cache then serves exactly these objects, with
// the indexes of the production cache, without an API server. It declines
// watch-list semantics so that the reflector lists first.
type listOnly struct{ toolscache.ListWatch }

func (listOnly) IsWatchListSemanticsUnSupported() bool { return true }

func newListOnly(list runtime.Object) *listOnly {
	return &listOnly{toolscache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return list.DeepCopyObject(), nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return watch.NewFake(), nil
		},
	}}
}

// catalogReader is the reader the Resolver gets in production, the
// manager's client reading through the informer cache with resolve.Indexes
// registered, here over the given objects. The REST config points nowhere:
// no request is made.
func catalogReader(tb testing.TB, templates []v1beta2.ModuleTemplate, metas []v1beta2.ModuleReleaseMeta) client.Reader {
	tb.Helper()
	scheme := runtime.NewScheme()
	require.NoError(tb, v1beta2.AddToScheme(scheme))
	mapper := meta.NewDefaultRESTMapper(nil)
	for _, kind := range []string{v1beta2.ModuleTemplateKind, v1beta2.ModuleReleaseMetaKind} {
		mapper.Add(v1beta2.GroupVersion.WithKind(kind), meta.RESTScopeNamespace)
	}
	lists := map[string]runtime.Object{
		fmt.Sprintf("%T", &v1beta2.ModuleTemplate{}):    &v1beta2.ModuleTemplateList{Items: templates},
		fmt.Sprintf("%T", &v1beta2.ModuleReleaseMeta{}): &v1beta2.ModuleReleaseMetaList{Items: metas},
	}
	cfg := &rest.Config{Host: "https://127.0.0.1:1"}
	c, err := cache.New(cfg, cache.Options{
		Scheme: scheme, Mapper: mapper,
		NewInformer: func(_ toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, ix toolscache.Indexers) toolscache.SharedIndexInformer {
			list, ok := lists[fmt.Sprintf("%T", obj)]
			if !ok {
				panic(fmt.Sprintf("no objects for %T", obj))
			}
			return toolscache.NewSharedIndexInformer(newListOnly(list), obj, resync, ix)
		},
	})
	require.NoError(tb, err)
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	require.NoError(tb, resolve.Indexes(ctx, c))
	go func() { _ = c.Start(ctx) }()
	require.True(tb, c.WaitForCacheSync(ctx), "the cache syncs")
	reader, err := client.New(cfg, client.Options{Scheme: scheme, Mapper: mapper, Cache: &client.CacheOptions{Reader: c}})
	require.NoError(tb, err)
	return reader
}

// template is a ModuleTemplate as the module pipeline publishes it: a v2
// descriptor of about 2 KB and a default CR.
func template(tb testing.TB, module, version, channel string) v1beta2.ModuleTemplate {
	tb.Helper()
	fqdn := "kyma-project.io/module/" + module
	desc := map[string]any{
		"meta": map[string]any{"schemaVersion": "v2"},
		"component": map[string]any{
			"name": fqdn, "version": version,
			"provider": `{"name":"kyma-project.io","labels":[{"name":"kyma-project.io/built-by","value":"cli","version":"v1"}]}`,
			"labels": []any{
				map[string]any{"name": "security.kyma-project.io/scan", "value": "enabled", "version": "v1"},
			},
			"repositoryContexts": []any{map[string]any{
				"type": "OCIRegistry", "baseUrl": "europe-docker.pkg.dev/kyma-project/prod/unsigned", "componentNameMapping": "urlPath",
			}},
			"resources": []any{
				map[string]any{
					"name": module + "-manager", "type": "ociArtifact", "relation": "external", "version": version,
					"access": map[string]any{"type": "ociArtifact", "imageReference": "europe-docker.pkg.dev/kyma-project/prod/" + module + "-manager:" + version},
				},
				map[string]any{
					"name": "raw-manifest", "type": "directory", "relation": "local", "version": version,
					"access": map[string]any{
						"type": "localBlob", "mediaType": "application/x-tar", "referenceName": "raw-manifest",
						"localReference": "sha256:3b2c8a6ef0d7f1a25c6e4b1f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d",
					},
				},
			},
			"sources": []any{map[string]any{
				"name": module + "-manager", "type": "Github", "version": version,
				"access": map[string]any{"type": "gitHub", "repoUrl": "https://github.com/kyma-project/" + module + "-manager.git"},
			}},
			"componentReferences": []any{},
		},
	}
	raw, err := json.Marshal(desc)
	require.NoError(tb, err)
	return v1beta2.ModuleTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: module + "-" + version, Namespace: ns},
		Spec: v1beta2.ModuleTemplateSpec{
			ModuleName: module, Version: version, Channel: channel,
			Descriptor: runtime.RawExtension{Raw: raw},
			Data: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "operator.kyma-project.io/v1alpha1", "kind": "Default",
				"metadata": map[string]any{"name": "default", "namespace": "kyma-system"},
				"spec":     map[string]any{"replicas": int64(1)},
			}},
		},
	}
}

func releaseMeta(module string, channels map[string]string) v1beta2.ModuleReleaseMeta {
	m := v1beta2.ModuleReleaseMeta{
		ObjectMeta: metav1.ObjectMeta{Name: module, Namespace: ns},
		Spec:       v1beta2.ModuleReleaseMetaSpec{ModuleName: module, OcmComponentName: "kyma-project.io/module/" + module},
	}
	for _, ch := range []string{"regular", "fast", "experimental"} {
		if v, ok := channels[ch]; ok {
			m.Spec.Channels = append(m.Spec.Channels, v1beta2.ChannelVersionAssignment{Channel: ch, Version: v})
		}
	}
	return m
}
