package watcher

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lifecycle-manager/api/v1beta2"
)

func TestVirtualServiceOfAShardRoutesItsHostToItsListener(t *testing.T) {
	w := &v1beta2.Watcher{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: "klm"},
		Spec: v1beta2.WatcherSpec{Manager: "lifecycle-manager",
			ServiceInfo: v1beta2.Service{Namespace: "kcp-system", Name: "klm-events", Port: 8082}},
	}
	gateways := []gatewayRef{{namespace: "kcp-system", name: "events", hosts: []string{"a.events.example.com", "b.events.example.com"}}}
	tests := []struct {
		name      string
		route     *Route
		wantName  string
		wantHosts []any
		wantDest  string
	}{
		{name: "unsharded: every host of the gateway, the Watcher's Service", wantName: "klm",
			wantHosts: []any{"a.events.example.com", "b.events.example.com"}, wantDest: "klm-events.kcp-system.svc.cluster.local"},
		{name: "a shard: its host, its listener Service",
			route:    &Route{Shard: "b", Host: "b.events.example.com", Service: types.NamespacedName{Namespace: "kcp-system", Name: "klm-events-b"}},
			wantName: "klm-b", wantHosts: []any{"b.events.example.com"}, wantDest: "klm-events-b.kcp-system.svc.cluster.local"},
		{name: "a shard without a listener Service: the Watcher's",
			route:    &Route{Shard: "c", Host: "c.events.example.com"},
			wantName: "klm-c", wantHosts: []any{"c.events.example.com"}, wantDest: "klm-events.kcp-system.svc.cluster.local"},
	}
	for _, tc := range tests {
		vs, err := virtualService(w, gateways, tc.route)
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.wantName, vs.GetName(), tc.name)
		hosts, _, _ := unstructured.NestedSlice(vs.Object, "spec", "hosts")
		assert.Equal(t, tc.wantHosts, hosts, tc.name)
		http, _, _ := unstructured.NestedSlice(vs.Object, "spec", "http")
		require.Len(t, http, 1, tc.name)
		route := http[0].(map[string]any)["route"].([]any)[0].(map[string]any)
		host, _, _ := unstructured.NestedString(route, "destination", "host")
		assert.Equal(t, tc.wantDest, host, tc.name)
	}
}
