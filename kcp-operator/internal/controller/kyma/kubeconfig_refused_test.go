package kyma_test

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// tokenTrap is a TLS server that a runtime kubeconfig may point at: it
// records the Authorization header of every request, and answers nothing
// useful.
type tokenTrap struct {
	*httptest.Server
	mu     sync.Mutex
	seen   []string
	caData []byte
}

func newTokenTrap(t *testing.T) *tokenTrap {
	t.Helper()
	trap := &tokenTrap{}
	trap.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		trap.mu.Lock()
		trap.seen = append(trap.seen, r.Header.Get("Authorization"))
		trap.mu.Unlock()
		http.Error(w, "not a runtime", http.StatusServiceUnavailable)
	}))
	t.Cleanup(trap.Close)
	trap.caData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: trap.Certificate().Raw})
	return trap
}

// received reports whether any request carried secret.
func (trap *tokenTrap) received(secret string) bool {
	trap.mu.Lock()
	defer trap.mu.Unlock()
	for _, h := range trap.seen {
		if strings.Contains(h, secret) {
			return true
		}
	}
	return false
}

// tokenFileKubeconfig is the attack: a kubeconfig whose user reads a token
// file — the operator's service-account token in production, a fake one
// the test writes here — and sends it to the trap, whose CA it trusts.
func tokenFileKubeconfig(t *testing.T, trap *tokenTrap) (kubeconfig []byte, token string) {
	t.Helper()
	token = "fake-operator-sa-token-" + strings.ReplaceAll(t.Name(), "/", "-")
	path := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(path, []byte(token), 0o600))
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["trap"] = &clientcmdapi.Cluster{Server: trap.URL, CertificateAuthorityData: trap.caData}
	cfg.AuthInfos["operator"] = &clientcmdapi.AuthInfo{TokenFile: path}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "trap", AuthInfo: "operator"}
	cfg.CurrentContext = "c"
	kc, err := clientcmd.Write(*cfg)
	require.NoError(t, err)
	return kc, token
}

func TestTokenFileKubeconfigIsRefusedAndNeverSendsTheToken(t *testing.T) {
	trap := newTokenTrap(t)
	kc, token := tokenFileKubeconfig(t, trap)
	newKymaWithKubeconfig(t, "refused", kc)

	k := eventuallyKyma(t, "refused", "Runtime condition KubeconfigRefused", func(k *v1beta2.Kyma) bool {
		c := meta.FindStatusCondition(k.Status.Conditions, v1beta2.ConditionRuntime)
		return c != nil && c.Reason == "KubeconfigRefused"
	})
	c := meta.FindStatusCondition(k.Status.Conditions, v1beta2.ConditionRuntime)
	assert.Contains(t, c.Message, "tokenFile")
	assert.Contains(t, c.Message, `user "operator"`)
	assert.Contains(t, c.Message, "kubeconfig-refused", "the message names the Secret")
	assert.Equal(t, shared.StateError, k.Status.State)
	require.Eventually(t, func() bool { return hasWarning(t, "refused", "KubeconfigRefused", "tokenFile") }, timeout, tick,
		"a Warning Event on the Kyma says why")
	// The catalog controller asks for the same runtime and is refused too.
	eventuallyKyma(t, "refused", "ModuleCatalog condition KubeconfigRefused", func(k *v1beta2.Kyma) bool {
		c := meta.FindStatusCondition(k.Status.Conditions, v1beta2.ConditionModuleCatalog)
		return c != nil && c.Reason == "KubeconfigRefused"
	})
	assert.False(t, trap.received(token), "the operator sent the token of its tokenFile to the kubeconfig's server")

	putKubeconfig(t, "refused", runtimeConfig)
	eventuallyKyma(t, "refused", "Ready once the Secret has inline credentials", stateIs(shared.StateReady))
	assert.False(t, trap.received(token))
}

func TestTokenFileKubeconfigFailsTheManifestWithoutSendingTheToken(t *testing.T) {
	publish(t, module{Name: "tokenfile", Version: "1.0.0"})
	releaseMeta(t, "tokenfile", map[string]string{"regular": "1.0.0"})
	newKyma(t, "swapped", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "tokenfile"}} })
	eventuallyManifest(t, "swapped-tokenfile", "installed", appliedAll(3))

	trap := newTokenTrap(t)
	kc, token := tokenFileKubeconfig(t, trap)
	putKubeconfig(t, "swapped", kc)
	nudgeManifest(t, "swapped-tokenfile")
	mf := eventuallyManifest(t, "swapped-tokenfile", "refused", func(mf *v1beta2.Manifest) bool {
		c := meta.FindStatusCondition(mf.Status.Conditions, v1beta2.ConditionInstallation)
		return c != nil && c.Reason == "KubeconfigRefused"
	})
	assert.Equal(t, shared.StateError, mf.Status.State)
	assert.Contains(t, mf.Status.LastOperation.Operation, "tokenFile")
	assert.False(t, trap.received(token), "the operator sent the token of its tokenFile to the kubeconfig's server")
}

// hasWarning reports whether a Warning Event about the Kyma has the reason
// and a note containing text.
func hasWarning(t *testing.T, kyma, reason, text string) bool {
	t.Helper()
	var list eventsv1.EventList
	if err := kcp.Client.List(t.Context(), &list, client.InNamespace(kcpNamespace)); err != nil {
		return false
	}
	for _, e := range list.Items {
		if e.Regarding.Name == kyma && e.Reason == reason && e.Type == corev1.EventTypeWarning && strings.Contains(e.Note, text) {
			return true
		}
	}
	return false
}

// runtimeKubeconfigAt is the shared runtime's kubeconfig with another
// server: inline credentials that lead nowhere.
func runtimeKubeconfigAt(t *testing.T, server string) []byte {
	t.Helper()
	cfg, err := clientcmd.Load(runtimeConfig)
	require.NoError(t, err)
	for _, c := range cfg.Clusters {
		c.Server = server
	}
	out, err := clientcmd.Write(*cfg)
	require.NoError(t, err)
	return out
}
