package kyma_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/pullsecret"
	"github.com/lifecycle-manager/kcp-operator/internal/render"
)

// pullSecret is the suite's --skr-image-pull-secret, a plain name: in the
// first watched namespace. runSuite creates it, so every Kyma of the suite
// runs with it.
const pullSecret = "skr-registry"

func pullSecretSource() *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: pullSecret, Namespace: kcpNamespace},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"registry.example":{"auth":"b2xkOm9sZA=="}}}`)},
	}
}

func setPullSecretSource(t *testing.T, config string) {
	t.Helper()
	require.Eventually(t, func() bool {
		s := &corev1.Secret{}
		if kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: kcpNamespace, Name: pullSecret}, s) != nil {
			return false
		}
		s.Data = map[string][]byte{corev1.DockerConfigJsonKey: []byte(config)}
		return kcp.Client.Update(t.Context(), s) == nil
	}, timeout, tick, "updating the image pull Secret")
}

// pullSecretKyma is the Kyma of the pull Secret test; its runtime namespace
// has its name (the suite's sync namespace).
const pullSecretKyma = "pull-secret"

func runtimePullSecret(t *testing.T) string {
	t.Helper()
	s := &corev1.Secret{}
	if err := runtimeEnv.Client.Get(t.Context(), client.ObjectKey{Namespace: pullSecretKyma, Name: pullSecret}, s); err != nil {
		return ""
	}
	return string(s.Data[corev1.DockerConfigJsonKey])
}

func pullSecretCondition(status metav1.ConditionStatus, reason string) func(*v1beta2.Kyma) bool {
	return func(k *v1beta2.Kyma) bool {
		c := meta.FindStatusCondition(k.Status.Conditions, pullsecret.Condition)
		return c != nil && c.Status == status && c.Reason == reason
	}
}

// pullsWithSecret: the Deployment lists the runtime's pull Secret and
// every container has its name in SKR_IMG_PULL_SECRET.
func pullsWithSecret(t *testing.T, ns, name string) bool {
	t.Helper()
	dep := &appsv1.Deployment{}
	if runtimeEnv.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, dep) != nil {
		return false
	}
	spec := dep.Spec.Template.Spec
	if !slices.Contains(spec.ImagePullSecrets, corev1.LocalObjectReference{Name: pullSecret}) || len(spec.Containers) == 0 {
		return false
	}
	for _, c := range spec.Containers {
		if !slices.Contains(c.Env, corev1.EnvVar{Name: render.PullSecretEnv, Value: pullSecret}) {
			return false
		}
	}
	return true
}

func TestImagePullSecretIsCopiedAndFollowsTheKCP(t *testing.T) {
	const kyma = pullSecretKyma
	kymaWithModule(t, kyma, module{Name: "pullman", Version: "1.0.0"})
	require.Eventually(t, func() bool { return pullsWithSecret(t, kyma, "pullman-operator") }, timeout, tick,
		"the module's Deployment pulls with the runtime's Secret")
	playModuleOperator(t, kyma, "pullman", "Ready", false)
	eventuallyKyma(t, kyma, "Ready with the pull Secret synced", func(k *v1beta2.Kyma) bool {
		return k.Status.State == shared.StateReady && pullSecretCondition(metav1.ConditionTrue, pullsecret.ReasonSynced)(k)
	})
	want := string(pullSecretSource().Data[corev1.DockerConfigJsonKey])
	assert.Equal(t, want, runtimePullSecret(t), "the runtime's copy is the KCP's")

	// Rotated credentials reach the runtime without any other change.
	rotated := `{"auths":{"registry.example":{"auth":"bmV3Om5ldw=="}}}`
	setPullSecretSource(t, rotated)
	require.Eventually(t, func() bool { return runtimePullSecret(t) == rotated }, timeout, tick,
		"the runtime's copy follows the KCP Secret")

	// Without the source the Kyma says so, the copy in the runtime stays,
	// and modules still install, naming the Secret.
	require.NoError(t, kcp.Client.Delete(t.Context(), pullSecretSource()))
	t.Cleanup(func() { _ = kcp.Client.Create(t.Context(), pullSecretSource()) })
	eventuallyKyma(t, kyma, "the missing pull Secret reported", func(k *v1beta2.Kyma) bool {
		return k.Status.State == shared.StateError && pullSecretCondition(metav1.ConditionFalse, pullsecret.ReasonSourceMissing)(k)
	})
	assert.Equal(t, rotated, runtimePullSecret(t), "the last copy is kept")
	publish(t, module{Name: "pullcord", Version: "1.0.0"})
	releaseMeta(t, "pullcord", map[string]string{"regular": "1.0.0"})
	updateKyma(t, kyma, func(k *v1beta2.Kyma) { k.Spec.Modules = append(k.Spec.Modules, v1beta2.Module{Name: "pullcord"}) })
	require.Eventually(t, func() bool { return pullsWithSecret(t, kyma, "pullcord-operator") }, timeout, tick,
		"a module enabled while the source is missing still installs")

	require.NoError(t, kcp.Client.Create(t.Context(), pullSecretSource()))
	eventuallyKyma(t, kyma, "the pull Secret synced again", pullSecretCondition(metav1.ConditionTrue, pullsecret.ReasonSynced))
	assert.Equal(t, want, runtimePullSecret(t))
}
