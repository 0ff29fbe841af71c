package chartstest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// access is one request the operator makes (or must not be able to make).
// namespace "" is cluster scope; resource may carry a subresource
// ("kymas/status").
type access struct {
	namespace, group, resource string
	verbs                      []string
}

const kymaGroup = "operator.kyma-project.io"

// operatorNeeds lists what the operator's code does in the KCP (see its
// controllers, the certs module's pushpki and controller-runtime's leader
// election), per namespace: kcp is a watched namespace, leader holds the
// Lease (the first watched namespace), istio is the ingress gateway's namespace.
func operatorNeeds(kcp, leader, istio string) []access {
	read := []string{"get", "list", "watch"}
	return []access{
		{kcp, kymaGroup, "kymas", []string{"get", "list", "watch", "update", "patch"}},
		{kcp, kymaGroup, "kymas/status", []string{"update", "patch"}},
		{kcp, kymaGroup, "kymas/finalizers", []string{"update"}},
		{kcp, kymaGroup, "manifests", []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		{kcp, kymaGroup, "manifests/status", []string{"update", "patch"}},
		{kcp, kymaGroup, "manifests/finalizers", []string{"update"}},
		{kcp, kymaGroup, "moduletemplates", read},
		{kcp, kymaGroup, "modulereleasemetas", read},
		{kcp, kymaGroup, "watchers", []string{"get", "list", "watch", "update", "patch"}},
		{kcp, kymaGroup, "watchers/status", []string{"update", "patch"}},
		{kcp, "", "secrets", []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		{kcp, "events.k8s.io", "events", []string{"create", "patch"}},
		{kcp, "", "events", []string{"create", "patch"}},
		{leader, "coordination.k8s.io", "leases", []string{"get", "create", "update"}},
		{leader, "", "events", []string{"create", "patch"}},
		{kcp, "networking.istio.io", "gateways", []string{"get", "list", "watch", "create", "update", "patch"}},
		{kcp, "networking.istio.io", "virtualservices", []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		// The event endpoint's certificate, beside the ingress gateway.
		{istio, "", "secrets", []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	}
}

// operatorMustNot lists what the operator has no business doing.
func operatorMustNot(kcp, istio, release string) []access {
	return []access{
		{kcp, kymaGroup, "kymas", []string{"create", "delete", "deletecollection"}},
		{kcp, kymaGroup, "moduletemplates", []string{"create", "update", "patch", "delete"}},
		{kcp, kymaGroup, "modulereleasemetas", []string{"create", "update", "patch", "delete"}},
		{kcp, kymaGroup, "watchers", []string{"create", "delete"}},
		{kcp, "", "pods", []string{"get", "list"}},
		// Only the shard list ConfigMap, by name (assertShardAccess).
		{kcp, "", "configmaps", []string{"get", "list"}},
		{kcp, "", "serviceaccounts/token", []string{"create"}},
		{kcp, "rbac.authorization.k8s.io", "roles", []string{"create", "update", "escalate", "bind"}},
		{istio, "networking.istio.io", "gateways", []string{"create"}},
		{istio, "coordination.k8s.io", "leases", []string{"get"}},
		{release, "", "secrets", []string{"get", "list"}},
		{"default", "", "secrets", []string{"get"}},
		{"kube-system", "", "secrets", []string{"get"}},
		{"", "", "secrets", []string{"list"}},
		{"", "", "namespaces", []string{"get", "create"}},
		{"", "apiextensions.k8s.io", "customresourcedefinitions", []string{"get", "create", "update"}},
		{"", "rbac.authorization.k8s.io", "clusterroles", []string{"list", "create"}},
	}
}

func TestRBACBuiltinBackend(t *testing.T) {
	kcp, extra, istio, release := "rb-kcp", "rb-extra", "rb-istio", "rb-system"
	v := set(baseValues(), "namespaces", []any{kcp, extra})
	set(v, "istio.ingressNamespace", istio)
	installRBAC(t, v, release, kcp, extra, istio)
	sa := serviceAccountUser(release)

	assertAllowed(t, sa, true, operatorNeeds(kcp, kcp, istio)...)
	assertAllowed(t, sa, false, operatorMustNot(kcp, istio, release)...)
	// The Lease is in the first watched namespace only.
	assertAllowed(t, sa, false, access{extra, "coordination.k8s.io", "leases", []string{"get", "create"}})
	// The builtin backend signs in-process: no cert-manager objects.
	assertAllowed(t, sa, false, access{kcp, "cert-manager.io", "certificates", []string{"create", "get"}})
	assertListenerEndpoint(t, sa, release)
	assertShardAccess(t, sa, kcp)
}

// assertListenerEndpoint checks that the leader may keep the listener
// Service's EndpointSlice, and touch no other Service or slice.
func assertListenerEndpoint(t *testing.T, u user, release string) {
	t.Helper()
	for _, c := range []struct {
		group, resource, name, verb string
		want                        bool
	}{
		{"", "services", "kcp-operator-events", "get", true},
		{"", "services", "kcp-operator-events", "update", false},
		{"", "services", "kcp-operator-metrics", "get", false},
		{"discovery.k8s.io", "endpointslices", "kcp-operator-events-leader", "get", true},
		{"discovery.k8s.io", "endpointslices", "kcp-operator-events-leader", "update", true},
		{"discovery.k8s.io", "endpointslices", "", "create", true},
		{"discovery.k8s.io", "endpointslices", "kcp-operator-metrics-abcde", "update", false},
		{"discovery.k8s.io", "endpointslices", "kcp-operator-events-leader", "delete", false},
		{"discovery.k8s.io", "endpointslices", "", "list", false},
	} {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: u.name, Groups: u.groups,
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: release, Group: c.group, Resource: c.resource, Name: c.name, Verb: c.verb,
			},
		}}
		require.NoError(t, env.Client.Create(t.Context(), sar))
		assert.Equal(t, c.want, sar.Status.Allowed, "%s %s %q in %q: %s", c.verb, c.resource, c.name, release, sar.Status.Reason)
	}
}

func TestRBACCertManagerBackend(t *testing.T) {
	kcp, istio, release, cm := "rc-kcp", "rc-istio", "rc-system", "rc-cert-manager"
	v := set(certManagerValues(), "namespaces", []any{kcp})
	set(v, "istio.ingressNamespace", istio)
	set(v, "certificates.certManager.issuerRef", map[string]any{"name": "platform-ca", "kind": "ClusterIssuer", "group": "cert-manager.io"})
	set(v, "certificates.caSecret", map[string]any{"name": "platform-ca-keys", "namespace": cm})
	installRBAC(t, v, release, kcp, istio, cm)
	sa := serviceAccountUser(release)

	assertAllowed(t, sa, true, operatorNeeds(kcp, kcp, istio)...)
	assertAllowed(t, sa, true,
		access{kcp, "cert-manager.io", "certificates", []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		access{kcp, "cert-manager.io", "certificates/status", []string{"update", "patch"}},
		// The issuer's CA: read for the trust bundle; its Certificate re-issued on rotation.
		access{cm, "", "secrets", []string{"get", "list", "watch"}},
		access{cm, "cert-manager.io", "certificates", []string{"get", "list", "watch"}},
		access{cm, "cert-manager.io", "certificates/status", []string{"update", "patch"}},
	)
	assertAllowed(t, sa, false, operatorMustNot(kcp, istio, release)...)
	assertAllowed(t, sa, false,
		access{cm, "", "secrets", []string{"create", "update", "delete"}},
		access{cm, "cert-manager.io", "certificates", []string{"create", "delete"}},
		access{kcp, "cert-manager.io", "issuers", []string{"create", "get"}},
	)
}

// installRBAC creates the namespaces and really applies the ServiceAccount,
// Roles and RoleBindings of the chart rendered into release.
func installRBAC(t *testing.T, values map[string]any, release string, namespaces ...string) {
	t.Helper()
	for _, ns := range append([]string{release}, namespaces...) {
		require.NoError(t, client.IgnoreAlreadyExists(env.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})))
	}
	objs := mustRender(t, values, release)
	applied := 0
	for _, o := range objs {
		switch o.GetKind() {
		case "ServiceAccount", "Role", "RoleBinding":
			require.NoError(t, env.Client.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(o),
				client.ForceOwnership, client.FieldOwner("kcp-operator-chart-test")), "%s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
			applied++
		}
	}
	require.GreaterOrEqual(t, applied, 3)
}

type user struct {
	name   string
	groups []string
}

func serviceAccountUser(namespace string) user {
	return user{
		name:   "system:serviceaccount:" + namespace + ":kcp-operator",
		groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}
}

// assertAllowed asks the API server's authorizer, by SubjectAccessReview,
// whether u may do each access, and expects want.
func assertAllowed(t *testing.T, u user, want bool, accesses ...access) {
	t.Helper()
	for _, a := range accesses {
		resource, sub, _ := strings.Cut(a.resource, "/")
		for _, verb := range a.verbs {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: u.name, Groups: u.groups,
				ResourceAttributes: &authorizationv1.ResourceAttributes{
					Namespace: a.namespace, Group: a.group, Resource: resource, Subresource: sub, Verb: verb,
				},
			}}
			require.NoError(t, env.Client.Create(t.Context(), sar))
			assert.Equal(t, want, sar.Status.Allowed, "%s %s.%s/%s in %q: %s", verb, resource, a.group, sub, a.namespace, sar.Status.Reason)
		}
	}
}
