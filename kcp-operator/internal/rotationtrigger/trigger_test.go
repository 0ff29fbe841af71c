package rotationtrigger_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/pushpki"
	"github.com/lifecycle-manager/certs/tlssecret"
	"github.com/lifecycle-manager/kcp-operator/internal/rotationtrigger"
)

type fixture struct {
	c      client.Client
	pki    *pushpki.PKI
	bundle client.ObjectKey
	events *events.FakeRecorder
	offset atomic.Int64
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	env := testenv.New(t, testenv.Options{})
	f := &fixture{c: env.Client, events: events.NewFakeRecorder(10)}
	opts := config.Defaults()
	opts.Now = func() time.Time { return time.Now().Add(time.Duration(f.offset.Load())) }
	require.NoError(t, env.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: opts.Namespace}}))
	var err error
	f.pki, err = pushpki.New(env.Client, opts, nil, testr.New(t))
	require.NoError(t, err)
	_, err = f.pki.Rotator.Reconcile(t.Context())
	require.NoError(t, err)
	f.bundle = client.ObjectKey{Namespace: opts.Namespace, Name: opts.BundleSecret}
	f.offset.Add(int64(opts.GracePeriod)) // the first CA joined long ago
	return f
}

func (f *fixture) trigger(t *testing.T, c client.Client) *rotationtrigger.Trigger {
	return &rotationtrigger.Trigger{Client: c, Bundle: f.bundle, Rotator: f.pki.Rotator, Interval: time.Second, Log: testr.New(t), Events: f.events}
}

func (f *fixture) secret(t *testing.T) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	require.NoError(t, f.c.Get(t.Context(), f.bundle, s))
	return s
}

func (f *fixture) cas(t *testing.T) int {
	t.Helper()
	cas, err := pki.ParseCerts(f.secret(t).Data[tlssecret.CAKey])
	require.NoError(t, err)
	return len(cas)
}

// patchFails stands for a crash between the rotation and the patch that
// records its request as handled.
type patchFails struct{ client.Client }

func (patchFails) Patch(context.Context, client.Object, client.Patch, ...client.PatchOption) error {
	return errors.New("the operator stopped here")
}

func TestARequestSeenAgainAfterACrashRotatesOnce(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	s := f.secret(t)
	s.Annotations[shared.RotateCAAnnotation] = "2030-01-01T00:00:00Z"
	require.NoError(t, f.c.Update(ctx, s))

	require.ErrorContains(t, f.trigger(t, patchFails{f.c}).Check(ctx), "recording the handled rotation request")
	require.Equal(t, 2, f.cas(t), "the rotation ran")
	assert.Empty(t, f.secret(t).Annotations[shared.CARotatedForAnnotation], "but was not recorded as handled")

	f.offset.Add(int64(config.DefaultGracePeriod + time.Minute)) // the rotation is over
	_, err := f.pki.Rotator.Reconcile(ctx)
	require.NoError(t, err)
	require.NoError(t, f.trigger(t, f.c).Check(ctx))
	assert.Equal(t, 2, f.cas(t), "the restarted operator does not rotate a second time")
	assert.Equal(t, "2030-01-01T00:00:00Z", f.secret(t).Annotations[shared.CARotatedForAnnotation])
}

func TestAnEmergencyRequestSeenAgainAfterACrashRotatesOnce(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	s := f.secret(t)
	s.Annotations[rotationtrigger.EmergencyAnnotation] = "2030-01-01T00:00:00Z"
	require.NoError(t, f.c.Update(ctx, s))

	require.ErrorContains(t, f.trigger(t, patchFails{f.c}).Check(ctx), "recording the handled emergency rotation request")
	require.Equal(t, 2, f.cas(t), "the emergency rotation ran")
	require.NoError(t, f.trigger(t, f.c).Check(ctx), "seen again while it runs")
	assert.Equal(t, 2, f.cas(t))

	f.offset.Add(int64(config.DefaultEmergencyDeadline + time.Minute)) // it is over
	_, err := f.pki.Rotator.Reconcile(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, f.cas(t), "the old CA left")
	s = f.secret(t)
	delete(s.Annotations, rotationtrigger.EmergencyHandledAnnotation) // as if the patch above had failed too
	require.NoError(t, f.c.Update(ctx, s))
	require.NoError(t, f.trigger(t, f.c).Check(ctx))
	assert.Equal(t, 1, f.cas(t), "the restarted operator starts no second emergency rotation")
	assert.False(t, f.pki.Rotator.Emergency().Active)
}

func TestADroppedForeignCAIsAnEventOnTheBundle(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	key, err := pki.GenerateKey(pki.ECDSAP256)
	require.NoError(t, err)
	foreign, err := pki.NewCA("someone else's CA", key, time.Now(), time.Hour)
	require.NoError(t, err)
	s := f.secret(t)
	s.Data[tlssecret.CAKey] = append(s.Data[tlssecret.CAKey], pki.EncodeCerts(foreign.Cert)...)
	require.NoError(t, f.c.Update(ctx, s))

	_, err = f.pki.Rotator.Reconcile(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, f.cas(t))
	require.NoError(t, f.trigger(t, f.c).Check(ctx))
	require.Len(t, f.events.Events, 1)
	ev := <-f.events.Events
	assert.True(t, strings.HasPrefix(ev, "Warning "+rotationtrigger.ReasonForeignCADropped), ev)
	assert.Contains(t, ev, "someone else's CA")
}
