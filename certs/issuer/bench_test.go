package issuer_test

import (
	"crypto/x509"
	"testing"
	"time"

	"github.com/lifecycle-manager/certs/issuer"
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/trust"
)

// BenchmarkEvaluate is the CPU cost per runtime of a rotator sweep or an
// EnsureKyma that finds the certificate current.
func BenchmarkEvaluate(b *testing.B) {
	for _, alg := range []pki.KeyAlgorithm{pki.ECDSAP256, pki.RSA2048} {
		b.Run(string(alg), func(b *testing.B) {
			key, err := pki.GenerateKey(alg)
			if err != nil {
				b.Fatal(err)
			}
			ca, err := pki.NewCA("ca", key, t0, 365*day)
			if err != nil {
				b.Fatal(err)
			}
			req := agentRequest("runtime-1", "skr-agent.kyma-system.svc", "skr-agent.kyma-system.svc.cluster.local")
			certPEM, keyPEM, err := ca.Issue(pki.LeafRequest{
				CommonName: req.CommonName, DNSNames: req.DNSNames, IPs: req.IPs,
				Usage: req.Purpose.Usage(), NotBefore: t0, Duration: 90 * day,
			}, alg)
			if err != nil {
				b.Fatal(err)
			}
			st := trust.State{CAs: []*x509.Certificate{ca.Cert}}
			lt := issuer.Lifetime{Duration: 90 * day, RenewBefore: 30 * day}
			now := t0.Add(time.Hour)
			b.ReportAllocs()
			for b.Loop() {
				if v := issuer.Evaluate(certPEM, keyPEM, req, st, ca.Cert, now, lt); !v.Fine() {
					b.Fatal(v.Reason)
				}
			}
		})
	}
}
