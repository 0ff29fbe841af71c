package options

import (
	"errors"

	"github.com/spf13/pflag"

	"github.com/lifecycle-manager/kcp-operator/internal/conversion"
)

// Webhook are the settings of the CRD conversion webhook that serves the
// v1beta1 API (internal/conversion).
type Webhook struct {
	// Addr is where the webhook server listens; empty: no webhook.
	Addr string
	// Service is where the API server calls it (conversion.ParseTarget):
	// a Service or a URL; --upgrade-crds points the CRDs' conversion there.
	Service string
	// Secret, in --cert-namespace, holds its serving certificate.
	Secret string
}

// DefaultWebhookSecret holds the webhook's serving certificate.
const DefaultWebhookSecret = "lifecycle-manager-webhook-tls"

func defaultWebhook() Webhook { return Webhook{Secret: DefaultWebhookSecret} }

// Target is where the API server calls the webhook; ok is false when
// --webhook-service is not set.
func (w Webhook) Target() (t conversion.Target, ok bool, err error) {
	if w.Service == "" {
		return conversion.Target{}, false, nil
	}
	t, err = conversion.ParseTarget(w.Service)
	return t, err == nil, err
}

func (w *Webhook) bind(fs *pflag.FlagSet) {
	fs.StringVar(&w.Addr, "webhook-bind-address", w.Addr, "Address (host:port) of the CRD conversion webhook that serves the v1beta1 API; empty: no webhook. Needs the push path's PKI (its certificate, in the Secret "+DefaultWebhookSecret+" of --cert-namespace, comes from there, like the listener's) and --webhook-service. See docs/v1beta1.md.")
	fs.StringVar(&w.Service, "webhook-service", w.Service, "Where the API server calls the conversion webhook: a Service (namespace/name, port 443), also its certificate's names, or for an operator run outside the cluster a URL (https://host[:port]/convert); with --upgrade-crds, the CRDs' conversion is pointed there and v1beta1 served.")
}

// validate checks the webhook flags of an operator run (--upgrade-crds
// needs only the target).
func (w Webhook) validate(pushPath bool) []error {
	var errs []error
	_, ok, err := w.Target()
	if err != nil {
		errs = append(errs, err)
	}
	if w.Addr == "" {
		return errs
	}
	if !ok && err == nil {
		errs = append(errs, errors.New("--webhook-bind-address needs --webhook-service: where the API server calls the webhook"))
	}
	if !pushPath {
		errs = append(errs, errors.New("--webhook-bind-address needs the push path's PKI for its certificate: set --listener-bind-address or --agent-kcp-address"))
	}
	return errs
}
