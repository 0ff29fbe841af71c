package admission_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/skr-agent/internal/admission"
	"github.com/lifecycle-manager/skr-agent/internal/event"
	"github.com/lifecycle-manager/skr-agent/internal/metrics"
)

// recorder is the queue as the handler sees it: it records what was queued.
type recorder struct {
	mu       sync.Mutex
	keys     []event.Key
	versions []string
	resyncs  int
}

func (r *recorder) Resync() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.resyncs++
}

func (r *recorder) resyncCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.resyncs
}

func (r *recorder) Enqueue(k event.Key, oldVersion string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keys = append(r.keys, k)
	r.versions = append(r.versions, oldVersion)
}

type fixture struct {
	queue   *recorder
	metrics *metrics.Metrics
	mux     *http.ServeMux
}

func newFixture(t *testing.T, maxBytes int64) *fixture {
	t.Helper()
	return newFixtureWith(t, admission.Options{MaxBodyBytes: maxBytes, SendVersions: true})
}

func newFixtureWith(t *testing.T, opts admission.Options) *fixture {
	t.Helper()
	m, err := metrics.New(prometheus.NewRegistry(), func() int { return 0 })
	require.NoError(t, err)
	f := &fixture{queue: &recorder{}, metrics: m, mux: http.NewServeMux()}
	// Debug logging on, as with --zap-log-level=debug: every decision is
	// logged, including those that queue nothing.
	debug := funcr.New(func(string, string) {}, funcr.Options{Verbosity: 1})
	f.mux.Handle(admission.Pattern, admission.NewHandler(f.queue, m, opts, debug))
	return f
}

func (f *fixture) post(t *testing.T, path string, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	f.mux.ServeHTTP(rec, req)
	return rec
}

var kymaKind = map[string]string{"group": "operator.kyma-project.io", "version": "v1beta2", "kind": "Kyma"}

func kyma(spec, status any, labels map[string]string) map[string]any {
	obj := map[string]any{
		"apiVersion": "operator.kyma-project.io/v1beta2", "kind": "Kyma",
		"metadata": map[string]any{"name": "default", "namespace": "kyma-system", "labels": labels, "resourceVersion": "1"},
	}
	if spec != nil {
		obj["spec"] = spec
	}
	if status != nil {
		obj["status"] = status
	}
	return obj
}

func configMap(data map[string]string, resourceVersion string, labels map[string]string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{
			"name": "cm", "namespace": "ns", "resourceVersion": resourceVersion, "labels": labels,
			"managedFields": []any{map[string]any{"manager": "kubectl", "time": "2025-01-01T00:00:0" + resourceVersion + "Z"}},
		},
		"data": data,
	}
}

// reviewBody builds an AdmissionReview; oldObj and newObj may be nil, a
// map (encoded) or a json.RawMessage (sent as is).
func reviewBody(t *testing.T, op, sub string, kind map[string]string, name string, oldObj, newObj any) []byte {
	t.Helper()
	req := map[string]any{
		"uid": "0b3a-42", "kind": kind, "resource": map[string]string{"group": kind["group"], "version": kind["version"], "resource": "things"},
		"subResource": sub, "name": name, "namespace": "kyma-system", "operation": op,
		"object": newObj, "oldObject": oldObj,
	}
	b, err := json.Marshal(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req})
	require.NoError(t, err)
	return b
}

