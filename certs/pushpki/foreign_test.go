package pushpki_test

import (
	"crypto/x509"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/rotation"
	"github.com/lifecycle-manager/certs/tlssecret"
	"github.com/lifecycle-manager/certs/trust"
)

// TestAForeignCAIsDroppedFromTheBundle: a CA that someone else appended to
// the bundle's ca.crt (say with kubectl edit) could mint any runtime's
// client certificate; the Rotator drops it, counts and reports it, and
// keeps only the CAs it wrote and the one a flag names.
func TestAForeignCAIsDroppedFromTheBundle(t *testing.T) {
	intruder, migrated := foreignCA(t, "intruder CA"), foreignCA(t, "CA of the PKI migrated from")
	// Named as openssl prints it: upper case with colons.
	f := newFixture(t, config.BackendBuiltin, fixtureOptions{change: func(o *config.Options) {
		o.TrustedCAFingerprints = []string{opensslFingerprint(migrated)}
	}})
	own := f.settle().CAs
	require.Len(t, own, 1)
	f.ensure(f.newKyma("kyma-1", "runtime-1", ""))
	f.shift(f.opts.GracePeriod) // the first CA joined long ago

	f.appendToBundle(intruder, migrated)
	st := f.settle()
	assert.Equal(t, []*x509.Certificate{migrated, own[0]}, st.CAs, "the intruder left, the named CA stayed, before the operator's")
	assert.Equal(t, []*x509.Certificate{migrated, own[0]}, f.bundleCAs(), "and the bundle Secret says so")
	assert.Equal(t, trust.PhaseStable, st.Phase, "a named CA starts no rotation")
	assert.Equal(t, 1.0, counter(t, f, "lifecycle_manager_certificate_foreign_cas_dropped_total"))
	dropped := f.pki.Rotator.DroppedForeign()
	require.Len(t, dropped, 1)
	assert.Equal(t, trust.Fingerprint(intruder), dropped[0].Fingerprint)
	assert.Empty(t, f.pki.Rotator.DroppedForeign(), "each dropped CA is reported once")

	agent := f.ensure(f.kyma("kyma-1"))
	bundle, err := pki.ParseCerts(agent.Material.CABundle)
	require.NoError(t, err)
	assert.NotContains(t, bundle, intruder, "agents do not get the intruder either")
}

// TestABundleFromBeforeTheRecordKeepsItsCAs: a bundle Secret written
// before the record of the operator's CAs existed keeps every CA, and
// gets the record.
func TestABundleFromBeforeTheRecordKeepsItsCAs(t *testing.T) {
	f := newFixture(t, config.BackendBuiltin, fixtureOptions{})
	older := foreignCA(t, "CA of an older release")
	f.appendToBundle(older)
	s := f.secret(f.opts.BundleSecret)
	delete(s.Annotations, trust.RecordAnnotation)
	require.NoError(t, kcp.Client.Update(t.Context(), s))

	assert.Len(t, f.settle().CAs, 2)
	assert.Contains(t, f.secret(f.opts.BundleSecret).Annotations[trust.RecordAnnotation], trust.Fingerprint(older))
	assert.Empty(t, f.pki.Rotator.DroppedForeign())
}

// TestARotationRequestIsCarriedOutOnce: the trigger records a request as
// handled after the rotation; a crash in between shows it the request
// again, which must not make a second CA, neither at once nor once the
// first rotation is over.
func TestARotationRequestIsCarriedOutOnce(t *testing.T) {
	f := newFixture(t, config.BackendBuiltin, fixtureOptions{})
	ctx := t.Context()
	st, err := f.pki.Rotator.RotateFor(ctx, "2030-01-01T00:00:00Z")
	require.NoError(t, err)
	require.Len(t, st.CAs, 2)
	newCA := st.CAs[1]

	st, err = f.pki.Rotator.RotateFor(ctx, "2030-01-01T00:00:00Z")
	require.NoError(t, err, "the same request again is done, not refused as in progress")
	assert.Equal(t, newCA, st.CAs[len(st.CAs)-1])
	assert.Len(t, st.CAs, 2)

	f.shift(f.opts.GracePeriod + time.Minute)
	assert.Equal(t, trust.PhaseStable, f.settle().Phase)
	st, err = f.pki.Rotator.RotateFor(ctx, "2030-01-01T00:00:00Z")
	require.NoError(t, err)
	assert.Len(t, st.CAs, 2, "still one rotation after the first ended")

	st, err = f.pki.Rotator.RotateFor(ctx, "2030-02-01T00:00:00Z")
	require.NoError(t, err)
	assert.Len(t, st.CAs, 3, "a new request rotates")
	_, err = f.pki.Rotator.RotateFor(ctx, "2030-03-01T00:00:00Z")
	assert.ErrorIs(t, err, rotation.ErrRotationInProgress, "a third while the second runs waits")
}

func foreignCA(t *testing.T, name string) *x509.Certificate {
	t.Helper()
	key, err := pki.GenerateKey(pki.ECDSAP256)
	require.NoError(t, err)
	ca, err := pki.NewCA(name, key, time.Now().Add(-time.Minute), 365*24*time.Hour)
	require.NoError(t, err)
	return ca.Cert
}

func opensslFingerprint(ca *x509.Certificate) string {
	hex := strings.ToUpper(trust.Fingerprint(ca))
	parts := make([]string, 0, len(hex)/2)
	for i := 0; i < len(hex); i += 2 {
		parts = append(parts, hex[i:i+2])
	}
	return strings.Join(parts, ":")
}

// appendToBundle adds cas to the bundle Secret's ca.crt and nothing else,
// as a hand edit would.
func (f *fixture) appendToBundle(cas ...*x509.Certificate) {
	f.t.Helper()
	s := f.secret(f.opts.BundleSecret)
	s.Data[tlssecret.CAKey] = append(s.Data[tlssecret.CAKey], pki.EncodeCerts(cas...)...)
	require.NoError(f.t, kcp.Client.Update(f.t.Context(), s))
}

func (f *fixture) bundleCAs() []*x509.Certificate {
	f.t.Helper()
	cas, err := pki.ParseCerts(f.secret(f.opts.BundleSecret).Data[tlssecret.CAKey])
	require.NoError(f.t, err)
	return cas
}

func counter(t *testing.T, f *fixture, name string) float64 {
	t.Helper()
	families, err := f.reg.Gather()
	require.NoError(t, err)
	for _, fam := range families {
		if fam.GetName() == name && len(fam.GetMetric()) == 1 {
			return fam.GetMetric()[0].GetCounter().GetValue()
		}
	}
	require.Fail(t, fmt.Sprintf("no counter %s", name))
	return 0
}
