package agent

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// webhookURL is the URL the runtime's API server calls the agent at: the
// Kyma's annotation when its host is allowed, else Options.WebhookURL
// (empty: the agent's Service). The runtime's API server sends every
// AdmissionReview of the watched objects there, Secret bodies from the
// drift watch included, so an annotation is followed only to a host the
// operator's flags allow; refused says why one was ignored ("" when none
// was).
func (o Options) webhookURL(kyma *v1beta2.Kyma) (webhookURL, refused string) {
	annotated := kyma.Annotations[shared.AgentWebhookURLAnnotation]
	if annotated == "" {
		return o.WebhookURL, ""
	}
	if err := o.checkWebhookURL(annotated); err != nil {
		return o.WebhookURL, fmt.Sprintf("the annotation %s=%q is ignored: %v", shared.AgentWebhookURLAnnotation, annotated, err)
	}
	return annotated, ""
}

// checkWebhookURL accepts https://host[:port] with a host of
// Options.WebhookURLHosts, and nothing else: no path, query, fragment or
// user info, which the chart or the API server would not take either.
func (o Options) checkWebhookURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("not a URL: %w", err)
	case u.Scheme != "https" || u.Host == "" || u.Opaque != "":
		return fmt.Errorf("not https://host[:port]")
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.Trim(u.Path, "/") != "":
		return fmt.Errorf("only https://host[:port] is allowed: no path, query, fragment or user info")
	}
	if len(o.WebhookURLHosts) == 0 {
		return fmt.Errorf("no host is allowed (--agent-webhook-url-allowed-hosts is empty)")
	}
	if !hostAllowed(o.WebhookURLHosts, u.Hostname(), u.Port()) {
		return fmt.Errorf("the host %s is not in --agent-webhook-url-allowed-hosts", u.Host)
	}
	return nil
}

// hostAllowed reports whether host and port (may be empty) match an entry
// host[:port]; an entry without a port matches every port of its host.
func hostAllowed(allowed []string, host, port string) bool {
	for _, entry := range allowed {
		entry = strings.ToLower(strings.TrimSpace(entry))
		h, p, err := net.SplitHostPort(entry)
		if err != nil {
			h, p = strings.TrimSuffix(strings.TrimPrefix(entry, "["), "]"), ""
		}
		if h == strings.ToLower(host) && (p == "" || p == port) {
			return true
		}
	}
	return false
}
