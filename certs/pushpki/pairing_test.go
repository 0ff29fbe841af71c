package pushpki_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/certs/tlsreload"
	"github.com/lifecycle-manager/certs/tlssecret"
)

// TestCertificateIsOneRuntimesIdentity checks the pairing the listener
// relies on: a runtime's certificate carries its runtime ID as CN and
// nothing of another runtime, so that it is never accepted as another's.
func TestCertificateIsOneRuntimesIdentity(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend config.Backend) {
		f := newFixture(t, backend, fixtureOptions{})
		a := f.ensure(f.newKyma("kyma-a", "runtime-a", "a.example.com")).Material
		b := f.ensure(f.newKyma("kyma-b", "runtime-b", "b.example.com")).Material

		endpoint := f.endpoint()
		serverKP, err := endpoint.KeyPair()
		require.NoError(t, err)
		clientCAs, err := endpoint.Bundle()
		require.NoError(t, err)
		addr := serve(t, tlsreload.ServerConfig(serverKP, clientCAs))

		for _, tc := range []struct {
			name  string
			m     tlssecret.Material
			own   string
			other string
		}{{"a", a, "runtime-a", "runtime-b"}, {"b", b, "runtime-b", "runtime-a"}} {
			kp, err := tc.m.KeyPair()
			require.NoError(t, err)
			roots, err := tc.m.Bundle()
			require.NoError(t, err)
			c := agentClient(kp, roots)
			body, status, _, err := get(t, c, addr, "/runtime/"+tc.own)
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, status)
			assert.Equal(t, tc.own, body)
			_, status, _, err = get(t, c, addr, "/runtime/"+tc.other)
			require.NoError(t, err)
			assert.Equal(t, http.StatusForbidden, status, "%s's certificate must not pass as %s", tc.own, tc.other)

			l := leaf(t, tc.m)
			assert.NotContains(t, l.DNSNames, tc.other)
			assert.NotContains(t, l.Subject.CommonName, tc.other)
		}

		// One runtime's certificate with another's key is no identity at all.
		_, err = tlssecret.Material{CABundle: a.CABundle, Cert: a.Cert, Key: b.Key}.KeyPair()
		assert.ErrorContains(t, err, "does not match")
		assert.NotEqual(t, leaf(t, a).SerialNumber, leaf(t, b).SerialNumber)
	})
}
