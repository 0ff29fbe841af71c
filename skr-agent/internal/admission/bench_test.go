package admission_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkHandler is the webhook's own cost for a Kyma UPDATE with ten
// modules whose spec changed, without TLS and HTTP.
func BenchmarkHandler(b *testing.B) {
	f := newFixture(&testing.T{}, 0)
	h := f.mux
	modules := make([]any, 10)
	for i := range modules {
		modules[i] = map[string]any{"name": fmt.Sprintf("module-%d", i), "channel": "regular"}
	}
	status := map[string]any{"state": "Ready"}
	for _, tc := range []struct {
		name     string
		old, new map[string]any
	}{
		{"spec changed", kyma(map[string]any{"channel": "regular", "modules": modules}, status, nil),
			kyma(map[string]any{"channel": "fast", "modules": modules}, status, nil)},
		{"spec unchanged", kyma(map[string]any{"channel": "regular", "modules": modules}, status, nil),
			kyma(map[string]any{"channel": "regular", "modules": modules}, status, map[string]string{"a": "b"})},
	} {
		b.Run(tc.name, func(b *testing.B) {
			body := reviewBody(&testing.T{}, "UPDATE", "", kymaKind, "default", tc.old, tc.new)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequestWithContext(b.Context(), http.MethodPost, "/validate/lifecycle-manager", bytes.NewReader(body))
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatal(rec.Code)
				}
			}
		})
	}
}
