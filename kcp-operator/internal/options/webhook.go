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
	// Service (namespace/name) with ServicePort, or URL, is where the API
	// server calls it; --upgrade-crds points the CRDs' conversion there.
	Service     string
	ServicePort int32
	URL         string
	// Secret, in --cert-namespace, holds its serving certificate.
	Secret string
}

// DefaultWebhookSecret holds the webhook's serving certificate.
const DefaultWebhookSecret = "lifecycle-manager-webhook-tls"

func defaultWebhook() Webhook { return Webhook{ServicePort: 443, Secret: DefaultWebhookSecret} }

// Target is where the API server calls the webhook; ok is false when
// neither --webhook-service nor --webhook-url is set.
func (w Webhook) Target() (t conversion.Target, ok bool, err error) {
	if w.Service == "" && w.URL == "" {
		return conversion.Target{}, false, nil
	}
	t, err = conversion.NewTarget(w.Service, w.ServicePort, w.URL)
	return t, err == nil, err
}

func (w *Webhook) bind(fs *pflag.FlagSet) {
	fs.StringVar(&w.Addr, "webhook-bind-address", w.Addr, "Address (host:port) of the CRD conversion webhook that serves the v1beta1 API; empty: no webhook. Needs the push path's PKI (its certificate, in the Secret "+DefaultWebhookSecret+" of --cert-namespace, comes from there, like the listener's) and --webhook-service or --webhook-url. See docs/v1beta1.md.")
	fs.StringVar(&w.Service, "webhook-service", w.Service, "Service (namespace/name, port 443) through which the API server calls the conversion webhook, and its certificate's names; with --upgrade-crds, the CRDs' conversion is pointed at it and v1beta1 served.")
	fs.StringVar(&w.URL, "webhook-url", w.URL, "Instead of --webhook-service: the URL (https://host:port/convert) the API server calls, for an operator run outside the cluster.")
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
		errs = append(errs, errors.New("--webhook-bind-address needs --webhook-service or --webhook-url: where the API server calls the webhook"))
	}
	if !pushPath {
		errs = append(errs, errors.New("--webhook-bind-address needs the push path's PKI for its certificate: set --listener-bind-address or --agent-install"))
	}
	return errs
}
