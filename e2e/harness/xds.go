package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/structpb"
)

// The xDS types a gateway proxy asks for (no EDS: endpoints do not matter
// for what is routed where).
const (
	typeCluster  = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
	typeListener = "type.googleapis.com/envoy.config.listener.v3.Listener"
	typeRoute    = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration"
)

// ProxyNode is how a proxy introduces itself to istiod.
type ProxyNode struct {
	// ID is Istio's node ID: type~ip~pod.namespace~namespace.svc.cluster.local.
	ID        string
	Namespace string
	// Labels are the proxy's pod labels, which Gateway selectors match.
	Labels map[string]string
}

// IngressGatewayNode is an ingress gateway pod of Istio's default
// installation in istio-system, with labels; it has no pod in the KCP.
func IngressGatewayNode(labels map[string]string) ProxyNode {
	pod := "istio-ingressgateway-e2e"
	return ProxyNode{
		ID:        "router~127.0.0.1~" + pod + "." + IstioNamespace + "~" + IstioNamespace + ".svc.cluster.local",
		Namespace: IstioNamespace, Labels: labels,
	}
}

// ProxyConfig is the configuration istiod sends a proxy, by resource name.
type ProxyConfig struct {
	Listeners map[string]*listenerv3.Listener
	Routes    map[string]*routev3.RouteConfiguration
	Clusters  map[string]*clusterv3.Cluster
}

// ProxyConfig connects to istiod's xDS port as node and returns the
// listeners, the routes they name and the clusters that istiod sends it.
func (i *Istiod) ProxyConfig(ctx context.Context, node ProxyNode) (*ProxyConfig, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := grpc.NewClient(i.XDSAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("dialing istiod's xDS port %s: %w", i.XDSAddr, err)
	}
	defer func() { _ = conn.Close() }()
	stream, err := discoveryv3.NewAggregatedDiscoveryServiceClient(conn).StreamAggregatedResources(ctx)
	if err != nil {
		return nil, fmt.Errorf("opening an ADS stream to istiod: %w", err)
	}
	n, err := node.envoyNode()
	if err != nil {
		return nil, err
	}
	a := &adsReader{stream: stream, node: n, cfg: &ProxyConfig{
		Listeners: map[string]*listenerv3.Listener{}, Routes: map[string]*routev3.RouteConfiguration{},
		Clusters: map[string]*clusterv3.Cluster{},
	}}
	if err := a.run(); err != nil {
		return nil, err
	}
	_ = stream.CloseSend()
	return a.cfg, nil
}

func (n ProxyNode) envoyNode() (*corev3.Node, error) {
	labels := map[string]any{}
	for k, v := range n.Labels {
		labels[k] = v
	}
	md, err := structpb.NewStruct(map[string]any{
		"NAMESPACE": n.Namespace, "LABELS": labels, "CLUSTER_ID": "Kubernetes",
		"NAME": "istio-ingressgateway-e2e", "SERVICE_ACCOUNT": "istio-ingressgateway-service-account",
	})
	if err != nil {
		return nil, fmt.Errorf("the proxy's node metadata: %w", err)
	}
	return &corev3.Node{Id: n.ID, Cluster: "istio-ingressgateway." + n.Namespace, Metadata: md}, nil
}

// adsReader asks for clusters and listeners, then for the routes the
// listeners name, ACKing every response as Envoy does, until it has all
// three.
type adsReader struct {
	stream     discoveryv3.AggregatedDiscoveryService_StreamAggregatedResourcesClient
	node       *corev3.Node
	cfg        *ProxyConfig
	routeNames []string
	got        map[string]bool
}

func (a *adsReader) run() error {
	a.got = map[string]bool{}
	for _, t := range []string{typeCluster, typeListener} {
		if err := a.stream.Send(&discoveryv3.DiscoveryRequest{Node: a.node, TypeUrl: t}); err != nil {
			return fmt.Errorf("asking istiod for %s: %w", t, err)
		}
	}
	for !a.got[typeCluster] || !a.got[typeListener] || (len(a.routeNames) > 0 && !a.got[typeRoute]) {
		resp, err := a.stream.Recv()
		if errors.Is(err, io.EOF) {
			return errors.New("istiod closed the xDS stream")
		}
		if err != nil {
			return fmt.Errorf("reading from istiod's xDS stream: %w", err)
		}
		if err := a.take(resp); err != nil {
			return err
		}
	}
	return nil
}

func (a *adsReader) take(resp *discoveryv3.DiscoveryResponse) error {
	var names []string
	for _, res := range resp.GetResources() {
		switch resp.GetTypeUrl() {
		case typeCluster:
			c := &clusterv3.Cluster{}
			if err := res.UnmarshalTo(c); err != nil {
				return fmt.Errorf("decoding a cluster: %w", err)
			}
			a.cfg.Clusters[c.GetName()] = c
		case typeListener:
			l := &listenerv3.Listener{}
			if err := res.UnmarshalTo(l); err != nil {
				return fmt.Errorf("decoding a listener: %w", err)
			}
			a.cfg.Listeners[l.GetName()] = l
			names = append(names, RouteNames(l)...)
		case typeRoute:
			r := &routev3.RouteConfiguration{}
			if err := res.UnmarshalTo(r); err != nil {
				return fmt.Errorf("decoding a route configuration: %w", err)
			}
			a.cfg.Routes[r.GetName()] = r
		}
	}
	a.got[resp.GetTypeUrl()] = true
	ack := &discoveryv3.DiscoveryRequest{
		Node: a.node, TypeUrl: resp.GetTypeUrl(), VersionInfo: resp.GetVersionInfo(), ResponseNonce: resp.GetNonce(),
	}
	if resp.GetTypeUrl() == typeRoute {
		ack.ResourceNames = a.routeNames
	}
	if err := a.stream.Send(ack); err != nil {
		return fmt.Errorf("ACKing %s: %w", resp.GetTypeUrl(), err)
	}
	if resp.GetTypeUrl() != typeListener || len(names) == 0 {
		return nil
	}
	a.routeNames = names
	if err := a.stream.Send(&discoveryv3.DiscoveryRequest{Node: a.node, TypeUrl: typeRoute, ResourceNames: names}); err != nil {
		return fmt.Errorf("asking istiod for routes %v: %w", names, err)
	}
	return nil
}

// RouteNames are the RDS route configurations a listener's HTTP
// connection managers name.
func RouteNames(l *listenerv3.Listener) []string {
	var out []string
	for _, fc := range l.GetFilterChains() {
		if m := ConnectionManager(fc); m != nil && m.GetRds() != nil {
			out = append(out, m.GetRds().GetRouteConfigName())
		}
	}
	return out
}

// ConnectionManager is the HTTP connection manager of a filter chain, or nil.
func ConnectionManager(fc *listenerv3.FilterChain) *hcmv3.HttpConnectionManager {
	for _, f := range fc.GetFilters() {
		m := &hcmv3.HttpConnectionManager{}
		if f.GetTypedConfig() != nil && f.GetTypedConfig().UnmarshalTo(m) == nil {
			return m
		}
	}
	return nil
}
