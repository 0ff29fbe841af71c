package pushpki_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/certs/rotation"
)

// TestDeniedAgentCertificateIsReissued lists an agent's certificate on the
// deny list: the Rotator's next pass replaces it (reason denied), and the
// other agent's certificate stays.
func TestDeniedAgentCertificateIsReissued(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend config.Backend) {
		f := newFixture(t, backend, fixtureOptions{})
		leaked := leaf(t, f.ensure(f.newKyma("kyma-1", "runtime-1", "")).Material)
		other := leaf(t, f.ensure(f.newKyma("kyma-2", "runtime-2", "")).Material)
		require.NoError(t, kcp.Client.Create(t.Context(), &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: f.opts.DenySecret, Namespace: f.ns},
			Data:       map[string][]byte{config.DenySecretKey: []byte(leaked.SerialNumber.Text(16) + "\n")},
		}))

		f.reconcile(func(rotation.Status) bool {
			return leaf(t, f.material("kyma-1-webhook-tls")).SerialNumber.Cmp(leaked.SerialNumber) != 0
		})
		assert.Equal(t, 1, f.pki.Rotator.DenyList().Len())
		assert.True(t, leaf(t, f.material("kyma-2-webhook-tls")).Equal(other), "only the denied certificate is replaced")
		assert.InDelta(t, 1, renewals(t, f, "agent", "denied"), 0)
		res := f.ensure(f.kyma("kyma-1"))
		assert.False(t, res.Issued, "the replacement is not denied")
	})
}
