package catalog

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
)

// One API server plays the KCP (namespace kcp) and the runtime (namespace
// rt): the catalog code reads one and writes the other through separate
// clients, as it does with two clusters.
const (
	kcpNS     = "kcp"
	runtimeNS = "rt"
)

// TestANewRuntimeGetsItsCatalogWithWritesInParallel syncs a catalog into
// an empty runtime namespace whose API server is slow to answer writes
// (each held briefly by the test's transport) and checks that the writes
// overlap, within the bound, and that the result is complete.
func TestANewRuntimeGetsItsCatalogWithWritesInParallel(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	createNamespaces(t, env.Client)
	const templates = 3 * parallelWrites
	for i := range templates {
		createTemplate(t, env.Client, fmt.Sprintf("module-%02d", i), i%2 == 0)
	}
	slow := &slowWrites{hold: 100 * time.Millisecond}
	rt := runtimeClient(t, env, slow)

	res, err := Sync(t.Context(), env.Client, kyma(), rt)
	require.NoError(t, err)
	assert.Equal(t, templates, res.Applied)
	assert.Equal(t, templates, countRuntimeTemplates(t, env.Client))
	assert.Greater(t, slow.maxInFlight(), 1, "the writes of a sync overlap")
	assert.LessOrEqual(t, slow.maxInFlight(), parallelWrites, "at most parallelWrites at once")

	require.NoError(t, env.Client.DeleteAllOf(t.Context(), &v1beta2.ModuleTemplate{}, client.InNamespace(kcpNS),
		client.MatchingLabels{"half": "yes"}))
	res, err = Sync(t.Context(), env.Client, kyma(), rt)
	require.NoError(t, err)
	assert.Equal(t, templates/2, res.Removed, "templates gone from the KCP leave the runtime")
	assert.Equal(t, templates-templates/2, countRuntimeTemplates(t, env.Client))
}

// TestAFailedCatalogWriteIsReportedAndStopsTheSync checks that a write the
// runtime refuses comes back as an error naming the object, and that the
// catalog is not remembered as synced, so the next sync tries again.
func TestAFailedCatalogWriteIsReportedAndStopsTheSync(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	createNamespaces(t, env.Client)
	for i := range parallelWrites {
		createTemplate(t, env.Client, fmt.Sprintf("module-%02d", i), false)
	}
	failing := &slowWrites{refuse: "module-03"}
	rt := runtimeClient(t, env, failing)

	res, err := Sync(t.Context(), env.Client, kyma(), rt)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "module-03")
	assert.Less(t, res.Applied, parallelWrites)
	assert.Empty(t, rt.Facts.Recall("catalog/"+runtimeNS), "a failed sync is not remembered")

	failing.refuse = ""
	res, err = Sync(t.Context(), env.Client, kyma(), rt)
	require.NoError(t, err)
	assert.Equal(t, parallelWrites, countRuntimeTemplates(t, env.Client))
	assert.Positive(t, res.Applied, "the next sync writes what the failed one left")
}

