package pushpki_test

import (
	"fmt"
	"testing"

	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/certs/pki"
)

// BenchmarkEnsureKyma measures EnsureKyma with the built-in backend against
// the real API server: "current" finds the certificate current (one Secret
// read, one bundle read, one check), "issue" signs a new one each time (the
// Secret deleted in between is not counted).
func BenchmarkEnsureKyma(b *testing.B) {
	for _, alg := range []pki.KeyAlgorithm{pki.ECDSAP256, pki.RSA2048} {
		b.Run("current/"+string(alg), func(b *testing.B) {
			f := newBenchFixture(b, alg)
			kyma := f.newKyma("kyma-1", "runtime-1", "")
			if _, err := f.pki.EnsureKyma(b.Context(), kyma); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				res, err := f.pki.EnsureKyma(b.Context(), kyma)
				if err != nil || res.Changed {
					b.Fatal(err, res.Changed)
				}
			}
		})
		b.Run("issue/"+string(alg), func(b *testing.B) {
			f := newBenchFixture(b, alg)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				b.StopTimer()
				kyma := f.newKyma(fmt.Sprintf("kyma-%d", i), fmt.Sprintf("runtime-%d", i), "")
				b.StartTimer()
				res, err := f.pki.EnsureKyma(b.Context(), kyma)
				if err != nil || !res.Issued {
					b.Fatal(err, res.Issued)
				}
			}
		})
	}
}

func newBenchFixture(b *testing.B, alg pki.KeyAlgorithm) *fixture {
	b.Helper()
	return newFixture(b, config.BackendBuiltin, fixtureOptions{change: func(o *config.Options) { o.KeyAlgorithm = alg }})
}
