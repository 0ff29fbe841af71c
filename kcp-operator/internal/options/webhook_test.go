package options

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWebhookValidation(t *testing.T) {
	tests := []struct {
		name     string
		edit     func(o *Options)
		problems []string
	}{
		{"off by default", func(*Options) {}, nil},
		{"served through a Service", func(o *Options) {
			o.Webhook.Addr, o.Webhook.Service = ":9443", "kcp-system/kcp-operator-webhook"
		}, nil},
		{"served at a URL", func(o *Options) {
			o.Webhook.Addr, o.Webhook.Service = "127.0.0.1:9443", "https://127.0.0.1:9443/convert"
		}, nil},
		{"a server nobody calls", func(o *Options) { o.Webhook.Addr = ":9443" },
			[]string{"needs --webhook-service"}},
		{"no PKI without the push path", func(o *Options) {
			o.Webhook.Addr, o.Webhook.Service = ":9443", "kcp-system/w"
			o.AgentKCPAddress, o.ListenerAddr = "", ""
		}, []string{"needs the push path's PKI"}},
		{"a bad URL, also for --upgrade-crds alone", func(o *Options) { o.Webhook.Service = "http://x/convert" },
			[]string{"want namespace/name or https://"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := Default()
			o.AgentKCPAddress = "kcp.example.com"
			tc.edit(&o)
			err := o.Validate()
			if len(tc.problems) == 0 {
				assert.NoError(t, err)
				return
			}
			for _, p := range tc.problems {
				assert.ErrorContains(t, err, p)
			}
		})
	}
}
