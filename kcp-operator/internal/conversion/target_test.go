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

func TestNewTarget(t *testing.T) {
	tests := []struct {
		name, service, url string
		port               int32
		err                string
	}{
		{name: "service", service: "kcp-system/kcp-operator-webhook", port: 443},
		{name: "url", url: "https://127.0.0.1:9443/convert"},
		{name: "neither", err: "needs --webhook-service or --webhook-url"},
		{name: "both", service: "a/b", port: 443, url: "https://x/convert", err: "exclude each other"},
		{name: "service without namespace", service: "webhook", port: 443, err: "want namespace/name"},
		{name: "service port out of range", service: "a/b", port: 0, err: "want 1-65535"},
		{name: "plain http", url: "http://127.0.0.1:9443/convert", err: "want https://"},
		{name: "another path", url: "https://127.0.0.1:9443/", err: "want https://"},
		{name: "credentials in the URL", url: "https://u:p@127.0.0.1/convert", err: "want https://"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := conversion.NewTarget(tc.service, tc.port, tc.url)
			if tc.err == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tc.err)
			}
		})
	}
}

func TestTargetCallsOnlyItself(t *testing.T) {
	svc, err := conversion.NewTarget("kcp-system/webhook", 9443, "")
	require.NoError(t, err)
	url, err := conversion.NewTarget("", 0, "https://127.0.0.1:9443/convert")
	require.NoError(t, err)

	assert.True(t, svc.Calls(svc.ClientConfig()))
	assert.True(t, url.Calls(url.ClientConfig()))
	assert.False(t, svc.Calls(url.ClientConfig()))
	assert.False(t, url.Calls(svc.ClientConfig()))
	assert.False(t, svc.Calls(nil))
	other := svc.ClientConfig()
	other.Service.Port = ptr.To[int32](443)
	assert.False(t, svc.Calls(other), "another port is another webhook")
	defaultPort, err := conversion.NewTarget("kcp-system/webhook", 443, "")
	require.NoError(t, err)
	assert.True(t, defaultPort.Calls(&apiextensionsv1.WebhookClientConfig{Service: &apiextensionsv1.ServiceReference{
		Namespace: "kcp-system", Name: "webhook", Path: ptr.To("/convert")}}), "the API server's default port is 443")

	dns, ips := svc.CertNames()
	assert.Equal(t, []string{"webhook.kcp-system.svc", "webhook.kcp-system.svc.cluster.local"}, dns)
	assert.Empty(t, ips)
	dns, ips = url.CertNames()
	assert.Empty(t, dns)
	assert.Equal(t, []net.IP{net.ParseIP("127.0.0.1")}, ips)
	assert.Equal(t, "127.0.0.1", conversion.CertRequest(svcKey, url).CommonName)
}
