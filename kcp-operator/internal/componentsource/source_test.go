package componentsource_test

import (
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/lifecycle-manager/kcp-operator/internal/componentsource"
	"github.com/lifecycle-manager/kcp-operator/internal/oci"
	"github.com/lifecycle-manager/kcp-operator/internal/testing/testmodule"
)

func loginSecret(hosts ...string) *corev1.Secret {
	auths := ""
	for i, h := range hosts {
		if i > 0 {
			auths += ","
		}
		auths += fmt.Sprintf("%q:{%q:%q}", h, "auth", base64.StdEncoding.EncodeToString([]byte("reader:pw")))
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "login", Namespace: "kcp-system"},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{` + auths + `}}`)},
	}
}

func newSource(t *testing.T, host string, secret *corev1.Secret, insecure string) *componentsource.Source {
	t.Helper()
	f, err := oci.NewFetcher(oci.Options{InsecureRegistries: []string{insecure}})
	require.NoError(t, err)
	s, err := componentsource.New(componentsource.Config{
		Host: host, SubPath: "/modules/", CredSecret: types.NamespacedName{Namespace: "kcp-system", Name: "login"},
		Secrets: fake.NewClientBuilder().WithObjects(secret).Build(), Fetcher: f,
	})
	require.NoError(t, err)
	return s
}

func TestWithoutAHostTheSecretsOnlyLoginIsTheRegistry(t *testing.T) {
	reg := testmodule.StartRegistry()
	t.Cleanup(reg.Close)
	m := testmodule.Module{Name: "keda", Version: "1.0.0"}
	_, err := m.Push(t.Context(), reg.Host)
	require.NoError(t, err)

	f, err := newSource(t, "", loginSecret(reg.Host), reg.Host).Get(t.Context(), m.Component(), m.Version)
	require.NoError(t, err, "as the public operator: the registry is the Secret's login")
	assert.Equal(t, reg.Host+"/modules/component-descriptors/"+m.Component(), f.Repository)
	assert.Equal(t, m.Version, f.Descriptor.Version)

	_, err = newSource(t, "", loginSecret(reg.Host, "other.example.com"), reg.Host).Get(t.Context(), m.Component(), m.Version)
	assert.Equal(t, componentsource.ReasonCredentials, componentsource.ReasonOf(err))
	assert.ErrorContains(t, err, "has 2 logins; without --oci-registry-host it must have exactly one")
}

func TestWithoutARegistryTheSourceSaysSo(t *testing.T) {
	s, err := componentsource.New(componentsource.Config{})
	require.NoError(t, err)
	_, err = s.Get(t.Context(), "kyma-project.io/module/keda", "1.0.0")
	assert.Equal(t, componentsource.ReasonRegistryNotConfigured, componentsource.ReasonOf(err), "no registry: a nil source says so")
}
