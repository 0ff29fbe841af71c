package setup_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/tlsreload"
	"github.com/lifecycle-manager/kcp-operator/internal/testing/testmodule"
)

// These tests run after push_test.go's, which expect a Kyma without
// modules, and before the CA rotation's, after which the agent is cut off
// for a while: Go runs test files in name order.

// operatorUser is the user of the runtime kubeconfig the suite gives the operator.
const operatorUser = "lifecycle-manager"

// heldLabel marks the objects whose writes the test webhook holds back.
const heldLabel = "test.lifecycle-manager/held-admission"

// heldAdmission registers, for one test, a second validating webhook on
// the runtime's API server for labelled objects of the resource, which
// holds each write back until the operator has read the object early (its
// lifecycle_manager_push_early_reads_total grew), or for 3 s, then allows
// it. Validating webhooks are called in parallel, so the agent reports the
// write at once and the operator's reconcile reads the object before the
// API server stores the write: what a slow webhook or a busy etcd does to
// a real runtime, made certain. An operator that does not wait for the
// write finishes its reconcile on the old object.
func heldAdmission(t *testing.T, controller, group, resource string, probe client.Object) {
	t.Helper()
	var dryRuns atomic.Int32
	key, err := pki.GenerateKey(pki.ECDSAP256)
	require.NoError(t, err)
	ca, err := pki.NewCA("held-webhook", key, time.Now(), time.Hour)
	require.NoError(t, err)
	certPEM, keyPEM, err := ca.Issue(pki.LeafRequest{CommonName: "held", IPs: []net.IP{net.IPv4(127, 0, 0, 1)},
		Usage: pki.UsageServer, NotBefore: time.Now(), Duration: time.Hour}, pki.ECDSAP256)
	require.NoError(t, err)
	kp, err := tlsreload.NewKeyPair(certPEM, keyPEM)
	require.NoError(t, err)
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		early := counter(t, "lifecycle_manager_push_early_reads_total", "controller", controller)
		var review struct {
			Request struct {
				UID      string `json:"uid"`
				DryRun   bool   `json:"dryRun"`
				UserInfo struct {
					Username string `json:"username"`
				} `json:"userInfo"`
			} `json:"request"`
		}
		_ = json.NewDecoder(r.Body).Decode(&review)
		if review.Request.DryRun {
			dryRuns.Add(1)
		}
		// The operator's own writes pass: its reconcile would wait for itself.
		hold := !review.Request.DryRun && review.Request.UserInfo.Username != operatorUser
		deadline := time.Now().Add(3 * time.Second)
		for hold && counter(t, "lifecycle_manager_push_early_reads_total", "controller", controller) <= early &&
			time.Now().Before(deadline) {
			time.Sleep(2 * time.Millisecond) // polling a counter: nothing to wait on
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
			"response": map[string]any{"uid": review.Request.UID, "allowed": true}})
	}), TLSConfig: tlsreload.ServerConfig(kp, nil), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })

	url := "https://" + ln.Addr().String() + "/held"
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "held-" + resource},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "held.test.lifecycle-manager",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: pki.EncodeCerts(ca.Cert)},
			Rules:                   []admissionregistrationv1.RuleWithOperations{rule(group, resource)},
			ObjectSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{heldLabel: "true"}},
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			FailurePolicy:           ptr.To(admissionregistrationv1.Ignore),
		}},
	}
	require.NoError(t, runtimeEnv.Client.Create(t.Context(), cfg))
	// Not t.Context(): it ends before cleanups run.
	t.Cleanup(func() { _ = runtimeEnv.Client.Delete(context.Background(), cfg) })
	require.Eventually(t, func() bool {
		obj := probe.DeepCopyObject().(client.Object)
		if runtimeEnv.Client.Get(t.Context(), client.ObjectKeyFromObject(probe), obj) != nil {
			return false
		}
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[heldLabel] = "true"
		obj.SetLabels(labels)
		_ = runtimeEnv.Client.Update(t.Context(), obj, client.DryRunAll)
		return dryRuns.Load() > 0
	}, timeout, tick, "the API server calls the new webhook")
}

func rule(group, resource string) admissionregistrationv1.RuleWithOperations {
	return admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{"*"}, Resources: []string{resource}},
	}
}

