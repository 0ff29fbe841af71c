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

// PodIPEnv holds this replica's IP address: the address of its listener
// in the EndpointSlice of --listener-service.
const PodIPEnv = "POD_IP"

// The renew deadline and retry period in fifteenths of the lease, the
// ratio of controller-runtime's defaults (15s, 10s, 2s).
const (
	leaseParts    = 15
	renewPerLease = 10
	retryPerLease = 2
)

// defaultReplicas are controller-runtime's leader election defaults: the
// renew deadline and retry period follow the lease (Options.follow).
func defaultReplicas() Replicas { return Replicas{LeaseDuration: 15 * time.Second} }

// follow sets the renew deadline and retry period from the lease.
func (r *Replicas) follow() {
	r.RenewDeadline = r.LeaseDuration * renewPerLease / leaseParts
	r.RetryPeriod = r.LeaseDuration * retryPerLease / leaseParts
}

func (r *Replicas) bind(fs *pflag.FlagSet) {
	fs.DurationVar(&r.LeaseDuration, "leader-election-lease-duration", r.LeaseDuration, "How long a standby waits after the leader's last renewal before it takes the Lease (lifecycle-manager.operator.kyma-project.io in the first watched namespace): the longest a killed leader leaves events unserved. A leader that stops cleanly gives the Lease up at once; one that cannot renew for 2/3 of this exits. 0: no leader election, for a single replica. The public lifecycle manager's flag name.")
	derive(fs, "leader-election-lease-duration", r.follow)
	fs.StringVar(&r.ListenerService, "listener-service", r.ListenerService, "Service (namespace/name, without a selector) of the event listener: the leader keeps its EndpointSlice naming only itself, at the IP in the environment variable "+PodIPEnv+" (the chart sets it from status.podIP), once its listener has consumers, so that no event reaches a standby. Empty: the operator keeps no EndpointSlice.")
}

func (r *Replicas) validate() []error {
	var errs []error
	if r.LeaseDuration < 0 || r.LeaseDuration > 0 && (r.RetryPeriod <= 0 || float64(r.RenewDeadline) <= leaderJitter*float64(r.RetryPeriod) || r.LeaseDuration <= r.RenewDeadline) {
		errs = append(errs, fmt.Errorf("--leader-election-lease-duration %s (renew deadline %s, retry period %s): want 0 or lease > renew deadline > %g × retry period > 0",
			r.LeaseDuration, r.RenewDeadline, r.RetryPeriod, leaderJitter))
	}
	if r.ListenerService == "" {
		return errs
	}
	if ns, name, ok := strings.Cut(r.ListenerService, "/"); !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		errs = append(errs, fmt.Errorf("--listener-service %q: want namespace/name", r.ListenerService))
	}
	if ip, err := netip.ParseAddr(r.ListenerEndpointIP); err != nil || ip.IsUnspecified() || ip.Zone() != "" {
		errs = append(errs, fmt.Errorf("$%s %q: want this replica's IP address with --listener-service", PodIPEnv, r.ListenerEndpointIP))
	}
	return errs
}

// ListenerServiceKey splits ListenerService; empty strings when unset.
func (r Replicas) ListenerServiceKey() (namespace, name string) {
	namespace, name, _ = strings.Cut(r.ListenerService, "/")
	return namespace, name
}
