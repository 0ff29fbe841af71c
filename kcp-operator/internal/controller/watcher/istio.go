package watcher

import (
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lifecycle-manager/api/v1beta2"
)

// Contracts are the event API versions the listener serves.
var Contracts = []string{"v1", "v2"}

// GatewayConfig describes the Istio Gateway of the event endpoint.
type GatewayConfig struct {
	// Name and Namespace of the Gateway; empty Name means the operator
	// keeps no Gateway (one is managed elsewhere).
	Name, Namespace string
	// Hosts the Gateway serves, e.g. the KCP's event domain.
	Hosts []string
	// CredentialName is the Secret (tls.crt, tls.key, ca.crt) Istio uses
	// for mutual TLS.
	CredentialName string
	// Selector picks the Istio ingress gateway pods.
	Selector map[string]string
	// Labels let Watchers select this Gateway.
	Labels map[string]string
	// Port is the HTTPS port.
	Port int64
}

// EventPaths returns the exact paths of a manager's events.
func EventPaths(manager string) []string {
	out := make([]string, 0, len(Contracts))
	for _, c := range Contracts {
		out = append(out, "/"+c+"/"+manager+"/event")
	}
	return out
}

// eventRetries let the gateway, not the agent, absorb a replica that cannot
// take an event: one that refuses or resets the connection (stopped, or
// just replaced as the Service's endpoint) or answers 503 (draining, or a
// standby without consumers). A retry costs the gateway milliseconds; the
// same answer passed on costs the agent a pause of its whole queue. Events
// are idempotent (the listener merges repeats), so a retried POST is safe.
var eventRetries = map[string]any{
	"attempts":      3,
	"perTryTimeout": "5s",
	"retryOn":       "connect-failure,refused-stream,reset,503",
}

// virtualService builds the VirtualService of w bound to the gateways:
// for every host of the gateways, or for a shard's route its host alone.
func virtualService(w *v1beta2.Watcher, gateways []gatewayRef, route *Route) (*unstructured.Unstructured, error) {
	var hosts, names []string
	for _, g := range gateways {
		names = append(names, g.namespace+"/"+g.name)
		for _, h := range g.hosts {
			if !slices.Contains(hosts, h) {
				hosts = append(hosts, h)
			}
		}
	}
	name, svc := w.Name, types.NamespacedName{Namespace: w.Spec.ServiceInfo.Namespace, Name: w.Spec.ServiceInfo.Name}
	if route != nil {
		hosts, name = []string{route.Host}, w.Name+"-"+route.Shard
		if route.Service.Name != "" {
			svc = route.Service
		}
	}
	matches := make([]any, 0, len(Contracts))
	for _, p := range EventPaths(w.ManagerName()) {
		matches = append(matches, map[string]any{"uri": map[string]any{"exact": p}})
	}
	spec := map[string]any{
		"gateways": toAny(names),
		"hosts":    toAny(hosts),
		"http": []any{map[string]any{
			"name":  w.Name,
			"match": matches,
			"route": []any{map[string]any{"destination": map[string]any{
				"host": fmt.Sprintf("%s.%s.svc.cluster.local", svc.Name, svc.Namespace),
				"port": map[string]any{"number": w.Spec.ServiceInfo.Port},
			}}},
			"retries": eventRetries,
		}},
	}
	return istioObject("VirtualService", w.Namespace, name, spec)
}

// gatewayObject builds the Gateway of the event endpoint.
func gatewayObject(cfg GatewayConfig) (*unstructured.Unstructured, error) {
	spec := map[string]any{
		"selector": toAnyMap(cfg.Selector),
		"servers": []any{map[string]any{
			"port":  map[string]any{"number": cfg.Port, "name": "https-events", "protocol": "HTTPS"},
			"tls":   map[string]any{"mode": "MUTUAL", "credentialName": cfg.CredentialName},
			"hosts": toAny(cfg.Hosts),
		}},
	}
	u, err := istioObject("Gateway", cfg.Namespace, cfg.Name, spec)
	if err != nil {
		return nil, err
	}
	u.SetLabels(cfg.Labels)
	return u, nil
}

func istioObject(kind, ns, name string, spec map[string]any) (*unstructured.Unstructured, error) {
	// A JSON round trip keeps only JSON types (int64 becomes float64), as
	// unstructured content must hold.
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("encoding %s %s: %w", kind, name, err)
	}
	var content map[string]any
	if err := json.Unmarshal(raw, &content); err != nil {
		return nil, fmt.Errorf("decoding %s %s: %w", kind, name, err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": content}}
	u.SetAPIVersion("networking.istio.io/v1")
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u, nil
}

func toAny(ss []string) []any {
	out := make([]any, 0, len(ss))
	for _, s := range ss {
		out = append(out, s)
	}
	return out
}

func toAnyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