// TestAPushedEditStoredLateIsReadOnceStored holds an admin's edit of the
// runtime Kyma back in admission, after the agent reported it: the
// reconcile the event starts reads the Kyma before the edit is stored,
// sees the version the event names, and reads again until the edit is
// there, instead of finishing on the old Kyma and waiting for the timed
// recheck.
func TestAPushedEditStoredLateIsReadOnceStored(t *testing.T) {
	waitForAgent(t)
	heldAdmission(t, "kyma", "operator.kyma-project.io", "kymas",
		&v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{Namespace: "kyma-system", Name: "default"}})
	before := counter(t, "lifecycle_manager_push_reads_total", "outcome", "caught_up")

	const value = "causal"
	require.Eventually(t, func() bool {
		rk := &v1beta2.Kyma{}
		if runtimeEnv.Client.Get(t.Context(), client.ObjectKey{Namespace: "kyma-system", Name: "default"}, rk) != nil {
			return false
		}
		if rk.Labels == nil {
			rk.Labels = map[string]string{}
		}
		rk.Labels[heldLabel] = "true"
		rk.Spec.Channel = value
		return runtimeEnv.Client.Update(t.Context(), rk) == nil
	}, timeout, tick, "the admin's edit is written")

	require.Eventually(t, func() bool { return getKyma(t).Spec.Channel == value }, timeout, 20*time.Millisecond,
		"the edit reaches the KCP")
	assert.Greater(t, counter(t, "lifecycle_manager_push_reads_total", "outcome", "caught_up"), before,
		"a read showed the version before the edit, and a reread found the edit")
	updateKyma(t, func(k *v1beta2.Kyma) { k.Spec.Channel = "regular" })
	require.Eventually(t, func() bool {
		rk := &v1beta2.Kyma{}
		return runtimeEnv.Client.Get(t.Context(), client.ObjectKey{Namespace: "kyma-system", Name: "default"}, rk) == nil &&
			rk.Spec.Channel == "regular"
	}, timeout, tick, "the channel is back for the other tests")
}

// TestDriftStoredLateIsRepaired changes a module's Deployment while the
// write is held back in admission: the Manifest's reconcile reads the
// Deployment past the reported version and puts the spec back.
func TestDriftStoredLateIsRepaired(t *testing.T) {
	require.NoError(t, testmodule.Module{Name: "uniform", Version: "1.0.0"}.Publish(t.Context(), kcp.Client, reg.Host, ns))
	releaseMeta(t, "uniform")
	waitForAgent(t)
	updateKyma(t, func(k *v1beta2.Kyma) { k.Spec.Modules = append(k.Spec.Modules, v1beta2.Module{Name: "uniform"}) })
	key := client.ObjectKey{Namespace: "kyma-system", Name: "uniform-operator"}
	dep := &appsv1.Deployment{}
	require.Eventually(t, func() bool { return runtimeEnv.Client.Get(t.Context(), key, dep) == nil }, timeout, tick, "installed")
	require.Eventually(t, func() bool {
		mf := &v1beta2.Manifest{}
		return kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: kymaName + "-uniform"}, mf) == nil &&
			mf.Status.Applied != ""
	}, timeout, tick, "the install is recorded")
	want := *dep.Spec.Replicas
	heldAdmission(t, "manifest", "apps", "deployments", &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}})
	before := counter(t, "lifecycle_manager_push_reads_total", "outcome", "caught_up")

	require.Eventually(t, func() bool {
		d := &appsv1.Deployment{}
		if runtimeEnv.Client.Get(t.Context(), key, d) != nil {
			return false
		}
		d.Labels[heldLabel] = "true"
		d.Spec.Replicas = ptr.To(want + 3)
		return runtimeEnv.Client.Update(t.Context(), d) == nil
	}, timeout, tick, "someone scales the module's Deployment")

	require.Eventually(t, func() bool {
		d := &appsv1.Deployment{}
		return runtimeEnv.Client.Get(t.Context(), key, d) == nil && *d.Spec.Replicas == want
	}, timeout, 20*time.Millisecond, "the drift is repaired")
	assert.Greater(t, counter(t, "lifecycle_manager_push_reads_total", "outcome", "caught_up"), before,
		"the Manifest's reconcile read the Deployment before the change was stored, and again after")
}
