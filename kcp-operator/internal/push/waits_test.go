package push_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/lifecycle-manager/kcp-operator/internal/push"
	"github.com/lifecycle-manager/listener/eventsource"
)

var (
	req  = types.NamespacedName{Namespace: "kcp-system", Name: "kyma-1"}
	kyma = push.Object{
		GroupKind:      schema.GroupKind{Group: "operator.kyma-project.io", Kind: "Kyma"},
		NamespacedName: types.NamespacedName{Namespace: "kyma-system", Name: "default"},
	}
	other = push.Object{GroupKind: schema.GroupKind{Kind: "ConfigMap"}, NamespacedName: types.NamespacedName{Name: "cm"}}
)

func TestStale(t *testing.T) {
	tests := []struct {
		read, old string
		want      bool
	}{
		{"10", "10", true},
		{"9", "10", true},
		{"11", "10", false},
		{"x", "x", true},
		{"y", "x", false},
		{"9", "x", false},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, push.Stale(tc.read, tc.old), "read %s after %s", tc.read, tc.old)
	}
}

// reads returns a read function that shows the versions in turn (the last
// one for ever) and counts its calls.
func reads(versions ...string) (func(context.Context) (string, error), *int) {
	calls := 0
	return func(context.Context) (string, error) {
		v := versions[min(calls, len(versions)-1)]
		calls++
		return v, nil
	}, &calls
}

func newWaits(t *testing.T, now func() time.Time) (*push.Waits, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	w, err := push.NewWaits(reg, "kyma", push.WaitsOptions{FirstBackoff: time.Millisecond, Rereads: 3, MaxAge: time.Minute, Now: now})
	require.NoError(t, err)
	return w, reg
}

func TestReadWaitsForThePushedWrite(t *testing.T) {
	tests := []struct {
		name      string
		expect    string // the pre-write version of the pushed write; "" none
		shown     []string
		wantReads int
		outcome   string
		recheck   bool
	}{
		{name: "no pushed write: one read", shown: []string{"5"}, wantReads: 1},
		{name: "the first read holds the write", expect: "5", shown: []string{"6"}, wantReads: 1, outcome: push.OutcomeFresh},
		{name: "an early read, then the write", expect: "5", shown: []string{"5", "5", "6"}, wantReads: 3, outcome: push.OutcomeCaughtUp},
		{name: "an older version is early too", expect: "5", shown: []string{"4", "7"}, wantReads: 2, outcome: push.OutcomeCaughtUp},
		{name: "gone: nothing to wait for", expect: "5", shown: []string{""}, wantReads: 1, outcome: push.OutcomeFresh},
		{name: "never stored: bounded, then a second look", expect: "5", shown: []string{"5"}, wantReads: 4, outcome: push.OutcomeGaveUp, recheck: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, reg := newWaits(t, time.Now)
			w.Expect(req, kyma, tc.expect, time.Now())
			p := w.Take(req)
			read, calls := reads(tc.shown...)
			require.NoError(t, p.Read(t.Context(), kyma, read))
			assert.Equal(t, tc.wantReads, *calls)
			if tc.outcome != "" {
				assert.InDelta(t, 1, readsOf(t, reg, tc.outcome), 0, "outcome %s", tc.outcome)
			}
			res := p.Finish(ctrl.Result{RequeueAfter: time.Hour}, 500*time.Millisecond)
			if tc.recheck {
				assert.Equal(t, 500*time.Millisecond, res.RequeueAfter, "an unsettled wait asks for a second look")
				if assert.NotNil(t, res.Priority, "with the pushed priority") {
					assert.Equal(t, eventsource.Priority, *res.Priority, "not behind a release's bulk work")
				}
				assert.Equal(t, 1, w.Len(), "and stays for the next reconcile")
			} else {
				assert.Equal(t, ctrl.Result{RequeueAfter: time.Hour}, res, "as the reconcile asked")
				assert.Zero(t, w.Len())
			}
		})
	}
}

