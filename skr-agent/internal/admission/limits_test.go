package admission_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/skr-agent/internal/admission"
	"github.com/lifecycle-manager/skr-agent/internal/metrics"
)

// pending is a review in progress whose body the test sends bit by bit.
type pending struct {
	body *io.PipeWriter
	done chan struct{}
	rec  *httptest.ResponseRecorder
}

// begin starts a review that announces contentLength and has sent nothing yet.
func (f *fixture) begin(ctx context.Context, t *testing.T, contentLength int64) *pending {
	t.Helper()
	pr, pw := io.Pipe()
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/validate/lifecycle-manager", pr)
	req.ContentLength = contentLength
	p := &pending{body: pw, done: make(chan struct{}), rec: httptest.NewRecorder()}
	go func() {
		defer close(p.done)
		f.mux.ServeHTTP(p.rec, req)
	}()
	t.Cleanup(func() {
		_ = pw.CloseWithError(io.ErrUnexpectedEOF)
		<-p.done
	})
	return p
}

// send writes b; it returns once the handler has read all of it.
func (p *pending) send(t *testing.T, b []byte) {
	t.Helper()
	_, err := p.body.Write(b)
	require.NoError(t, err)
}

// answer waits for the handler to answer.
func (p *pending) answer(t *testing.T) *httptest.ResponseRecorder {
	t.Helper()
	select {
	case <-p.done:
		return p.rec
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
		return nil
	}
}

// TestOverloadIsCountedAndResynced occupies the agent with reviews whose
// bodies are slow to come, then sends a normal review: it is allowed
// unless the slow ones really hold every slot or the whole body budget;
// then it is answered 503, counted, and covered by a resync.
func TestOverloadIsCountedAndResynced(t *testing.T) {
	const limit = 16 << 10
	tests := []struct {
		name    string
		slots   int
		reviews int   // slow reviews
		sent    int   // bytes each has sent
		holding int64 // body bytes they hold then
		want    int   // the normal review's status
	}{
		{"headers only: no slot, no budget", 1, 16, 0, 0, http.StatusOK},
		{"a trickle holds a small buffer, not what it announced", 8, 3, 1, 3 * 4096, http.StatusOK},
		{"every slot taken", 2, 2, 1, 2 * 4096, http.StatusServiceUnavailable},
		{"the whole body budget taken", 8, 1, 9 << 10, limit, http.StatusServiceUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixtureWith(t, admission.Options{
				MaxBodyBytes: limit, MaxConcurrent: tt.slots, MaxBodyBytesInFlight: limit, Wait: 50 * time.Millisecond, SendVersions: true,
			})
			slow := make([]*pending, tt.reviews)
			for i := range slow {
				slow[i] = f.begin(t.Context(), t, limit)
				if tt.sent > 0 {
					slow[i].send(t, []byte(strings.Repeat(" ", tt.sent)))
				}
			}
			require.Eventually(t, func() bool {
				return testutil.ToFloat64(f.metrics.AdmissionInFlight) == float64(tt.reviews) &&
					testutil.ToFloat64(f.metrics.AdmissionBodyBytes) == float64(tt.holding)
			}, 5*time.Second, time.Millisecond)

			rec := f.post(t, "/validate/lifecycle-manager", reviewBody(t, "CREATE", "", kymaKind, "default", nil, kyma(nil, nil, nil)))
			overloaded := testutil.ToFloat64(f.metrics.AdmissionRequests.WithLabelValues("unknown", metrics.DecisionOverloaded))
			if tt.want == http.StatusOK {
				assertAllowed(t, rec, "admission.k8s.io/v1", "0b3a-42")
				assert.Len(t, f.queue.keys, 1)
				assert.Zero(t, f.queue.resyncCount())
				assert.Zero(t, overloaded)
			} else {
				assert.Equal(t, tt.want, rec.Code, rec.Body.String())
				assert.Empty(t, f.queue.keys)
				assert.Equal(t, 1, f.queue.resyncCount(), "the write goes through: a resync stands for it")
				assert.InDelta(t, 1, overloaded, 0)
			}

			// Once the slow ones are gone, everything is given back.
			for _, p := range slow {
				_ = p.body.CloseWithError(io.ErrUnexpectedEOF)
				assert.Equal(t, http.StatusBadRequest, p.answer(t).Code)
			}
			assert.Zero(t, testutil.ToFloat64(f.metrics.AdmissionBodyBytes))
			assert.Zero(t, testutil.ToFloat64(f.metrics.AdmissionInFlight))
			assertAllowed(t, f.post(t, "/validate/lifecycle-manager", reviewBody(t, "CREATE", "", kymaKind, "other", nil, kyma(nil, nil, nil))),
				"admission.k8s.io/v1", "0b3a-42")
		})
	}
}

// TestWaitingEndsWithTheRequest: when the API server stops waiting, the
// write goes through without the agent, which queues the resync at once.
func TestWaitingEndsWithTheRequest(t *testing.T) {
	f := newFixtureWith(t, admission.Options{MaxConcurrent: 1, Wait: time.Minute})
	f.begin(t.Context(), t, 1024).send(t, []byte("{"))
	require.Eventually(t, func() bool { return testutil.ToFloat64(f.metrics.AdmissionBodyBytes) > 0 }, 5*time.Second, time.Millisecond)

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	p := f.begin(ctx, t, 1024)
	start := time.Now()
	p.send(t, []byte("{"))
	assert.Equal(t, http.StatusServiceUnavailable, p.answer(t).Code)
	assert.Less(t, time.Since(start), 10*time.Second, "not the whole wait")
	assert.Equal(t, 1, f.queue.resyncCount())
}

// TestBodiesAllocateOnlyWhatArrives: a review that announces the largest
// size but sends a small body costs a small buffer, not the announced one.
func TestBodiesAllocateOnlyWhatArrives(t *testing.T) {
	f := newFixture(t, 0)
	body := reviewBody(t, "CREATE", "", kymaKind, "default", nil, kyma(nil, nil, nil))
	const rounds = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range rounds {
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/validate/m", io.MultiReader(strings.NewReader(string(body))))
		req.ContentLength = admission.DefaultMaxBodyBytes
		rec := httptest.NewRecorder()
		f.mux.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code)
	}
	runtime.ReadMemStats(&after)
	perReview := (after.TotalAlloc - before.TotalAlloc) / rounds
	assert.Less(t, perReview, uint64(256<<10), "bytes allocated per review that announced %d", admission.DefaultMaxBodyBytes)
}