// TestRemovingTheCatalogTakesOneWritePerKind removes a runtime catalog of
// many templates and checks that it costs one write per kind, not one per
// object, and that it leaves alone what is not the catalog: a template
// without our label and the catalog of another runtime on the same server.
func TestRemovingTheCatalogTakesOneWritePerKind(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	createNamespaces(t, env.Client)
	const templates = 3 * parallelWrites
	for i := range templates {
		createTemplate(t, env.Client, fmt.Sprintf("module-%02d", i), false)
	}
	writes := &slowWrites{}
	rt := runtimeClient(t, env, writes)
	_, err := Sync(t.Context(), env.Client, kyma(), rt)
	require.NoError(t, err)
	require.NoError(t, env.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rt-other"}}))
	other := &remote.Runtime{Client: rt.Client, Namespace: "rt-other", Facts: &remote.Facts{}}
	_, err = Sync(t.Context(), env.Client, kyma(), other)
	require.NoError(t, err)
	users := &v1beta2.ModuleTemplate{ObjectMeta: metav1.ObjectMeta{Name: "users-own", Namespace: runtimeNS},
		Spec: v1beta2.ModuleTemplateSpec{ModuleName: "own", Version: "1.0.0",
			Descriptor: runtime.RawExtension{Raw: []byte(`{"component":{"name":"kyma-project.io/module/own"}}`)}}}
	require.NoError(t, env.Client.Create(t.Context(), users))

	before := writes.writeCount()
	require.NoError(t, Remove(t.Context(), rt))
	assert.Equal(t, 2, writes.writeCount()-before, "one write per kind")
	assert.Equal(t, 1, countRuntimeTemplates(t, env.Client), "only the template without our label stays")
	var left v1beta2.ModuleTemplateList
	require.NoError(t, env.Client.List(t.Context(), &left, client.InNamespace("rt-other")))
	assert.Len(t, left.Items, templates, "another runtime's catalog stays")
	assert.Empty(t, rt.Facts.Recall("catalog/"+runtimeNS), "a removed catalog is not remembered as synced")
}

// TestAChangedTemplateReplacesItsRuntimeCopy: what the KCP's template no
// longer has (a label, a field of its descriptor) leaves the runtime copy
// too, and so does what someone added to the copy in the runtime.
func TestAChangedTemplateReplacesItsRuntimeCopy(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	createNamespaces(t, env.Client)
	createTemplate(t, env.Client, "module-00", true)
	rt := runtimeClient(t, env, &slowWrites{})
	_, err := Sync(t.Context(), env.Client, kyma(), rt)
	require.NoError(t, err)

	copyKey := client.ObjectKey{Namespace: runtimeNS, Name: "module-00"}
	edited := &v1beta2.ModuleTemplate{}
	require.NoError(t, env.Client.Get(t.Context(), copyKey, edited))
	edited.Labels["added-in-the-runtime"] = "yes"
	require.NoError(t, env.Client.Update(t.Context(), edited))
	kcpTemplate := &v1beta2.ModuleTemplate{}
	require.NoError(t, env.Client.Get(t.Context(), client.ObjectKey{Namespace: kcpNS, Name: "module-00"}, kcpTemplate))
	delete(kcpTemplate.Labels, "half")
	kcpTemplate.Spec.Descriptor = runtime.RawExtension{Raw: []byte(`{"component":{"version":"2.0.0"}}`)}
	require.NoError(t, env.Client.Update(t.Context(), kcpTemplate))

	res, err := Sync(t.Context(), env.Client, kyma(), &remote.Runtime{Client: rt.Client, Namespace: runtimeNS, Facts: &remote.Facts{}})
	require.NoError(t, err)
	assert.Equal(t, 1, res.Applied)
	replaced := &v1beta2.ModuleTemplate{}
	require.NoError(t, env.Client.Get(t.Context(), copyKey, replaced))
	assert.NotContains(t, replaced.Labels, "half", "a label the KCP dropped")
	assert.NotContains(t, replaced.Labels, "added-in-the-runtime", "a label added in the runtime")
	assert.JSONEq(t, `{"component":{"version":"2.0.0"}}`, string(replaced.Spec.Descriptor.Raw), "the descriptor as the KCP has it")
}

func createNamespaces(t *testing.T, c client.Client) {
	t.Helper()
	for _, ns := range []string{kcpNS, runtimeNS} {
		require.NoError(t, c.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
}

func createTemplate(t *testing.T, c client.Client, name string, inHalf bool) {
	t.Helper()
	half := "no"
	if inHalf {
		half = "yes"
	}
	mt := &v1beta2.ModuleTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: kcpNS, Labels: map[string]string{"half": half}},
		Spec: v1beta2.ModuleTemplateSpec{ModuleName: "sample", Version: "1.0.0",
			Descriptor: runtime.RawExtension{Raw: []byte(`{"component":{"name":"kyma-project.io/module/` + name + `"}}`)}},
	}
	require.NoError(t, c.Create(t.Context(), mt))
}

func kyma() *v1beta2.Kyma {
	return &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{Name: "k", Namespace: kcpNS}}
}