// readsOf is the count of reads with the outcome.
func readsOf(t *testing.T, reg *prometheus.Registry, outcome string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" && l.GetValue() == outcome {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

func TestAWriteNeverReadIsLookedAtAgain(t *testing.T) {
	w, _ := newWaits(t, time.Now)
	w.Expect(req, other, "3", time.Now())
	p := w.Take(req)
	read, _ := reads("9")
	require.NoError(t, p.Read(t.Context(), kyma, read), "the reconcile reads another object only")
	assert.Equal(t, 500*time.Millisecond, p.Finish(ctrl.Result{}, 500*time.Millisecond).RequeueAfter, "the ConfigMap's write was not confirmed")
	assert.Equal(t, 1, w.Len())
}

func TestWritesMergeToTheNewest(t *testing.T) {
	w, _ := newWaits(t, time.Now)
	w.Expect(req, kyma, "7", time.Now())
	w.Expect(req, kyma, "9", time.Now())
	w.Expect(req, kyma, "8", time.Now())
	w.Expect(req, kyma, "", time.Now()) // a versionless event has its own second look
	p := w.Take(req)
	assert.Zero(t, w.Len(), "taken")
	read, calls := reads("9", "10")
	require.NoError(t, p.Read(t.Context(), kyma, read))
	assert.Equal(t, 2, *calls, "9 is the pre-write version of the newest write: early")
}

func TestOldWaitsAreGivenUp(t *testing.T) {
	now := time.Now()
	clock := func() time.Time { return now }
	w, reg := newWaits(t, clock)
	w.Expect(req, kyma, "5", now)
	now = now.Add(2 * time.Minute)
	p := w.Take(req)
	read, _ := reads("5")
	require.NoError(t, p.Read(t.Context(), kyma, read))
	assert.Equal(t, time.Hour, p.Finish(ctrl.Result{RequeueAfter: time.Hour}, time.Second).RequeueAfter, "past MaxAge the resync covers it")
	assert.Zero(t, w.Len())
	assert.InDelta(t, 1, readsOf(t, reg, push.OutcomeExpired), 0)
}

func TestReadHonoursTheContext(t *testing.T) {
	w, _ := newWaits(t, time.Now)
	w.Expect(req, kyma, "5", time.Now())
	p := w.Take(req)
	ctx, cancel := context.WithCancel(t.Context())
	read := func(context.Context) (string, error) { cancel(); return "5", nil }
	assert.ErrorIs(t, p.Read(ctx, kyma, read), context.Canceled)
}

func TestNilWaitsHoldNothing(t *testing.T) {
	var w *push.Waits
	w.Expect(req, kyma, "5", time.Now())
	p := w.Take(req)
	read, calls := reads("5")
	require.NoError(t, p.Read(t.Context(), kyma, read))
	assert.Equal(t, 1, *calls)
	assert.Equal(t, time.Hour, p.Finish(ctrl.Result{RequeueAfter: time.Hour}, time.Second).RequeueAfter)
}

func TestTheContextCarriesTheReconcilesWaits(t *testing.T) {
	w, _ := newWaits(t, time.Now)
	w.Expect(req, kyma, "5", time.Now())
	ctx := push.NewContext(t.Context(), w.Take(req))
	read, calls := reads("5", "6")
	require.NoError(t, push.FromContext(ctx).Read(ctx, kyma, read))
	assert.Equal(t, 2, *calls)

	read, calls = reads("5")
	require.NoError(t, push.FromContext(t.Context()).Read(t.Context(), kyma, read), "no waits without a reconcile's")
	assert.Equal(t, 1, *calls)
}

func TestAwaitsUntilTheWriteIsSeen(t *testing.T) {
	w, _ := newWaits(t, time.Now)
	w.Expect(req, kyma, "5", time.Now())
	p := w.Take(req)
	assert.True(t, p.Awaits(kyma), "a pushed write not read yet")
	read, _ := reads("6")
	require.NoError(t, p.Read(t.Context(), kyma, read))
	assert.False(t, p.Awaits(kyma), "the write was read")
	assert.False(t, push.FromContext(t.Context()).Awaits(kyma), "no waits without a reconcile's")
}
