package kyma_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	manifestctrl "github.com/lifecycle-manager/kcp-operator/internal/controller/manifest"
)

// The tests of the content policy beyond TestDeniedContentIsNotApplied:
// wildcard RBAC and broad webhooks, and a module's default CR, which the
// operator creates with its own credentials: it must be of a kind the
// module's CRDs define, and pass the content policy, or nothing of the
// module is applied.

// privilegedModule is listed in the suite's --module-privileged.
const privilegedModule = "trusty"

// wildcardRBAC is a ClusterRole that grants every verb on every core
// resource, and its binding.
func wildcardRBAC(module string) []string {
	return []string{
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: " + module + "-manager}\n" +
			"rules: [{apiGroups: [\"\"], resources: [\"*\"], verbs: [\"*\"]}]\n",
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: " + module + "-manager}\n" +
			"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: " + module + "-manager}\n" +
			"subjects: [{kind: ServiceAccount, name: " + module + ", namespace: kyma-system}]\n",
	}
}

// TestWildcardRBACAndBroadWebhooksAreNotApplied: a module that grants
// itself every verb on every core resource and sees every Secret is Error
// naming the rules, with nothing applied; a module the fleet lists as
// privileged installs the same RBAC.
func TestWildcardRBACAndBroadWebhooksAreNotApplied(t *testing.T) {
	secrets := "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: sprawl-secrets}\n" +
		"webhooks: [{name: secrets.sprawl.io, admissionReviewVersions: [v1], sideEffects: None,\n" +
		"  clientConfig: {service: {name: sprawl, namespace: kyma-system}},\n" +
		"  rules: [{apiGroups: [\"\"], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [secrets]}]}]\n"
	publish(t, module{Name: "sprawl", Version: "1.0.0", Extra: append(wildcardRBAC("sprawl"), secrets)})
	publish(t, module{Name: privilegedModule, Version: "1.0.0", Extra: wildcardRBAC(privilegedModule)})
	releaseMeta(t, "sprawl", map[string]string{"regular": "1.0.0"})
	releaseMeta(t, privilegedModule, map[string]string{"regular": "1.0.0"})
	newKyma(t, "sprawling", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "sprawl"}, {Name: privilegedModule}} })

	mf := eventuallyManifest(t, "sprawling-sprawl", "Error", manifestState(shared.StateError))
	cond := meta.FindStatusCondition(mf.Status.Conditions, v1beta2.ConditionResources)
	require.NotNil(t, cond)
	assert.Equal(t, manifestctrl.ReasonContentDenied, cond.Reason)
	for _, want := range []string{
		"ClusterRole sprawl-manager is denied by rule rbac.authorization.k8s.io/ClusterRole:wildcard (rule 0 grants every verb on every resource of the core API group)",
		"ClusterRoleBinding sprawl-manager is denied by rule rbac.authorization.k8s.io/ClusterRoleBinding:wildcard",
		"ValidatingWebhookConfiguration sprawl-secrets is denied by rule admissionregistration.k8s.io/ValidatingWebhookConfiguration:broad (webhook 0 sees every Secret)",
	} {
		assert.Contains(t, cond.Message, want)
	}
	assert.Empty(t, mf.Status.Synced)
	for _, obj := range [][4]string{
		{"rbac.authorization.k8s.io/v1", "ClusterRole", "", "sprawl-manager"},
		{"admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "", "sprawl-secrets"},
		{"apps/v1", "Deployment", "sprawling", "sprawl-operator"},
	} {
		assert.True(t, apierrors.IsNotFound(runtimeObject(t, obj[0], obj[1], obj[2], obj[3])), "%s %s is not applied", obj[1], obj[3])
	}

	playModuleOperator(t, "sprawling", privilegedModule, "", false)
	eventuallyManifest(t, "sprawling-"+privilegedModule, "Ready", manifestState(shared.StateReady))
	assert.NoError(t, runtimeObject(t, "rbac.authorization.k8s.io/v1", "ClusterRole", "", privilegedModule+"-manager"))
}

// clusterAdminFor is the default CR of a hostile publisher: cluster-admin
// for a ServiceAccount of its choosing.
func clusterAdminFor(name string) map[string]any {
	return map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
		"metadata": map[string]any{"name": name},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
		"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": "collector", "namespace": "default"}},
	}
}

// refusedDefaultCR waits for the Manifest to be Error for its default CR,
// of a kind the module does not ship, with a message containing msg, and
// checks that nothing of the module, default CR included, is in the runtime.
func refusedDefaultCR(t *testing.T, kyma, module, msg string, cr [4]string) {
	t.Helper()
	mf := eventuallyManifest(t, kyma+"-"+module, "Error", manifestState(shared.StateError))
	cond := meta.FindStatusCondition(mf.Status.Conditions, v1beta2.ConditionModuleCR)
	require.NotNil(t, cond, "the ModuleCR condition says why: %+v", mf.Status.Conditions)
	assert.Equal(t, manifestctrl.ReasonModuleCRNotShipped, cond.Reason)
	assert.Contains(t, cond.Message, msg)
	assert.Empty(t, mf.Status.Synced, "nothing of the module is applied")
	require.Eventually(t, func() bool { return manifestEvent(t, kyma+"-"+module, "Warning", msg) }, timeout, tick, "a Warning Event tells why")
	for _, obj := range [][4]string{
		cr,
		{"apps/v1", "Deployment", kyma, module + "-operator"},
		{"v1", "ConfigMap", kyma, module + "-config"},
		{"apiextensions.k8s.io/v1", "CustomResourceDefinition", "", module + "s." + testGroup},
	} {
		// A kind the runtime does not know yet (another module's CRD still
		// on its way) has no objects either.
		err := runtimeObject(t, obj[0], obj[1], obj[2], obj[3])
		assert.True(t, apierrors.IsNotFound(err) || meta.IsNoMatchError(err), "%s %s is not in the runtime: %v", obj[1], obj[3], err)
	}
}

