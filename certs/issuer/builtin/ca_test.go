package builtin

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/certs/pki"
)

func TestParseCAs(t *testing.T) {
	now := time.Now()
	newest, newestCert, newestKey, err := newCA(pki.ECDSAP256, now, time.Hour)
	require.NoError(t, err)
	previous, prevCert, prevKey, err := newCA(pki.RSA2048, now.Add(-time.Hour), 2*time.Hour)
	require.NoError(t, err)

	tests := []struct {
		name    string
		data    map[string][]byte
		want    int
		wantErr string
	}{
		{"newest only", map[string][]byte{CertKey: newestCert, KeyKey: newestKey}, 1, ""},
		{"with previous", map[string][]byte{CertKey: newestCert, KeyKey: newestKey, PreviousCertKey: prevCert, PreviousKeyKey: prevKey}, 2, ""},
		{"empty", map[string][]byte{}, 0, "tls.crt/tls.key: CA certificate: no certificate found"},
		{"key of the other CA", map[string][]byte{CertKey: newestCert, KeyKey: prevKey}, 0, "does not match"},
		{"previous without key", map[string][]byte{CertKey: newestCert, KeyKey: newestKey, PreviousCertKey: prevCert}, 0, "previous.crt/previous.key: CA key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cas, err := parseCAs(tc.data)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Len(t, cas, tc.want)
			assert.True(t, cas[0].Cert.Equal(newest.Cert), "the newest comes first")
			if tc.want == 2 {
				assert.True(t, cas[1].Cert.Equal(previous.Cert))
			}
		})
	}
}
