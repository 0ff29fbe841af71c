package conversion_test

import (
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"

	"github.com/lifecycle-manager/kcp-operator/internal/conversion"
)

func TestParseTarget(t *testing.T) {
	tests := []struct {
		name, ref, err string
	}{
		{name: "service", ref: "kcp-system/kcp-operator-webhook"},
		{name: "url", ref: "https://127.0.0.1:9443/convert"},
		{name: "service without namespace", ref: "webhook", err: "want namespace/name"},
		{name: "plain http", ref: "http://127.0.0.1:9443/convert", err: "want namespace/name or https://"},
		{name: "another path", ref: "https://127.0.0.1:9443/", err: "https://host[:port]/convert"},
		{name: "credentials in the URL", ref: "https://u:p@127.0.0.1/convert", err: "https://host[:port]/convert"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := conversion.ParseTarget(tc.ref)
			if tc.err == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tc.err)
			}
		})
	}
}

func TestTargetCallsOnlyItself(t *testing.T) {
	svc, err := conversion.ParseTarget("kcp-system/webhook")
	require.NoError(t, err)
	url, err := conversion.ParseTarget("https://127.0.0.1:9443/convert")
	require.NoError(t, err)

	assert.True(t, svc.Calls(svc.ClientConfig()))
	assert.True(t, url.Calls(url.ClientConfig()))
	assert.False(t, svc.Calls(url.ClientConfig()))
	assert.False(t, url.Calls(svc.ClientConfig()))
	assert.False(t, svc.Calls(nil))
	other := svc.ClientConfig()
	other.Service.Port = ptr.To[int32](9443)
	assert.False(t, svc.Calls(other), "another port is another webhook")
	assert.True(t, svc.Calls(&apiextensionsv1.WebhookClientConfig{Service: &apiextensionsv1.ServiceReference{
		Namespace: "kcp-system", Name: "webhook", Path: ptr.To("/convert")}}), "the API server's default port is 443")

	dns, ips := svc.CertNames()
	assert.Equal(t, []string{"webhook.kcp-system.svc", "webhook.kcp-system.svc.cluster.local"}, dns)
	assert.Empty(t, ips)
	dns, ips = url.CertNames()
	assert.Empty(t, dns)
	assert.Equal(t, []net.IP{net.ParseIP("127.0.0.1")}, ips)
	assert.Equal(t, "127.0.0.1", conversion.CertRequest(svcKey, url).CommonName)
}
