package identity_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lifecycle-manager/certs/pkitest"
	"github.com/lifecycle-manager/listener/internal/identity"
	"github.com/lifecycle-manager/listener/internal/xfcc"
	"github.com/lifecycle-manager/listener/internal/xfcctest"
)

// FuzzGatewayIdentify feeds the gateway identifier any header: the XFCC
// parse, the percent-decoding and PEM decoding of Cert and Chain, and the
// verification. Whatever the header, it must not panic, every refusal
// names a known reason, and only a certificate the trusted CA issued
// identifies a runtime: the fuzzer cannot sign, so an accepted runtime ID
// is always one of the CNs the test's CA issued.
func FuzzGatewayIdentify(f *testing.F) {
	trusted, untrusted := pkitest.NewCA(f, "trusted"), pkitest.NewCA(f, "untrusted")
	inter := trusted.Intermediate("intermediate")
	rt1, viaInter := trusted.Client("rt-1"), inter.Client("rt-inter")
	issued := map[string]bool{"rt-1": true, "rt-inter": true}

	f.Add(xfcctest.Element(rt1.Cert))
	f.Add(xfcctest.Element(viaInter.Cert, inter.CA.Cert))
	f.Add(`Hash=1;Cert="` + url.PathEscape(string(rt1.CertPEM)) + `"`)
	f.Add(`Chain="` + xfcctest.EnvoyEscape(string(pkitest.Concat(viaInter.CertPEM, inter.PEM()))) + `"`)
	f.Add(xfcctest.Element(untrusted.Client("rt-1").Cert))
	f.Add(xfcctest.Element(rt1.Cert) + `,By=x;Hash=1;Subject="CN=rt-1"`)
	f.Add(`Cert="%zz"`)
	f.Add(`Cert="-----BEGIN CERTIFICATE-----%0AAAAA%0A-----END CERTIFICATE-----%0A"`)
	f.Add(`Cert="` + xfcctest.EnvoyEscape(string(rt1.CertPEM)) + `";Chain="` + xfcctest.EnvoyEscape(string(rt1.CertPEM)) + `"`)

	g, err := identity.NewGateway(identity.NewVerifier(trusted.Bundle(), time.Now, 0),
		[]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, 1)
	if err != nil {
		f.Fatal(err)
	}
	known := map[string]bool{}
	for _, r := range []string{identity.ReasonNoCertificate, identity.ReasonMalformedCertificate, identity.ReasonUnknownAuthority,
		identity.ReasonExpired, identity.ReasonWrongUsage, identity.ReasonInvalid, identity.ReasonNoRuntimeID,
		identity.ReasonUntrustedProxy, identity.ReasonMalformedXFCC} {
		known[r] = true
	}
	f.Fuzz(func(t *testing.T, header string) {
		r := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/v2/klm/event", nil)
		r.RemoteAddr = "10.0.0.7:51234"
		for _, line := range strings.Split(header, "\n") {
			r.Header.Add(xfcc.Header, line)
		}
		id, err := g.Identify(r)
		if err != nil {
			if !known[identity.Reason(err)] {
				t.Fatalf("refusal without a known reason (%q): %v", identity.Reason(err), err)
			}
			return
		}
		if !issued[id] {
			t.Fatalf("accepted runtime ID %q that the trusted CA never issued, from %q", id, header)
		}
	})
}
