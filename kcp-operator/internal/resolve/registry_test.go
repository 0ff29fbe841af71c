package resolve_test

import (
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/componentsource"
	"github.com/lifecycle-manager/kcp-operator/internal/oci"
	"github.com/lifecycle-manager/kcp-operator/internal/resolve"
	"github.com/lifecycle-manager/kcp-operator/internal/signature"
)

// loginRegistry is go-containerregistry's registry on a loopback port that
// wants one basic-auth login and counts the GETs of blobs and manifests.
type loginRegistry struct {
	host       string
	user, pass string

	mu   sync.Mutex
	gets map[string]int // "blobs" or "manifests" → GETs answered
}

func startLoginRegistry(t *testing.T) *loginRegistry {
	t.Helper()
	r := &loginRegistry{user: "reader", pass: "s3cret", gets: map[string]int{}}
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if u, p, ok := req.BasicAuth(); !ok || u != r.user || p != r.pass {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, "login required", http.StatusUnauthorized)
			return
		}
		if req.Method == http.MethodGet {
			for _, kind := range []string{"blobs", "manifests"} {
				if strings.Contains(req.URL.Path, "/"+kind+"/") {
					r.mu.Lock()
					r.gets[kind]++
					r.mu.Unlock()
				}
			}
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.host = strings.TrimPrefix(srv.URL, "http://")
	return r
}

func (r *loginRegistry) count(kind string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gets[kind]
}

func (r *loginRegistry) creds(t *testing.T) *oci.Credentials {
	t.Helper()
	c, err := oci.BasicCredentials(r.host, r.user, r.pass)
	require.NoError(t, err)
	return c
}

// secret is the dockerconfigjson Secret of the login, as
// --oci-registry-cred-secret names it.
func (r *loginRegistry) secret(pass string) *corev1.Secret {
	auth := base64.StdEncoding.EncodeToString([]byte(r.user + ":" + pass))
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "registry-login", Namespace: ns},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: fmt.Appendf(nil, `{"auths":{%q:{"auth":%q}}}`, r.host, auth)},
	}
}

// pushTemplate publishes tmpl's descriptor (signed with key, unless nil)
// with its raw-manifest layer to the registry, under /modules, and returns
// the template as the public modulectl writes it: descriptor {}.
func (r *loginRegistry) pushTemplate(t *testing.T, tmpl v1beta2.ModuleTemplate, key *ecdsa.PrivateKey) v1beta2.ModuleTemplate {
	t.Helper()
	layer := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + tmpl.Spec.ModuleName + "}\n")
	var doc map[string]any
	require.NoError(t, json.Unmarshal(tmpl.Spec.Descriptor.Raw, &doc))
	component := doc["component"].(map[string]any)
	component["repositoryContexts"] = []any{map[string]any{"type": "OCIRegistry", "baseUrl": r.host + "/modules", "componentNameMapping": "urlPath"}}
	for _, res := range component["resources"].([]any) {
		if res := res.(map[string]any); res["name"] == "raw-manifest" {
			res["access"].(map[string]any)["localReference"] = oci.Digest(layer)
		}
	}
	var err error
	tmpl.Spec.Descriptor.Raw, err = json.Marshal(doc)
	require.NoError(t, err)
	if key != nil {
		tmpl = signTemplate(t, tmpl, key)
	}
	pusher := oci.NewPusher(oci.Options{InsecureRegistries: []string{r.host}})
	_, err = pusher.PushComponentVersion(t.Context(), tmpl.Spec.Descriptor.Raw,
		[]oci.LocalBlob{{MediaType: "application/x-tar", Data: layer}}, r.creds(t))
	require.NoError(t, err)
	tmpl.Spec.Descriptor = runtime.RawExtension{Raw: []byte("{}")}
	return tmpl
}

// source reads the registry under /modules with the Secret's login.
// A negative tagTTL resolves the tag on every read.
func (r *loginRegistry) source(t *testing.T, secret *corev1.Secret, tagTTL time.Duration) *componentsource.Source {
	t.Helper()
	fetcher, err := oci.NewFetcher(oci.Options{InsecureRegistries: []string{r.host}, TagTTL: tagTTL})
	require.NoError(t, err)
	s, err := componentsource.New(componentsource.Config{
		Host: "http://" + r.host, SubPath: "modules",
		CredSecret: types.NamespacedName{Namespace: ns, Name: secret.Name},
		Secrets:    fake.NewClientBuilder().WithObjects(secret).Build(),
		Fetcher:    fetcher,
	})
	require.NoError(t, err)
	return s
}

func TestTemplateWithoutDescriptorResolvesFromTheRegistry(t *testing.T) {
	reg := startLoginRegistry(t)
	tmpl := reg.pushTemplate(t, template(t, "keda", "1.2.0", ""), nil)
	r := resolve.New(catalogReader(t, []v1beta2.ModuleTemplate{tmpl},
		[]v1beta2.ModuleReleaseMeta{releaseMeta("keda", map[string]string{"regular": "1.2.0"})})).
		WithComponents(reg.source(t, reg.secret(reg.pass), -1))

	m, err := r.Resolve(t.Context(), newKyma("", nil), v1beta2.Module{Name: "keda"})
	require.NoError(t, err)
	assert.Equal(t, "1.2.0", m.Version)
	assert.Equal(t, "kyma-project.io/module/keda", m.FQDN)
	require.NotNil(t, m.Document, "the descriptor came from the registry")
	l, err := m.Descriptor.LayerOf("raw-manifest")
	require.NoError(t, err)
	assert.Equal(t, reg.host+"/modules/component-descriptors/kyma-project.io/module/keda", l.Repository,
		"the layers are where the descriptor was found")

	blobs, manifests := reg.count("blobs"), reg.count("manifests")
	require.Positive(t, blobs)
	again, err := r.Resolve(t.Context(), newKyma("", nil), v1beta2.Module{Name: "keda"})
	require.NoError(t, err)
	assert.Same(t, m.Descriptor, again.Descriptor, "kept by digest")
	assert.Equal(t, blobs, reg.count("blobs"), "the same manifest digest: no blob is fetched again")
	assert.Equal(t, manifests+1, reg.count("manifests"), "only the tag is resolved again (TagTTL off here)")
}