func TestRelevance(t *testing.T) {
	spec1 := map[string]any{"channel": "regular", "modules": []any{map[string]any{"name": "a"}}}
	spec2 := map[string]any{"channel": "fast", "modules": []any{map[string]any{"name": "a"}}}
	ready, failed := map[string]any{"state": "Ready"}, map[string]any{"state": "Error"}
	cmKind := map[string]string{"group": "", "version": "v1", "kind": "ConfigMap"}
	kymaKey := event.NewKey("lifecycle-manager", event.KymaGVK, "kyma-system", "default")
	cmKey := event.NewKey("lifecycle-manager", event.GVK{Version: "v1", Kind: "ConfigMap"}, "ns", "cm")
	sameSpecOtherSpacing := json.RawMessage(`{"apiVersion":"operator.kyma-project.io/v1beta2","kind":"Kyma",` +
		`"metadata":{"name":"default","namespace":"kyma-system"},"spec":{ "channel": "regular",` + "\n" + ` "modules":[ {"name":"a"} ] }}`)

	tests := []struct {
		name           string
		op, sub        string
		kind           map[string]string
		requestName    string
		oldObj, newObj any
		decision       string
		key            event.Key
	}{
		{"create", "CREATE", "", kymaKind, "default", nil, kyma(spec1, nil, nil), metrics.DecisionQueued, kymaKey},
		{"create with generateName names the object", "CREATE", "", kymaKind, "", nil, kyma(spec1, nil, nil), metrics.DecisionQueued, kymaKey},
		{"delete", "DELETE", "", kymaKind, "default", kyma(spec1, ready, nil), nil, metrics.DecisionQueued, kymaKey},
		{"delete without old object uses the request", "DELETE", "", kymaKind, "default", nil, nil, metrics.DecisionQueued,
			event.NewKey("lifecycle-manager", event.KymaGVK, "kyma-system", "default")},
		{"update spec changed", "UPDATE", "", kymaKind, "default", kyma(spec1, ready, nil), kyma(spec2, ready, nil), metrics.DecisionQueued, kymaKey},
		{"update only status changed", "UPDATE", "", kymaKind, "default", kyma(spec1, ready, nil), kyma(spec1, failed, nil), metrics.DecisionUnchanged, event.Key{}},
		{"update only labels changed", "UPDATE", "", kymaKind, "default", kyma(spec1, ready, map[string]string{"a": "1"}),
			kyma(spec1, ready, map[string]string{"a": "2"}), metrics.DecisionUnchanged, event.Key{}},
		{"update same spec spaced differently", "UPDATE", "", kymaKind, "default", kyma(spec1, nil, nil), sameSpecOtherSpacing, metrics.DecisionUnchanged, event.Key{}},
		{"update spec removed", "UPDATE", "", kymaKind, "default", kyma(spec1, nil, nil), kyma(nil, nil, nil), metrics.DecisionQueued, kymaKey},
		{"update status subresource, status changed", "UPDATE", "status", kymaKind, "default", kyma(spec1, ready, nil), kyma(spec1, failed, nil), metrics.DecisionQueued, kymaKey},
		{"update status subresource, status added", "UPDATE", "status", kymaKind, "default", kyma(spec1, nil, nil), kyma(spec1, ready, nil), metrics.DecisionQueued, kymaKey},
		{"update status subresource, status same", "UPDATE", "status", kymaKind, "default", kyma(spec1, ready, nil), kyma(spec2, ready, nil), metrics.DecisionUnchanged, event.Key{}},
		{"update other subresource", "UPDATE", "scale", kymaKind, "default", kyma(spec1, nil, nil), kyma(spec2, nil, nil), metrics.DecisionIgnored, event.Key{}},
		{"update without spec, data changed", "UPDATE", "", cmKind, "cm", configMap(map[string]string{"a": "1"}, "1", nil),
			configMap(map[string]string{"a": "2"}, "2", nil), metrics.DecisionQueued, cmKey},
		{"update without spec, labels changed", "UPDATE", "", cmKind, "cm", configMap(nil, "1", nil),
			configMap(nil, "1", map[string]string{"x": "y"}), metrics.DecisionQueued, cmKey},
		{"update without spec, only server fields changed", "UPDATE", "", cmKind, "cm", configMap(map[string]string{"a": "1"}, "1", nil),
			configMap(map[string]string{"a": "1"}, "2", nil), metrics.DecisionUnchanged, event.Key{}},
		{"update with unreadable objects is forwarded", "UPDATE", "", kymaKind, "default", json.RawMessage(`"x"`), json.RawMessage(`[1]`), metrics.DecisionQueued, kymaKey},
		{"connect", "CONNECT", "", kymaKind, "default", nil, nil, metrics.DecisionIgnored, event.Key{}},
		{"unknown operation", "PATCH", "", kymaKind, "default", nil, kyma(spec1, nil, nil), metrics.DecisionMalformed, event.Key{}},
		{"no kind", "CREATE", "", map[string]string{}, "default", nil, kyma(spec1, nil, nil), metrics.DecisionMalformed, event.Key{}},
		{"no name anywhere", "CREATE", "", cmKind, "", nil, map[string]any{"kind": "ConfigMap"}, metrics.DecisionMalformed, event.Key{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, 0)
			rec := f.post(t, "/validate/lifecycle-manager", reviewBody(t, tt.op, tt.sub, tt.kind, tt.requestName, tt.oldObj, tt.newObj))
			assertAllowed(t, rec, "admission.k8s.io/v1", "0b3a-42")
			if tt.decision == metrics.DecisionQueued {
				assert.Equal(t, []event.Key{tt.key}, f.queue.keys)
			} else {
				assert.Empty(t, f.queue.keys)
			}
			op := tt.op
			if op == "PATCH" {
				op = "unknown"
			}
			assert.InDelta(t, 1, testutil.ToFloat64(f.metrics.AdmissionRequests.WithLabelValues(op, tt.decision)), 0)
		})
	}
}