// TestHostileDefaultCRIsRefused: a template whose default CR binds
// cluster-admin to a ServiceAccount of the publisher's choosing is Error,
// and neither the binding nor anything else of the module reaches the
// runtime; a benign module of the same Kyma installs.
func TestHostileDefaultCRIsRefused(t *testing.T) {
	publish(t, module{Name: "hijack", Version: "1.0.0", Data: clusterAdminFor("hijack-admin")})
	publish(t, module{Name: "kestrel", Version: "1.0.0", Data: defaultCR("Kestrel")})
	releaseMeta(t, "hijack", map[string]string{"regular": "1.0.0"})
	releaseMeta(t, "kestrel", map[string]string{"regular": "1.0.0"})
	newKyma(t, "hijacked", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "hijack"}, {Name: "kestrel"}} })

	refusedDefaultCR(t, "hijacked", "hijack",
		"ClusterRoleBinding hijack-admin is of kind rbac.authorization.k8s.io/ClusterRoleBinding, which no CRD of the module defines "+
			"(the module's CRDs define Hijack."+testGroup+")",
		[4]string{"rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", "hijack-admin"})

	playModuleOperator(t, "hijacked", "kestrel", "Ready", true)
	eventuallyManifest(t, "hijacked-kestrel", "Ready", manifestState(shared.StateReady))
}

// TestDefaultCROfAForeignKindIsRefused: a default CR of another module's
// kind, or of a Kubernetes kind that a CRD of the module claims, is refused
// as one of no CRD of the module.
func TestDefaultCROfAForeignKindIsRefused(t *testing.T) {
	borrowed := defaultCR("Lender")
	borrowed["metadata"] = map[string]any{"name": "borrowed"}
	claim := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: usurpbindings.rbac.authorization.k8s.io}\n" +
		"spec:\n  group: rbac.authorization.k8s.io\n  scope: Cluster\n  names: {kind: ClusterRoleBinding, plural: usurpbindings}\n" +
		"  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]\n"
	publish(t, module{Name: "lender", Version: "1.0.0", Data: defaultCR("Lender")})
	publish(t, module{Name: "borrower", Version: "1.0.0", Data: borrowed})
	publish(t, module{Name: "usurp", Version: "1.0.0", Data: clusterAdminFor("usurp-admin"), Extra: []string{claim}})
	for _, m := range []string{"lender", "borrower", "usurp"} {
		releaseMeta(t, m, map[string]string{"regular": "1.0.0"})
	}
	newKyma(t, "borrowing", func(k *v1beta2.Kyma) {
		k.Spec.Modules = []v1beta2.Module{{Name: "lender"}, {Name: "borrower"}, {Name: "usurp"}}
	})

	refusedDefaultCR(t, "borrowing", "borrower",
		"Lender borrowed is of kind "+testGroup+"/Lender, which no CRD of the module defines (the module's CRDs define Borrower."+testGroup+")",
		[4]string{testGroup + "/v1", "Lender", "borrowing", "borrowed"})
	refusedDefaultCR(t, "borrowing", "usurp",
		"a CRD of the module defines it in Kubernetes' own API group rbac.authorization.k8s.io",
		[4]string{"rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", "usurp-admin"})
	assert.True(t, apierrors.IsNotFound(runtimeObject(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "usurpbindings.rbac.authorization.k8s.io")))

	playModuleOperator(t, "borrowing", "lender", "Ready", true)
	eventuallyManifest(t, "borrowing-lender", "Ready", manifestState(shared.StateReady))
}

// TestRemovalLeavesWhatARefusedDefaultCRNames: removing a module whose
// default CR was refused does not delete the object it names, which the
// operator never created: a Namespace of the runtime here.
func TestRemovalLeavesWhatARefusedDefaultCRNames(t *testing.T) {
	require.NoError(t, runtimeEnv.Client.Create(t.Context(), namespace("precious")))
	publish(t, module{Name: "evict", Version: "1.0.0", Data: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "precious"},
	}})
	releaseMeta(t, "evict", map[string]string{"regular": "1.0.0"})
	newKyma(t, "evicting", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "evict"}} })
	refusedDefaultCR(t, "evicting", "evict", "Namespace precious is of kind core/Namespace",
		[4]string{"v1", "Namespace", "", "absent"})

	updateKyma(t, "evicting", func(k *v1beta2.Kyma) { k.Spec.Modules = nil })
	require.Eventually(t, func() bool {
		_, err := getManifest(t, "evicting-evict")
		return apierrors.IsNotFound(err)
	}, timeout, tick, "the module is removed")
	assert.True(t, present(t, namespace("precious")), "the Namespace the default CR named stays")
}
