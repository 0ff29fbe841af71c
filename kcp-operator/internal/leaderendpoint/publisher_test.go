package leaderendpoint_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/kcp-operator/internal/leaderendpoint"
)

const (
	ns      = "kcp-system"
	timeout = 30 * time.Second
	tick    = 20 * time.Millisecond
)

func newEnv(t *testing.T) *testenv.Env {
	t.Helper()
	env := testenv.New(t, testenv.Options{WithoutAPICRDs: true})
	require.NoError(t, env.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	require.NoError(t, env.Client.Create(t.Context(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "events"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https-events", Port: 8082, TargetPort: intstr.FromString("listener")}}},
	}))
	return env
}

func slice(t *testing.T, env *testenv.Env) (*discoveryv1.EndpointSlice, error) {
	t.Helper()
	s := &discoveryv1.EndpointSlice{}
	return s, env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: leaderendpoint.SliceName("events")}, s)
}

// readyAt reports whether the slice's one endpoint is ip, ready, at port.
func readyAt(s *discoveryv1.EndpointSlice, ip string, port int32) bool {
	return leaderendpoint.Names(s, netip.MustParseAddr(ip)) && *s.Endpoints[0].Conditions.Ready &&
		len(s.Ports) == 1 && *s.Ports[0].Port == port && *s.Ports[0].Name == "https-events"
}

// replica is a manager with leader election and a Publisher, as the operator has.
type replica struct {
	ip   string
	stop context.CancelFunc
	// done is closed when the manager returned err.
	done chan struct{}
	err  error
}

// stopped stops the replica and returns how its manager ended.
func (r *replica) stopped() error {
	r.stop()
	<-r.done
	return r.err
}

func startReplica(t *testing.T, env *testenv.Env, ip string, port int, recheck time.Duration) *replica {
	t.Helper()
	lease, renew, retry := 3*time.Second, 2*time.Second, 200*time.Millisecond
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		LeaderElection: true, LeaderElectionID: "standby-test", LeaderElectionNamespace: ns, LeaderElectionReleaseOnCancel: true,
		LeaseDuration: &lease, RenewDeadline: &renew, RetryPeriod: &retry,
	})
	require.NoError(t, err)
	require.NoError(t, mgr.Add(&leaderendpoint.Publisher{
		Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Service: types.NamespacedName{Namespace: ns, Name: "events"},
		IP: netip.MustParseAddr(ip), Elected: mgr.Elected(), Port: func() int { return port }, Ready: func() bool { return true },
		Poll: 50 * time.Millisecond, Recheck: recheck, Log: testr.New(t).WithValues("replica", ip),
	}))
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{ip: ip, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.err = mgr.Start(ctx)
	}()
	t.Cleanup(func() { _ = r.stopped() })
	return r
}

func TestOnlyTheLeaderIsInTheListenerServiceAndTheStandbyTakesOver(t *testing.T) {
	env := newEnv(t)
	a := startReplica(t, env, "10.0.0.1", 8082, time.Second)
	b := startReplica(t, env, "10.0.0.2", 8082, time.Second)

	var leader, standby *replica
	require.Eventually(t, func() bool {
		s, err := slice(t, env)
		if err != nil {
			return false
		}
		for _, r := range [][2]*replica{{a, b}, {b, a}} {
			if readyAt(s, r[0].ip, 8082) {
				leader, standby = r[0], r[1]
				return true
			}
		}
		return false
	}, timeout, tick, "the leader names itself, and only itself, in the Service's EndpointSlice")
	s, err := slice(t, env)
	require.NoError(t, err)
	assert.Equal(t, "events", s.Labels[discoveryv1.LabelServiceName])
	assert.Equal(t, leaderendpoint.ManagedBy, s.Labels[discoveryv1.LabelManagedBy])
	require.Len(t, s.OwnerReferences, 1, "the slice goes with its Service")

	require.NoError(t, leader.stopped())
	require.Eventually(t, func() bool {
		s, err := slice(t, env)
		return err == nil && readyAt(s, standby.ip, 8082)
	}, timeout, tick, "the standby takes the released Lease and the Service routes to it")
}

func TestAStoppingLeaderMarksItsEndpointNotReadyButNeverItsSuccessors(t *testing.T) {
	env := newEnv(t)
	for name, successor := range map[string]bool{"alone": false, "after a successor wrote the slice": true} {
		t.Run(name, func(t *testing.T) {
			r := startReplica(t, env, "10.0.0.3", 9000, 0) // no recheck: the test plays the successor
			require.Eventually(t, func() bool {
				s, err := slice(t, env)
				return err == nil && readyAt(s, r.ip, 9000)
			}, timeout, tick)
			if successor {
				s, err := slice(t, env)
				require.NoError(t, err)
				s.Endpoints[0].Addresses = []string{"10.0.0.4"}
				require.NoError(t, env.Client.Update(t.Context(), s))
			}
			require.NoError(t, r.stopped())
			s, err := slice(t, env)
			require.NoError(t, err)
			if successor {
				assert.True(t, readyAt(s, "10.0.0.4", 9000), "the successor's endpoint stays ready: %+v", s.Endpoints)
				return
			}
			require.True(t, leaderendpoint.Names(s, netip.MustParseAddr(r.ip)))
			c := s.Endpoints[0].Conditions
			assert.False(t, *c.Ready, "no new connections to a stopping leader")
			assert.True(t, *c.Terminating)
		})
	}
}

func TestNothingIsPublishedBeforeTheListenerHasConsumers(t *testing.T) {
	env := newEnv(t)
	asked := make(chan struct{}, 16)
	elected := make(chan struct{})
	close(elected)
	p := &leaderendpoint.Publisher{
		Client: env.Client, Reader: env.Client, Service: types.NamespacedName{Namespace: ns, Name: "events"},
		IP: netip.MustParseAddr("10.0.0.5"), Elected: elected, Port: func() int { return 8082 },
		Ready: func() bool {
			select {
			case asked <- struct{}{}:
			default:
			}
			return false
		},
		Poll: 10 * time.Millisecond, Log: testr.New(t),
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Start(ctx) }()
	<-asked
	<-asked // the publisher went round once more without consumers
	_, err := slice(t, env)
	assert.True(t, apierrors.IsNotFound(err), "no slice without consumers: %v", err)
	cancel()
	require.NoError(t, <-done)
}

func TestTheLeaderWritesItsEndpointAgainWhenTheSliceIsLostOrChanged(t *testing.T) {
	env := newEnv(t)
	r := startReplica(t, env, "10.0.0.6", 8082, 100*time.Millisecond)
	published := func() bool {
		s, err := slice(t, env)
		return err == nil && readyAt(s, r.ip, 8082)
	}
	require.Eventually(t, published, timeout, tick)
	s, err := slice(t, env)
	require.NoError(t, err)
	require.NoError(t, env.Client.Delete(t.Context(), s))
	require.Eventually(t, published, timeout, tick, "a deleted slice comes back")

	s, err = slice(t, env)
	require.NoError(t, err)
	no := false
	s.Endpoints[0].Conditions.Ready = &no
	require.NoError(t, env.Client.Update(t.Context(), s))
	require.Eventually(t, published, timeout, tick, "an endpoint marked not ready by someone else is ready again")
}
