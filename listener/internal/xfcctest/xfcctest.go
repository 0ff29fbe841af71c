package xfcctest

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"strings"

	"github.com/lifecycle-manager/certs/pki"
)

// EnvoyEscape percent-encodes everything but unreserved characters, as
// Envoy encodes the Cert and Chain values.
func EnvoyEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteString("%" + strings.ToUpper(hex.EncodeToString([]byte{c})))
	}
	return b.String()
}

// Element writes an X-Forwarded-Client-Cert element for leaf as an Istio
// gateway does: By, Hash, quoted Cert and Chain, quoted Subject, URI.
// chain lists the certificates after the leaf.
func Element(leaf *x509.Certificate, chain ...*x509.Certificate) string {
	sum := sha256.Sum256(leaf.Raw)
	full := pki.EncodeCerts(append([]*x509.Certificate{leaf}, chain...)...)
	return "By=spiffe://cluster.local/ns/kcp-system/sa/lifecycle-manager" +
		";Hash=" + hex.EncodeToString(sum[:]) +
		`;Cert="` + EnvoyEscape(string(pki.EncodeCerts(leaf))) + `"` +
		`;Chain="` + EnvoyEscape(string(full)) + `"` +
		`;Subject="` + strings.ReplaceAll(leaf.Subject.String(), `"`, `\"`) + `";URI=`
}
