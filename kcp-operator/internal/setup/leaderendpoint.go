package setup

import (
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/lifecycle-manager/kcp-operator/internal/agent"
	"github.com/lifecycle-manager/kcp-operator/internal/leaderendpoint"
	"github.com/lifecycle-manager/kcp-operator/internal/options"
	"github.com/lifecycle-manager/listener"
)

// addLeaderEndpoint lets the leader point the listener's Service at itself
// once both of the operator's event consumers are attached
// (internal/leaderendpoint); without --listener-service it adds nothing.
func addLeaderEndpoint(mgr manager.Manager, srv *listener.Server, opts options.Replicas, log logr.Logger) error {
	if opts.ListenerService == "" {
		return nil
	}
	ip, err := netip.ParseAddr(opts.ListenerEndpointIP)
	if err != nil {
		return fmt.Errorf("$%s: %w", options.PodIPEnv, err)
	}
	namespace, name := opts.ListenerServiceKey()
	p := &leaderendpoint.Publisher{
		Client: mgr.GetClient(), Reader: mgr.GetAPIReader(),
		Service: types.NamespacedName{Namespace: namespace, Name: name}, IP: ip, Elected: mgr.Elected(),
		Port:  func() int { return listenerPort(srv) },
		Ready: func() bool { return srv.HasConsumer(KymaManager) && srv.HasConsumer(agent.DriftManager) },
		Poll:  100 * time.Millisecond, Recheck: 10 * time.Second, Log: log.WithName("leader-endpoint"),
	}
	if err := mgr.Add(p); err != nil {
		return fmt.Errorf("adding the listener's leader endpoint: %w", err)
	}
	return nil
}

// listenerPort is the port the listener serves on, 0 before it serves.
func listenerPort(srv *listener.Server) int {
	if a, ok := srv.Addr().(*net.TCPAddr); ok {
		return a.Port
	}
	return 0
}
