package schedule

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMeterCountsSlowWrites sends real HTTP requests through the Meter to
// a server that answers writes to /slow late: writes are counted and the
// late ones called slow; reads (lists, watches) are not counted at all.
func TestMeterCountsSlowWrites(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/slow") {
			time.Sleep(60 * time.Millisecond) // the server's latency under test, not a wait for a result
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	m := NewMeter("KCP", 30*time.Millisecond)
	c := &http.Client{Transport: m.Wrap(http.DefaultTransport)}
	send := func(method, path string) {
		req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+path, strings.NewReader("{}"))
		require.NoError(t, err)
		resp, err := c.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
	}
	send(http.MethodPatch, "/slow")
	send(http.MethodPost, "/fast")
	send(http.MethodPut, "/fast")
	send(http.MethodDelete, "/slow")
	send(http.MethodGet, "/slow")
	writes, slow := m.Take()
	assert.Equal(t, int64(4), writes, "PATCH, POST, PUT and DELETE; not the GET")
	assert.Equal(t, int64(2), slow)
	writes, slow = m.Take()
	assert.Zero(t, writes+slow, "Take starts the next interval")
}
