package schedule

import (
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// Meter counts the writes sent through it to one kind of API server and
// those slower than its target. The zero value is not usable; use
// NewMeter.
type Meter struct {
	// servers names the API servers it times, for logs and metrics.
	servers string
	target  time.Duration
	now     func() time.Time

	writes atomic.Int64
	slow   atomic.Int64
}

// NewMeter returns a Meter of the writes to servers ("KCP", "runtime")
// that calls a write slow beyond target.
func NewMeter(servers string, target time.Duration) *Meter {
	return &Meter{servers: servers, target: target, now: time.Now}
}

// Wrap returns next with the Meter timing its writes; it fits
// rest.Config.Wrap.
func (m *Meter) Wrap(next http.RoundTripper) http.RoundTripper {
	return &timedTransport{next: next, meter: m}
}

// Take returns the writes and slow writes counted since the last Take.
func (m *Meter) Take() (writes, slow int64) {
	return m.writes.Swap(0), m.slow.Swap(0)
}

func (m *Meter) observe(took time.Duration) {
	m.writes.Add(1)
	if took > m.target {
		m.slow.Add(1)
	}
}

type timedTransport struct {
	next  http.RoundTripper
	meter *Meter
}

// RoundTrip times writes only: reads include lists and watches, whose
// time says how much there is to read, not how busy the server is.
func (t *timedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !isWrite(req.Method) {
		return t.next.RoundTrip(req)
	}
	start := t.meter.now()
	resp, err := t.next.RoundTrip(req)
	t.meter.observe(t.meter.now().Sub(start))
	return resp, err
}

func isWrite(method string) bool {
	switch strings.ToUpper(method) {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}
