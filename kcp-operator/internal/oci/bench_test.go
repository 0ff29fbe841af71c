package oci_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/kcp-operator/internal/oci"
)

// BenchmarkFetchCacheHit is a layer read back from the disk cache: one file
// read, no request.
func BenchmarkFetchCacheHit(b *testing.B) {
	for _, size := range []struct {
		name  string
		bytes int
	}{{"16KiB", 16 << 10}, {"1MiB", 1 << 20}} {
		b.Run(size.name, func(b *testing.B) {
			reg := startRegistry(b)
			data := randomBytes(b, size.bytes)
			digest := reg.pushBlob(data)
			f, err := oci.NewFetcher(oci.Options{CacheDir: b.TempDir(), InsecureRegistries: testRegistries})
			require.NoError(b, err)
			ref := oci.Ref{Repository: reg.repo(moduleRepo), Digest: digest}
			_, err = f.Fetch(b.Context(), ref, nil)
			require.NoError(b, err)
			requests := reg.total()
			b.SetBytes(int64(size.bytes))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := f.Fetch(b.Context(), ref, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			require.Equal(b, requests, reg.total(), "hits send no request")
		})
	}
}
