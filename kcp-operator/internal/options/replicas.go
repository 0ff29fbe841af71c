package options

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Replicas are the settings of running more than one replica: the timing
// of the leader election and the Service through which only the leader
// receives events.
type Replicas struct {
	// LeaseDuration, RenewDeadline and RetryPeriod are controller-runtime's
	// leader election timings, under the public lifecycle manager's flag names.
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
	// ListenerService (namespace/name) is a Service without a selector
	// whose EndpointSlice the leader points at ListenerEndpointIP once its
	// listener has consumers, so that events never reach a standby.
	ListenerService    string
	ListenerEndpointIP string
}

// leaderJitter is client-go's leaderelection.JitterFactor: the renew
// deadline must exceed it times the retry period.
const leaderJitter = 1.2

// defaultReplicas are controller-runtime's leader election defaults.
func defaultReplicas() Replicas {
	return Replicas{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}
}

func (r *Replicas) bind(fs *pflag.FlagSet) {
	fs.DurationVar(&r.LeaseDuration, "leader-election-lease-duration", r.LeaseDuration, "How long a standby waits after the leader's last renewal before it takes the Lease: the longest a killed leader leaves events unserved. A leader that stops cleanly gives the Lease up at once. The public lifecycle manager's flag name.")
	fs.DurationVar(&r.RenewDeadline, "leader-election-renew-deadline", r.RenewDeadline, "How long the leader tries to renew the Lease before it gives up leadership and exits; below --leader-election-lease-duration.")
	fs.DurationVar(&r.RetryPeriod, "leader-election-retry-period", r.RetryPeriod, "How often the leader renews and a standby tries to take the Lease; --leader-election-renew-deadline must exceed 1.2 × this.")
	fs.StringVar(&r.ListenerService, "listener-service", r.ListenerService, "Service (namespace/name, without a selector) of the event listener: the leader keeps its EndpointSlice naming only itself, at --listener-endpoint-ip, once its listener has consumers, so that no event reaches a standby. Empty: the operator keeps no EndpointSlice.")
	fs.StringVar(&r.ListenerEndpointIP, "listener-endpoint-ip", r.ListenerEndpointIP, "IP address of this replica's listener in that EndpointSlice: the pod's IP (the chart passes status.podIP).")
}

func (r *Replicas) validate() []error {
	var errs []error
	if r.RetryPeriod <= 0 || float64(r.RenewDeadline) <= leaderJitter*float64(r.RetryPeriod) || r.LeaseDuration <= r.RenewDeadline {
		errs = append(errs, fmt.Errorf("--leader-election-lease-duration %s, --leader-election-renew-deadline %s, --leader-election-retry-period %s: want lease > renew deadline > %g × retry period > 0",
			r.LeaseDuration, r.RenewDeadline, r.RetryPeriod, leaderJitter))
	}
	if r.ListenerService == "" {
		return errs
	}
	if ns, name, ok := strings.Cut(r.ListenerService, "/"); !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		errs = append(errs, fmt.Errorf("--listener-service %q: want namespace/name", r.ListenerService))
	}
	if ip, err := netip.ParseAddr(r.ListenerEndpointIP); err != nil || ip.IsUnspecified() || ip.Zone() != "" {
		errs = append(errs, fmt.Errorf("--listener-endpoint-ip %q: want this replica's IP address with --listener-service", r.ListenerEndpointIP))
	}
	return errs
}

// ListenerServiceKey splits ListenerService; empty strings when unset.
func (r Replicas) ListenerServiceKey() (namespace, name string) {
	namespace, name, _ = strings.Cut(r.ListenerService, "/")
	return namespace, name
}