func countRuntimeTemplates(t *testing.T, c client.Client) int {
	t.Helper()
	var list v1beta2.ModuleTemplateList
	require.NoError(t, c.List(t.Context(), &list, client.InNamespace(runtimeNS)))
	return len(list.Items)
}

// runtimeClient is the runtime's client with writes passing through w.
func runtimeClient(t *testing.T, env *testenv.Env, w *slowWrites) *remote.Runtime {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 1000, 1000 // the test is about parallelism, not the rate limit
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper { w.next = next; return w })
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	require.NoError(t, err)
	return &remote.Runtime{Client: c, Namespace: runtimeNS, Facts: &remote.Facts{}}
}

// slowWrites is the test's stand-in for a slow or refusing runtime API
// server in front of the real one: it holds each write for hold, refuses
// writes whose path contains refuse, and records the writes in flight.
type slowWrites struct {
	next   http.RoundTripper
	hold   time.Duration
	refuse string

	mu       sync.Mutex
	inFlight int
	max      int
	writes   int
}

func (s *slowWrites) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet {
		return s.next.RoundTrip(req)
	}
	target := req.URL.Path
	if req.Method == http.MethodPost && req.Body != nil {
		// A create names its object in the body, not the path.
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		target += " " + string(body)
	}
	s.mu.Lock()
	s.writes++
	s.inFlight++
	s.max = max(s.max, s.inFlight)
	refuse := s.refuse != "" && strings.Contains(target, s.refuse)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	if err := sleep(req.Context(), s.hold); err != nil {
		return nil, err
	}
	if refuse {
		return nil, fmt.Errorf("the test refuses %s", req.URL.Path)
	}
	return s.next.RoundTrip(req)
}

func (s *slowWrites) writeCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes
}

func (s *slowWrites) maxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.max
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// TestThePublicCatalogIsTakenOver: a runtime the public lifecycle manager
// ran holds its catalog copies (managed-by kyma). A copy of a template the
// KCP still has is replaced by ours, one of a template it no longer has is
// pruned; a template someone else made in the namespace stays.
func TestThePublicCatalogIsTakenOver(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	createNamespaces(t, env.Client)
	createTemplate(t, env.Client, "module-00", true)
	for _, c := range []struct{ name, managedBy string }{
		{"module-00", shared.PublicManagedByValue}, {"gone-00", shared.PublicManagedByValue}, {"someones-00", "someone"},
	} {
		require.NoError(t, env.Client.Create(t.Context(), &v1beta2.ModuleTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: c.name, Namespace: runtimeNS, Labels: map[string]string{shared.ManagedByLabel: c.managedBy}},
			Spec:       v1beta2.ModuleTemplateSpec{ModuleName: "sample", Version: "0.9.0", Descriptor: runtime.RawExtension{Raw: []byte(`{}`)}},
		}))
	}

	res, err := Sync(t.Context(), env.Client, kyma(), runtimeClient(t, env, &slowWrites{}))
	require.NoError(t, err)
	assert.Equal(t, 1, res.Applied)
	assert.Equal(t, 1, res.Removed)
	replaced := &v1beta2.ModuleTemplate{}
	require.NoError(t, env.Client.Get(t.Context(), client.ObjectKey{Namespace: runtimeNS, Name: "module-00"}, replaced))
	assert.Equal(t, shared.OperatorName, replaced.Labels[shared.ManagedByLabel])
	assert.Equal(t, "1.0.0", replaced.Spec.Version)
	err = env.Client.Get(t.Context(), client.ObjectKey{Namespace: runtimeNS, Name: "gone-00"}, &v1beta2.ModuleTemplate{})
	assert.True(t, apierrors.IsNotFound(err), "the public copy of a template the KCP lacks is pruned: %v", err)
	assert.NoError(t, env.Client.Get(t.Context(), client.ObjectKey{Namespace: runtimeNS, Name: "someones-00"}, &v1beta2.ModuleTemplate{}))
}
