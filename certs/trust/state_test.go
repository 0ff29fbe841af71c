package trust_test

import (
	"crypto/x509"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/trust"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func newCA(t *testing.T, name string, notBefore time.Time, d time.Duration) *pki.CA {
	t.Helper()
	key, err := pki.GenerateKey(pki.ECDSAP256)
	require.NoError(t, err)
	ca, err := pki.NewCA(name, key, notBefore, d)
	require.NoError(t, err)
	return ca
}

func TestRotationPhases(t *testing.T) {
	timing := trust.Timing{PropagationDelay: 5 * time.Minute, GracePeriod: time.Hour}
	oldCA := newCA(t, "old", t0.Add(-300*24*time.Hour), 365*24*time.Hour)
	newCA := newCA(t, "new", t0, 365*24*time.Hour)

	st, changed := trust.State{}.WithNewest(oldCA.Cert, t0.Add(-300*24*time.Hour))
	require.True(t, changed)
	assert.Equal(t, trust.PhaseStable, st.Phase(t0, timing), "a single CA is stable")
	assert.True(t, st.ClientCA(t0, timing).Equal(oldCA.Cert))

	st, changed = st.WithNewest(newCA.Cert, t0)
	require.True(t, changed)
	_, changed = st.WithNewest(newCA.Cert, t0.Add(time.Minute))
	assert.False(t, changed, "the newest CA again is no change")

	tests := []struct {
		at               time.Duration
		phase            trust.Phase
		client, server   *x509.Certificate
		nextChangeWithin time.Duration
	}{
		{0, trust.PhaseCAAdded, oldCA.Cert, oldCA.Cert, 5 * time.Minute},
		{4 * time.Minute, trust.PhaseCAAdded, oldCA.Cert, oldCA.Cert, time.Minute},
		{5 * time.Minute, trust.PhaseReissuingClients, newCA.Cert, oldCA.Cert, 55 * time.Minute},
		{59 * time.Minute, trust.PhaseReissuingClients, newCA.Cert, oldCA.Cert, time.Minute},
		{time.Hour, trust.PhaseStable, newCA.Cert, newCA.Cert, 0},
	}
	for _, tc := range tests {
		now := t0.Add(tc.at)
		assert.Equal(t, tc.phase, st.Phase(now, timing), "at +%s", tc.at)
		assert.True(t, st.ClientCA(now, timing).Equal(tc.client), "client CA at +%s", tc.at)
		assert.True(t, st.ServerCA(now, timing).Equal(tc.server), "server CA at +%s", tc.at)
		if tc.nextChangeWithin == 0 {
			assert.True(t, st.NextChange(now, timing).IsZero())
		} else {
			assert.Equal(t, now.Add(tc.nextChangeWithin), st.NextChange(now, timing))
		}
	}
	assert.Len(t, st.CAs, 2, "the old CA stays trusted until it expires")
}

func TestPruneDropsExpiredButNeverTheNewest(t *testing.T) {
	a := newCA(t, "a", t0, time.Hour)
	b := newCA(t, "b", t0, 2*time.Hour)
	c := newCA(t, "c", t0, 3*time.Hour)
	st := trust.State{CAs: []*x509.Certificate{a.Cert, b.Cert, c.Cert}, NewestAddedAt: t0}

	pruned, removed := st.Pruned(t0.Add(90 * time.Minute))
	require.Len(t, removed, 1)
	assert.Equal(t, "a", removed[0].Subject.CommonName)
	assert.Len(t, pruned.CAs, 2)

	pruned, removed = st.Pruned(t0.Add(10 * time.Hour))
	assert.Len(t, removed, 2)
	require.Len(t, pruned.CAs, 1, "an empty bundle would trust nobody")
	assert.Equal(t, "c", pruned.Newest().Subject.CommonName)
}

func TestExpiredPreviousEndsTheRotation(t *testing.T) {
	timing := trust.Timing{PropagationDelay: 5 * time.Minute, GracePeriod: time.Hour}
	expired := newCA(t, "expired", t0.Add(-2*time.Hour), time.Hour)
	fresh := newCA(t, "fresh", t0, time.Hour)
	st, _ := trust.State{}.WithNewest(expired.Cert, t0.Add(-2*time.Hour))
	st, _ = st.WithNewest(fresh.Cert, t0)
	// Nothing can still depend on an expired CA: sign with the new one at once.
	assert.Equal(t, trust.PhaseStable, st.Phase(t0, timing))
	assert.True(t, st.ServerCA(t0, timing).Equal(fresh.Cert))
}

func TestWithNewestMovesAReturningCAToTheEnd(t *testing.T) {
	a := newCA(t, "a", t0, time.Hour)
	b := newCA(t, "b", t0, time.Hour)
	st, _ := trust.State{}.WithNewest(a.Cert, t0)
	st, _ = st.WithNewest(b.Cert, t0)
	// A backend that signs with a again (its CA Secret was restored) makes a the newest.
	st, changed := st.WithNewest(a.Cert, t0.Add(time.Minute))
	require.True(t, changed)
	require.Len(t, st.CAs, 2)
	assert.Equal(t, "a", st.Newest().Subject.CommonName)
	assert.Equal(t, t0.Add(time.Minute), st.NewestAddedAt)
}

func TestIssuerIndex(t *testing.T) {
	a := newCA(t, "a", t0, time.Hour)
	b := newCA(t, "b", t0, time.Hour)
	other := newCA(t, "other", t0, time.Hour)
	st := trust.State{CAs: []*x509.Certificate{a.Cert, b.Cert}}
	key, err := pki.GenerateKey(pki.ECDSAP256)
	require.NoError(t, err)
	for want, ca := range map[int]*pki.CA{0: a, 1: b, -1: other} {
		leaf, err := ca.Sign(pki.LeafRequest{CommonName: "x", Usage: pki.UsageClient, NotBefore: t0, Duration: time.Minute}, key.Public())
		require.NoError(t, err)
		assert.Equal(t, want, st.IssuerIndex(leaf), ca.Cert.Subject.CommonName)
	}
	assert.Equal(t, 1, st.Index(b.Cert))
	assert.Equal(t, -1, st.Index(other.Cert))
	certs, err := pki.ParseCerts(st.PEM())
	require.NoError(t, err)
	assert.Len(t, certs, 2)
}
