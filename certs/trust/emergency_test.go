package trust_test

import (
	"crypto/x509"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/lifecycle-manager/certs/trust"
)

func TestEmergencyState(t *testing.T) {
	oldCA := newCA(t, "old", t0.Add(-time.Hour), 365*24*time.Hour).Cert
	newCA := newCA(t, "new", t0, 365*24*time.Hour).Cert
	st := trust.State{CAs: []*x509.Certificate{oldCA}, NewestAddedAt: t0.Add(-time.Hour)}
	assert.False(t, st.Emergency.Active())

	st = st.WithEmergency(t0)
	require.True(t, st.Emergency.Active())
	assert.Equal(t, trust.Fingerprint(oldCA), st.Emergency.Replaces)
	assert.False(t, st.EmergencyCAJoined(), "the CA it replaces is still the newest")

	st, _ = st.WithNewest(newCA, t0.Add(time.Second))
	assert.True(t, st.EmergencyCAJoined(), "a new CA joined")
	st, removed := st.Pruned(t0)
	assert.Empty(t, removed)
	assert.True(t, st.Emergency.Active(), "pruning keeps the emergency")

	st, dropped := st.OnlyNewest()
	assert.Equal(t, []*x509.Certificate{oldCA}, dropped)
	assert.Equal(t, []*x509.Certificate{newCA}, st.CAs)
	assert.False(t, st.Emergency.Active(), "done")
	assert.Equal(t, trust.PhaseStable, st.Phase(t0.Add(time.Minute), trust.Timing{PropagationDelay: time.Minute, GracePeriod: time.Hour}),
		"no previous CA: the endpoint certificate moves to the new CA at once")
}

// TestEmergencySurvivesTheBundleSecret: the emergency is stored in the
// bundle Secret and read back; it is removed when over; an unreadable one
// is an error, since taken as over it would keep a leaked CA trusted.
func TestEmergencySurvivesTheBundleSecret(t *testing.T) {
	c := fake.NewClientBuilder().Build()
	key := types.NamespacedName{Namespace: "kcp-system", Name: "bundle"}
	store := trust.NewStore(c, key)
	ca := newCA(t, "ca", t0, time.Hour).Cert
	since := time.Date(2030, 1, 1, 0, 0, 0, 123456789, time.UTC)
	st := trust.State{CAs: []*x509.Certificate{ca}, NewestAddedAt: t0}.WithEmergency(since)
	require.NoError(t, store.Save(t.Context(), st))

	loaded, err := store.Load(t.Context())
	require.NoError(t, err)
	assert.True(t, loaded.Emergency.Since.Equal(since), "to the nanosecond")
	assert.Equal(t, st.Emergency.Replaces, loaded.Emergency.Replaces)

	loaded.Emergency = trust.Emergency{}
	require.NoError(t, store.Save(t.Context(), loaded))
	var secret corev1.Secret
	require.NoError(t, c.Get(t.Context(), key, &secret))
	assert.NotContains(t, secret.Annotations, trust.EmergencySinceAnnotation)
	assert.NotContains(t, secret.Annotations, trust.EmergencyReplacesAnnotation)

	secret.Annotations[trust.EmergencySinceAnnotation] = "yesterday"
	require.NoError(t, c.Update(t.Context(), &secret))
	_, err = store.Load(t.Context())
	assert.ErrorContains(t, err, trust.EmergencySinceAnnotation)
}