// TestUpdatesCarryThePreWriteVersion: an update's event names the version
// the object had before the write, so that the KCP can tell a read made
// before the API server stored it; creates and deletes have none to give.
func TestUpdatesCarryThePreWriteVersion(t *testing.T) {
	spec1 := map[string]any{"channel": "regular"}
	spec2 := map[string]any{"channel": "fast"}
	tests := []struct {
		name           string
		op             string
		oldObj, newObj any
		sendVersions   bool
		want           string
	}{
		{"update", "UPDATE", kyma(spec1, nil, nil), kyma(spec2, nil, nil), true, "1"},
		{"create", "CREATE", nil, kyma(spec1, nil, nil), true, ""},
		{"delete", "DELETE", kyma(spec1, nil, nil), nil, true, ""},
		{"update, versions off: the public body", "UPDATE", kyma(spec1, nil, nil), kyma(spec2, nil, nil), false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixtureWith(t, admission.Options{SendVersions: tt.sendVersions})
			rec := f.post(t, "/validate/lifecycle-manager", reviewBody(t, tt.op, "", kymaKind, "default", tt.oldObj, tt.newObj))
			assertAllowed(t, rec, "admission.k8s.io/v1", "0b3a-42")
			assert.Equal(t, []string{tt.want}, f.queue.versions)
		})
	}
}

func TestDryRunsQueueNothing(t *testing.T) {
	f := newFixture(t, 0)
	body := reviewBody(t, "UPDATE", "", kymaKind, "default",
		kyma(map[string]any{"channel": "regular"}, nil, nil), kyma(map[string]any{"channel": "fast"}, nil, nil))
	var rv map[string]any
	require.NoError(t, json.Unmarshal(body, &rv))
	rv["request"].(map[string]any)["dryRun"] = true
	body, err := json.Marshal(rv)
	require.NoError(t, err)
	assertAllowed(t, f.post(t, "/validate/lifecycle-manager", body), "admission.k8s.io/v1", "0b3a-42")
	assert.Empty(t, f.queue.keys, "a dry run stores nothing, so there is nothing to report")
	assert.InDelta(t, 1, testutil.ToFloat64(f.metrics.AdmissionRequests.WithLabelValues("UPDATE", metrics.DecisionIgnored)), 0)
}

func assertAllowed(t *testing.T, rec *httptest.ResponseRecorder, apiVersion, uid string) {
	t.Helper()
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	assert.JSONEq(t, `{"apiVersion":"`+apiVersion+`","kind":"AdmissionReview","response":{"uid":"`+uid+`","allowed":true}}`, rec.Body.String())
}