func TestRegistryFailuresHaveTheirReasons(t *testing.T) {
	reg := startLoginRegistry(t)
	pushed := reg.pushTemplate(t, template(t, "keda", "1.0.0", ""), nil)
	missingVersion := pushed.DeepCopy()
	missingVersion.Name, missingVersion.Spec.Version = "keda-2.0.0", "2.0.0"
	noComponent := reg.pushTemplate(t, template(t, "istio", "1.0.0", ""), nil)
	noComponentMeta := releaseMeta("istio", map[string]string{"regular": "1.0.0"})
	noComponentMeta.Spec.OcmComponentName = "kyma-project.io/module/never-published"
	legacy := *noComponent.DeepCopy()
	legacy.Name, legacy.Spec.ModuleName, legacy.Spec.Channel = "legacy-1.0.0", "legacy", "regular"
	templates := []v1beta2.ModuleTemplate{pushed, *missingVersion, noComponent, legacy}
	metas := []v1beta2.ModuleReleaseMeta{
		releaseMeta("keda", map[string]string{"regular": "1.0.0", "fast": "2.0.0"}), noComponentMeta,
	}
	tests := []struct {
		name, module, channel string
		source                *componentsource.Source
		wantCode, wantErr     string
	}{
		{name: "no registry configured", module: "keda", wantCode: componentsource.ReasonRegistryNotConfigured, wantErr: "--oci-registry-host"},
		{name: "version not in the registry", module: "keda", channel: "fast", source: reg.source(t, reg.secret(reg.pass), 0),
			wantCode: componentsource.ReasonVersionNotFound, wantErr: "component kyma-project.io/module/keda has no version 2.0.0 in " + reg.host + "/modules/component-descriptors/kyma-project.io/module/keda (it has 1.0.0)"},
		{name: "component not in the registry", module: "istio", source: reg.source(t, reg.secret(reg.pass), 0),
			wantCode: componentsource.ReasonComponentNotFound, wantErr: "the registry has no component kyma-project.io/module/never-published"},
		{name: "no release meta names the component", module: "legacy", source: reg.source(t, reg.secret(reg.pass), 0),
			wantCode: componentsource.ReasonComponentNameMissing, wantErr: "no ModuleReleaseMeta names the module's OCM component"},
		{name: "wrong login", module: "keda", source: reg.source(t, reg.secret("wrong"), 0),
			wantCode: "RegistryUnauthorized", wantErr: "registry denied access"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := resolve.New(catalogReader(t, templates, metas)).WithComponents(tc.source)
			_, err := r.Resolve(t.Context(), newKyma("", nil), v1beta2.Module{Name: tc.module, Channel: tc.channel})
			var resErr *resolve.Error
			require.ErrorAs(t, err, &resErr)
			assert.Equal(t, tc.wantCode, resErr.Code)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
}

func TestRegistryDescriptorsAreVerifiedLikeEmbeddedOnes(t *testing.T) {
	reg := startLoginRegistry(t)
	trusted, stranger := newKey(t), newKey(t)
	der, err := x509.MarshalPKIXPublicKey(trusted.Public())
	require.NoError(t, err)
	anchors, err := signature.ParseTrust("Secret kcp-system/module-trust", map[string][]byte{
		"release.pub": pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}),
	})
	require.NoError(t, err)
	templates := []v1beta2.ModuleTemplate{
		reg.pushTemplate(t, template(t, "signed", "1.0.0", ""), trusted),
		reg.pushTemplate(t, template(t, "forged", "1.0.0", ""), stranger),
		reg.pushTemplate(t, template(t, "plain", "1.0.0", ""), nil),
	}
	var metas []v1beta2.ModuleReleaseMeta
	for _, m := range []string{"signed", "forged", "plain"} {
		metas = append(metas, releaseMeta(m, map[string]string{"regular": "1.0.0"}))
	}
	r := resolve.New(catalogReader(t, templates, metas)).
		WithSignatures(signature.NewChecker(signature.PolicyOff, fixedTrust{anchors})).
		WithComponents(reg.source(t, reg.secret(reg.pass), 0))
	enforce := newKyma("", map[string]string{shared.SignaturePolicyLabel: "enforce"})

	m, err := r.Resolve(t.Context(), enforce, v1beta2.Module{Name: "signed"})
	require.NoError(t, err)
	assert.Contains(t, m.Signature.Signer, "key release.pub", "the signature of the registry's descriptor verifies")
	_, err = r.Resolve(t.Context(), enforce, v1beta2.Module{Name: "forged"})
	assert.ErrorContains(t, err, `signature "release" (ECDSA-SHA256) does not verify with any trusted key`)
	_, err = r.Resolve(t.Context(), enforce, v1beta2.Module{Name: "plain"})
	assert.ErrorContains(t, err, "it is not signed")
}
