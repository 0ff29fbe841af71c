package pullsecret_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/kcp-operator/internal/pullsecret"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
)

// One API server plays both sides: the source in kcp-system, the copy in
// kyma-system.
func TestCopyFollowsTheSource(t *testing.T) {
	env, err := testenv.Start(testenv.Options{WithoutAPICRDs: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	c := env.Client
	for _, ns := range []string{"kcp-system", "kyma-system"} {
		require.NoError(t, c.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
	src := types.NamespacedName{Namespace: "kcp-system", Name: "registry"}
	copier := &pullsecret.Copier{Source: src, Reader: c}
	rt := &remote.Runtime{Client: c, Namespace: "kyma-system", Facts: &remote.Facts{}}
	runtimeCopy := func() *corev1.Secret {
		s := &corev1.Secret{}
		require.NoError(t, c.Get(t.Context(), client.ObjectKey{Namespace: "kyma-system", Name: "registry"}, s))
		return s
	}

	err = copier.Sync(t.Context(), rt)
	require.ErrorIs(t, err, pullsecret.ErrSourceMissing)
	cond := pullsecret.ConditionOf(err)
	assert.Equal(t, metav1.ConditionFalse, cond.Status)
	assert.Equal(t, pullsecret.ReasonSourceMissing, cond.Reason)
	assert.Contains(t, cond.Message, "kcp-system/registry")

	source := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: src.Name, Namespace: src.Namespace, Labels: map[string]string{"team": "kcp"}},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{}}`)},
	}
	require.NoError(t, c.Create(t.Context(), source))
	require.NoError(t, copier.Sync(t.Context(), rt))
	first := runtimeCopy()
	assert.Equal(t, source.Data, first.Data)
	assert.Equal(t, corev1.SecretTypeDockerConfigJson, first.Type)
	assert.Equal(t, map[string]string{shared.ManagedByLabel: shared.OperatorName}, first.Labels, "the KCP's labels stay in the KCP")
	assert.Equal(t, metav1.ConditionTrue, pullsecret.ConditionOf(nil).Status)

	require.NoError(t, copier.Sync(t.Context(), rt))
	assert.Equal(t, first.ResourceVersion, runtimeCopy().ResourceVersion, "an unchanged Secret is not written")

	source.Data = map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"r.example":{}}}`)}
	require.NoError(t, c.Update(t.Context(), source))
	require.NoError(t, copier.Sync(t.Context(), rt))
	assert.Equal(t, source.Data, runtimeCopy().Data, "a changed Secret is copied again")

	// A copy of another type (someone replaced it) is replaced: a Secret's
	// type cannot be changed in place.
	require.NoError(t, c.Delete(t.Context(), runtimeCopy()))
	require.NoError(t, c.Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "registry", Namespace: "kyma-system"}, Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"x": []byte("y")},
	}))
	rt.Facts = &remote.Facts{} // a new runtime client knows nothing
	require.NoError(t, copier.Sync(t.Context(), rt))
	replaced := runtimeCopy()
	assert.Equal(t, corev1.SecretTypeDockerConfigJson, replaced.Type)
	assert.Equal(t, source.Data, replaced.Data)
}
