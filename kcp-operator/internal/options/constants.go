package options

import "time"

// Settings no installation needs to choose: they have no flag, and the
// reasons for each value are in docs/design/settings.md.
const (
	// KCPQPS and KCPBurst bound the operator's requests to the KCP.
	KCPQPS   = 150
	KCPBurst = 300
	// RuntimeQPS and RuntimeBurst bound its requests to each runtime.
	RuntimeQPS   = 20
	RuntimeBurst = 40

	// CatalogConcurrency is the catalog syncs run in parallel.
	CatalogConcurrency = 4
	// ApplyParallelism is the objects of one module applied in parallel.
	ApplyParallelism = 8

	// LayerCacheMB bounds the module layers kept under $TMPDIR; MaxLayerMB
	// bounds one layer.
	LayerCacheMB = 1024
	MaxLayerMB   = 64
	// RegistryTimeout bounds one registry request.
	RegistryTimeout = time.Minute
	// RenderCacheEntries is the rendered modules kept in memory.
	RenderCacheEntries = 512

	// RequeueJitter spreads the resyncs of Kymas that became Ready together.
	RequeueJitter = 0.1
	// RuntimeWriteLatencyTarget is the runtime write latency beyond which
	// fan-outs slow down; above the KCP's target because a write to a
	// runtime crosses the network and its admission webhooks.
	RuntimeWriteLatencyTarget = 250 * time.Millisecond

	// AgentContract is the event API version agents send (the first path
	// segment of event URLs): the newest the listener serves.
	AgentContract = "v2"
	// GatewayPort is the HTTPS port of the event Gateway the operator
	// keeps; it selects the ingress gateway pods labelled
	// IngressGatewayLabel=IngressGatewayValue, Istio's default installation.
	GatewayPort         = 443
	IngressGatewayLabel = "istio"
	IngressGatewayValue = "ingressgateway"

	// PushRuntimeRate and PushRuntimeBurst bound the pushed reconciles one
	// runtime gets ahead of the fan-outs.
	PushRuntimeRate  = 10
	PushRuntimeBurst = 100

	// FailureBackoffBase is the first retry of a failing reconcile;
	// ControllerQPS and ControllerBurst cap the retries of every item together.
	FailureBackoffBase = 500 * time.Millisecond
	ControllerQPS      = 100
	ControllerBurst    = 500
)
