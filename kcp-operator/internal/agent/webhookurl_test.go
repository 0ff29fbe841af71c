package agent

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/render"
)

// TestWebhookURLAnnotationOnlyToAllowedHosts: the annotation makes the
// runtime's API server send every AdmissionReview of the watched objects,
// Secret bodies from the drift watch included, to its URL. It is followed
// only to a host of the allow list; otherwise the webhooks call what they
// would without it (the Service, or Options.WebhookURL) and the refusal
// is reported.
func TestWebhookURLAnnotationOnlyToAllowedHosts(t *testing.T) {
	tests := []struct {
		name       string
		allowed    []string
		flagURL    string
		annotation string
		wantURL    string // "" means the Service
		wantRefuse string
	}{
		{name: "no annotation", allowed: []string{"127.0.0.1"}},
		{name: "no allow list", annotation: "https://127.0.0.1:9443", wantRefuse: "--agent-webhook-url-allowed-hosts is empty"},
		{name: "allowed host, any port", allowed: []string{"127.0.0.1"}, annotation: "https://127.0.0.1:9443",
			wantURL: "https://127.0.0.1:9443"},
		{name: "allowed host and port", allowed: []string{"agents.local:9443"}, annotation: "https://AGENTS.local:9443/",
			wantURL: "https://AGENTS.local:9443/"},
		{name: "allowed host, other port", allowed: []string{"agents.local:9443"}, annotation: "https://agents.local:10250",
			wantRefuse: "not in --agent-webhook-url-allowed-hosts"},
		{name: "another host", allowed: []string{"127.0.0.1"}, annotation: "https://collector.example.com",
			wantRefuse: "the host collector.example.com is not in"},
		{name: "a host that starts like an allowed one", allowed: []string{"127.0.0.1"}, annotation: "https://127.0.0.1.nip.io:9443",
			wantRefuse: "not in --agent-webhook-url-allowed-hosts"},
		{name: "plain HTTP", allowed: []string{"127.0.0.1"}, annotation: "http://127.0.0.1:9443", wantRefuse: "not https://host[:port]"},
		{name: "user info", allowed: []string{"127.0.0.1"}, annotation: "https://user@127.0.0.1:9443", wantRefuse: "no path, query"},
		{name: "a path", allowed: []string{"127.0.0.1"}, annotation: "https://127.0.0.1:9443/collect", wantRefuse: "no path, query"},
		{name: "refused falls back to the flag", allowed: []string{"127.0.0.1"}, flagURL: "https://127.0.0.1:8443",
			annotation: "https://collector.example.com", wantURL: "https://127.0.0.1:8443", wantRefuse: "is ignored"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := NewInstaller(Options{Image: "skr-agent:test", KCPAddress: "kcp.example:443", Contract: "v2",
				DriftWatch: true, SecretName: "skr-agent-tls", WebhookURL: tt.flagURL, WebhookURLHosts: tt.allowed},
				render.New(render.Options{}))
			require.NoError(t, err)
			kyma := &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{Name: "kyma-1", Namespace: "kcp-system",
				Labels: map[string]string{shared.RuntimeIDLabel: "runtime-1"}}}
			if tt.annotation != "" {
				kyma.Annotations = map[string]string{shared.AgentWebhookURLAnnotation: tt.annotation}
			}
			objs, err := in.render(t.Context(), kyma, shared.DefaultRuntimeNamespace, []byte("-----BEGIN CERTIFICATE-----\n"), nil)
			require.NoError(t, err)
			hooks := webhooksOf(t, objs)
			require.NotEmpty(t, hooks)
			for _, h := range hooks {
				url, _, _ := unstructured.NestedString(h, "clientConfig", "url")
				_, viaService, _ := unstructured.NestedMap(h, "clientConfig", "service")
				if tt.wantURL == "" {
					assert.Empty(t, url, "the runtime calls the agent's Service")
					assert.True(t, viaService)
				} else {
					assert.True(t, strings.HasPrefix(url, strings.TrimSuffix(tt.wantURL, "/")+"/validate/"), url)
				}
			}
			_, refused := in.opts.webhookURL(kyma)
			if tt.wantRefuse == "" {
				assert.Empty(t, refused)
			} else {
				assert.Contains(t, refused, tt.wantRefuse)
				assert.Contains(t, refused, shared.AgentWebhookURLAnnotation)
			}
		})
	}
}
