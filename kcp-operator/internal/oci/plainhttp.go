package oci

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// ErrPlainHTTPRefused is the cause of a request refused because it would
// go to a registry over plain HTTP that is not listed as insecure.
var ErrPlainHTTPRefused = errors.New("plain HTTP is refused for registries not listed as insecure")

// insecureHosts are the registries reached over plain HTTP: the only ones.
// go-containerregistry on its own also tries plain HTTP for loopback,
// *.local and private (RFC 1918) addresses. Registry hosts come from
// module descriptors, which module publishers write, so that exception
// would let a descriptor make the operator send GETs in clear text to any
// address inside the KCP's network (metadata endpoints, sidecars on
// localhost). Entries are host[:port]; a host without a port matches every
// port of that host.
type insecureHosts struct {
	hostPorts map[string]bool // "host:port"
	hosts     map[string]bool // "host", any port
}

func newInsecureHosts(entries []string) insecureHosts {
	h := insecureHosts{hostPorts: map[string]bool{}, hosts: map[string]bool{}}
	for _, e := range entries {
		e = strings.ToLower(strings.TrimSpace(e))
		if host, port, err := net.SplitHostPort(e); err == nil && port != "" {
			h.hostPorts[net.JoinHostPort(host, port)] = true
			continue
		}
		h.hosts[strings.TrimSuffix(strings.TrimPrefix(e, "["), "]")] = true
	}
	return h
}

// allows reports whether hostport (a URL's host: host or host:port) is
// reached over plain HTTP.
func (h insecureHosts) allows(hostport string) bool {
	hostport = strings.ToLower(hostport)
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]"), ""
	}
	if port != "" && h.hostPorts[net.JoinHostPort(host, port)] {
		return true
	}
	return host != "" && h.hosts[host]
}

// scheme is the URL scheme of requests to registry host hostport.
func (h insecureHosts) scheme(hostport string) string {
	if h.allows(hostport) {
		return "http"
	}
	return "https"
}

// plainHTTPGuard refuses every request that is not HTTPS unless it goes to
// an insecure registry: the auth ping's plain-HTTP fallback, a token realm
// and a redirect included, whatever the library above decided.
type plainHTTPGuard struct {
	next     http.RoundTripper
	insecure insecureHosts
}

// RoundTrip implements http.RoundTripper.
func (g plainHTTPGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "https" && (req.URL.Scheme != "http" || !g.insecure.allows(req.URL.Host)) {
		if req.Body != nil {
			_ = req.Body.Close() // RoundTrip must close the body, also on errors
		}
		return nil, fmt.Errorf("%s %s://%s: %w (list the host with kcp-operator --insecure-registries, or modulectl --insecure)",
			req.Method, req.URL.Scheme, req.URL.Host, ErrPlainHTTPRefused)
	}
	return g.next.RoundTrip(req)
}
