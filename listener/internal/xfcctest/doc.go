// Package xfcctest writes X-Forwarded-Client-Cert elements for the
// listener's tests the way Envoy (an Istio gateway) writes them, from
// certificates that certs/pkitest issues. Only tests import it.
package xfcctest
