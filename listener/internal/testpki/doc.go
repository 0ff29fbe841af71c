// Package testpki issues real certificates for the listener's tests: CAs,
// intermediates, client and server leaves, TLS material for tlsreload, and
// X-Forwarded-Client-Cert elements written the way Envoy writes them. Only
// tests import it.
package testpki