func TestMalformedInput(t *testing.T) {
	valid := string(reviewBody(t, "CREATE", "", kymaKind, "default", nil, kyma(map[string]any{}, nil, nil)))
	tests := []struct {
		name   string
		path   string
		body   string
		status int
		uid    string // answered with an AdmissionReview for this UID
	}{
		{name: "not JSON", path: "/validate/m", body: "{not json", status: http.StatusBadRequest},
		{name: "empty body", path: "/validate/m", body: "", status: http.StatusBadRequest},
		{name: "JSON but no review", path: "/validate/m", body: `[1,2]`, status: http.StatusBadRequest},
		{name: "no request", path: "/validate/m", body: `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, status: http.StatusBadRequest},
		{name: "no uid", path: "/validate/m", body: `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"operation":"CREATE"}}`, status: http.StatusBadRequest},
		{name: "truncated", path: "/validate/m", body: valid[:len(valid)/2], status: http.StatusBadRequest},
		{name: "field of the wrong type", path: "/validate/m", status: http.StatusOK, uid: "u1",
			body: `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1","operation":5,"kind":"Kyma"}}`},
		{name: "wrong review version", path: "/validate/m", status: http.StatusOK, uid: "u2",
			body: `{"apiVersion":"admission.k8s.io/v2","kind":"AdmissionReview","request":{"uid":"u2","operation":"CREATE"}}`},
		{name: "invalid manager", path: "/validate/-bad-", body: valid, status: http.StatusBadRequest},
		{name: "too long manager", path: "/validate/" + strings.Repeat("m", 64), body: valid, status: http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, 0)
			rec := f.post(t, tt.path, []byte(tt.body))
			assert.Empty(t, f.queue.keys)
			if tt.uid != "" {
				assertAllowed(t, rec, "admission.k8s.io/v1", tt.uid)
				assert.InDelta(t, 1, testutil.ToFloat64(f.metrics.AdmissionRequests.WithLabelValues("unknown", metrics.DecisionMalformed))+
					testutil.ToFloat64(f.metrics.AdmissionRequests.WithLabelValues("CREATE", metrics.DecisionMalformed)), 0)
				return
			}
			assert.Equal(t, tt.status, rec.Code)
			assert.NotEmpty(t, rec.Body.String(), "a failure says why")
			assert.InDelta(t, 1, testutil.ToFloat64(f.metrics.AdmissionRequests.WithLabelValues("unknown", metrics.DecisionInvalid)), 0)
		})
	}
}

func TestV1beta1IsAnsweredInV1beta1(t *testing.T) {
	f := newFixture(t, 0)
	body := bytes.Replace(reviewBody(t, "CREATE", "", kymaKind, "default", nil, kyma(nil, nil, nil)),
		[]byte(`"admission.k8s.io/v1"`), []byte(`"admission.k8s.io/v1beta1"`), 1)
	rec := f.post(t, "/validate/m", body)
	assertAllowed(t, rec, "admission.k8s.io/v1beta1", "0b3a-42")
	assert.Len(t, f.queue.keys, 1)
}

func TestBodyLimit(t *testing.T) {
	body := reviewBody(t, "CREATE", "", kymaKind, "default", nil, kyma(map[string]any{"pad": strings.Repeat("x", 4096)}, nil, nil))
	size := int64(len(body))
	tests := []struct {
		name          string
		limit         int64
		contentLength int64 // -1: not announced
		status        int
	}{
		{"announced above the limit", 1024, size, http.StatusRequestEntityTooLarge},
		{"not announced, above the limit while reading", 1024, -1, http.StatusRequestEntityTooLarge},
		{"not announced, one byte above the limit", size - 1, -1, http.StatusRequestEntityTooLarge},
		{"exactly the limit", size, size, http.StatusOK},
		{"exactly the limit, not announced", size, -1, http.StatusOK},
		{"announced the limit, sent less", size + 4096, size + 4096, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.limit)
			// MultiReader hides the length from httptest, which would set it.
			req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/validate/m", io.MultiReader(bytes.NewReader(body)))
			req.ContentLength = tt.contentLength
			rec := httptest.NewRecorder()
			f.mux.ServeHTTP(rec, req)
			if tt.status == http.StatusOK {
				assertAllowed(t, rec, "admission.k8s.io/v1", "0b3a-42")
				return
			}
			assert.Equal(t, tt.status, rec.Code)
			assert.Empty(t, f.queue.keys)
		})
	}
}

func TestOnlyPostIsServed(t *testing.T) {
	f := newFixture(t, 0)
	req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/validate/m", nil)
	rec := httptest.NewRecorder()
	f.mux.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
}
