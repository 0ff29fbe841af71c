package schedule_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/schedule"
)

// TestBackgroundWaitsBehindOrdinaryWork checks that fan-out work is handed
// out after requests of default priority that came later.
func TestBackgroundWaitsBehindOrdinaryWork(t *testing.T) {
	q := priorityqueue.New[reconcile.Request]("test")
	t.Cleanup(q.ShutDown)
	release := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "kcp-system", Name: "released"}}
	edited := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "kcp-system", Name: "edited"}}
	schedule.Background(q, release, 0)
	q.Add(edited)

	first, _, _ := q.GetWithPriority()
	second, priority, _ := q.GetWithPriority()
	assert.Equal(t, edited, first)
	assert.Equal(t, release, second)
	assert.Equal(t, handler.LowPriority, priority)
}

// TestKymaOfSecretByKind checks that each controller hears only of the
// Secrets it reads: the Kyma controller of access Secrets, the agent
// controller of certificates. The issuer writes a certificate for every
// Kyma at start; were those to reach the Kyma controller, every new Kyma
// would be queued beside the ones it is finishing.
func TestKymaOfSecretByKind(t *testing.T) {
	kyma := []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: "kcp-system", Name: "kyma-1"}}}
	access := map[string]string{shared.KymaNameLabel: "kyma-1"}
	certificate := map[string]string{shared.KymaNameLabel: "kyma-1", shared.PurposeLabel: "agent-tls"}
	unrelated := map[string]string{shared.PurposeLabel: "agent-tls"}
	tests := []struct {
		name   string
		kind   schedule.SecretKind
		labels map[string]string
		want   []reconcile.Request
	}{
		{"access Secret to the Kyma controller", schedule.AccessSecret, access, kyma},
		{"certificate not to the Kyma controller", schedule.AccessSecret, certificate, nil},
		{"certificate to the agent controller", schedule.CertificateSecret, certificate, kyma},
		{"access Secret not to the agent controller", schedule.CertificateSecret, access, nil},
		{"no Kyma label", schedule.AccessSecret, nil, nil},
		{"no Kyma label, with a purpose", schedule.CertificateSecret, unrelated, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: "s", Labels: tt.labels}}
			assert.Equal(t, tt.want, schedule.KymaOfSecret(tt.kind)(t.Context(), s))
		})
	}
}

// TestChangesSkipWhatExistedAtStart checks the fan-out filter: an object
// found when the operator starts is no change to fan out (every Kyma is
// reconciled at the start anyway); one created or changed later is.
func TestChangesSkipWhatExistedAtStart(t *testing.T) {
	tmpl := func(generation int64) *v1beta2.ModuleTemplate {
		return &v1beta2.ModuleTemplate{ObjectMeta: metav1.ObjectMeta{Name: "alpha-1.0.0", Generation: generation}}
	}
	p := schedule.Changes(predicate.GenerationChangedPredicate{})
	tests := []struct {
		name string
		got  bool
		want bool
	}{
		{"found at the start", p.Create(event.CreateEvent{Object: tmpl(1), IsInInitialList: true}), false},
		{"created later", p.Create(event.CreateEvent{Object: tmpl(1)}), true},
		{"its spec changed", p.Update(event.UpdateEvent{ObjectOld: tmpl(1), ObjectNew: tmpl(2)}), true},
		{"only its status changed: p filters it", p.Update(event.UpdateEvent{ObjectOld: tmpl(1), ObjectNew: tmpl(1)}), false},
		{"deleted", p.Delete(event.DeleteEvent{Object: tmpl(1)}), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, tt.got) })
	}
}
