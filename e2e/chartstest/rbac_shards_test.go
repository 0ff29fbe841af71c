package chartstest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
)

// named is one request on one object by name.
type named struct {
	group, resource, name, verb string
	want                        bool
}

// assertNamed asks the API server's authorizer whether u may do each
// request in namespace, and expects its want.
func assertNamed(t *testing.T, u user, namespace string, requests ...named) {
	t.Helper()
	for _, c := range requests {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: u.name, Groups: u.groups,
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: namespace, Group: c.group, Resource: c.resource, Name: c.name, Verb: c.verb,
			},
		}}
		require.NoError(t, env.Client.Create(t.Context(), sar))
		assert.Equal(t, c.want, sar.Status.Allowed, "%s %s %q in %q: %s", c.verb, c.resource, c.name, namespace, sar.Status.Reason)
	}
}

// assertShardAccess checks what every instance, sharded or not, may do in
// the leader election namespace: read the shard list ConfigMap (list and
// watch by its name, as a metadata.name field selector asks) and any
// shard's Lease.
func assertShardAccess(t *testing.T, u user, leader string) {
	t.Helper()
	assertNamed(t, u, leader,
		named{"", "configmaps", "lifecycle-manager-shards", "get", true},
		named{"", "configmaps", "lifecycle-manager-shards", "list", true},
		named{"", "configmaps", "lifecycle-manager-shards", "watch", true},
		named{"", "configmaps", "lifecycle-manager-shards", "update", false},
		named{"", "configmaps", "other", "get", false},
		named{"coordination.k8s.io", "leases", "lifecycle-manager-b.operator.kyma-project.io", "get", true},
		named{"coordination.k8s.io", "leases", "lifecycle-manager.operator.kyma-project.io", "get", true},
	)
}

// TestRBACShards: with shards every shard's leader may keep its own
// listener Service's EndpointSlice, and the shard list and Leases are readable.
func TestRBACShards(t *testing.T) {
	kcp, istio, release := "rs-kcp", "rs-istio", "rs-system"
	v := set(shardValues(), "namespaces", []any{kcp})
	set(v, "istio.ingressNamespace", istio)
	installRBAC(t, v, release, kcp, istio)
	sa := serviceAccountUser(release)

	assertAllowed(t, sa, true, operatorNeeds(kcp, kcp, istio)...)
	assertAllowed(t, sa, false, operatorMustNot(kcp, istio, release)...)
	assertShardAccess(t, sa, kcp)
	var requests []named
	for _, shard := range []string{"a", "b", "c"} {
		svc := "kcp-operator-events-" + shard
		requests = append(requests,
			named{"", "services", svc, "get", true},
			named{"discovery.k8s.io", "endpointslices", svc + "-leader", "get", true},
			named{"discovery.k8s.io", "endpointslices", svc + "-leader", "update", true},
		)
	}
	requests = append(requests,
		named{"", "services", "kcp-operator-events", "get", false},
		named{"discovery.k8s.io", "endpointslices", "kcp-operator-events-leader", "update", false},
		named{"discovery.k8s.io", "endpointslices", "kcp-operator-events-d-leader", "update", false},
	)
	assertNamed(t, sa, release, requests...)
}
