package eventsource_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/certs/pkitest"
	"github.com/lifecycle-manager/listener"
	"github.com/lifecycle-manager/listener/event"
	"github.com/lifecycle-manager/listener/eventsource"
)

const kcpNamespace = "kcp-system"

// recorder is a reconciler that records the requests it gets.
type recorder struct {
	mu   sync.Mutex
	seen []reconcile.Request
}

func (r *recorder) Reconcile(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, req)
	return reconcile.Result{}, nil
}

func (r *recorder) requests() []reconcile.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]reconcile.Request(nil), r.seen...)
}

// kymaOf finds the Kyma of a runtime in the manager's cache, as the KCP
// operator will.
func kymaOf(ctx context.Context, c client.Reader, runtimeID string) (*v1beta2.Kyma, error) {
	var list v1beta2.KymaList
	if err := c.List(ctx, &list, client.MatchingLabels{shared.RuntimeIDLabel: runtimeID}); err != nil {
		return nil, fmt.Errorf("listing Kymas: %w", err)
	}
	if len(list.Items) != 1 {
		return nil, nil
	}
	return &list.Items[0], nil
}

// TestSourceEnqueuesTheMappedRequest runs the listener and a controller
// that watches its events in a real manager against a real API server: an
// event of a runtime enqueues exactly the request of that runtime's Kyma,
// and a runtime without Kyma is refused by the embedder's check.
func TestSourceEnqueuesTheMappedRequest(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	ctx := logf.IntoContext(t.Context(), testr.New(t))
	require.NoError(t, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kcpNamespace}}))
	for _, id := range []string{"rt-1", "rt-2"} {
		require.NoError(t, env.Client.Create(ctx, &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{
			Name: "kyma-" + id, Namespace: kcpNamespace, Labels: map[string]string{shared.RuntimeIDLabel: id},
		}}))
	}

	mgr, err := ctrl.NewManager(env.Config, manager.Options{
		Scheme:     env.Scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptrTo(true)},
		Logger:     testr.New(t),
	})
	require.NoError(t, err)
	ca := pkitest.NewCA(t, "kcp-ca")
	srv, err := listener.New(listener.Config{
		Addr:      "127.0.0.1:0",
		Managers:  []string{"klm"},
		KeyPair:   ca.Server().KeyPair(t),
		ClientCAs: ca.Bundle(),
		AcceptRuntime: func(ctx context.Context, runtimeID string) error {
			kyma, err := kymaOf(ctx, mgr.GetClient(), runtimeID)
			switch {
			case err != nil:
				return err
			case kyma == nil:
				return listener.Reject("unknown_runtime", errors.New("no Kyma has this runtime ID"))
			}
			return nil
		},
		Registerer: prometheus.NewRegistry(),
		Log:        testr.New(t),
	})
	require.NoError(t, err)
	require.NoError(t, mgr.Add(srv))

	rec := &recorder{}
	toKyma := func(ctx context.Context, ev event.Event) []reconcile.Request {
		kyma, err := kymaOf(ctx, mgr.GetClient(), ev.RuntimeID)
		if err != nil || kyma == nil {
			return nil
		}
		return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(kyma)}}
	}
	require.NoError(t, ctrl.NewControllerManagedBy(mgr).Named("kyma-events").
		WatchesRawSource(eventsource.New(srv, "klm", toKyma)).
		Complete(rec))

	mgrCtx, stop := context.WithCancel(ctx)
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(mgrCtx) }()
	t.Cleanup(func() {
		stop()
		assert.NoError(t, <-mgrDone)
	})
	require.Eventually(t, func() bool { return srv.Addr() != nil && srv.HasConsumer("klm") }, 30*time.Second, 10*time.Millisecond)
	url := "https://" + srv.Addr().String() + "/v2/klm/event"
	send := func(runtimeID, object string) int {
		leaf := ca.Client(runtimeID)
		return postEvent(t, ca, &leaf, url, object)
	}

	require.Eventually(t, func() bool { return send("rt-1", "default") == http.StatusOK }, 30*time.Second, 50*time.Millisecond,
		"accepted once the manager's cache has synced")
	want := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: kcpNamespace, Name: "kyma-rt-1"}}
	require.Eventually(t, func() bool { return len(rec.requests()) > 0 }, 30*time.Second, 10*time.Millisecond)
	assert.Equal(t, []reconcile.Request{want}, rec.requests(), "exactly the mapped request")

	assert.Equal(t, http.StatusForbidden, send("rt-unknown", "default"), "no Kyma, no event")

	assert.Equal(t, http.StatusOK, send("rt-2", "default"))
	want2 := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: kcpNamespace, Name: "kyma-rt-2"}}
	require.Eventually(t, func() bool { return len(rec.requests()) == 2 }, 30*time.Second, 10*time.Millisecond)
	assert.Equal(t, []reconcile.Request{want, want2}, rec.requests())

	err = eventsource.New(srv, "klm", toKyma).Start(ctx, nil)
	assert.ErrorContains(t, err, "has a consumer already", "one source per manager")
	err = eventsource.New(srv, "nobody", toKyma).Start(ctx, nil)
	assert.ErrorContains(t, err, "unknown manager")
}

func postEvent(t *testing.T, ca *pkitest.CA, leaf *pkitest.Leaf, url, object string) int {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: testTLS(t, ca, leaf), DialContext: (&net.Dialer{}).DialContext}
	defer tr.CloseIdleConnections()
	body := `{"watched":{"Namespace":"kyma-system","Name":"` + object + `"},` +
		`"watchedGvk":{"group":"operator.kyma-project.io","version":"v1beta2","kind":"Kyma"}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	return resp.StatusCode
}

func ptrTo[T any](v T) *T { return &v }
func testTLS(t *testing.T, ca *pkitest.CA, leaf *pkitest.Leaf) *tls.Config {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(ca.CA.Cert)
	return &tls.Config{
		RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12,
		Certificates: []tls.Certificate{leaf.TLSCertificate(t)},
	}
}
