package options

import (
	"time"

	"github.com/spf13/pflag"
)

// LeaderElectionID is the name of the leader election Lease of an
// unsharded instance, in the first watched namespace.
const LeaderElectionID = "lifecycle-manager.operator.kyma-project.io"

// ShardsConfigMap is the ConfigMap, in the first watched namespace, that
// lists the shards (internal/shard).
const ShardsConfigMap = "lifecycle-manager-shards"

// LeaseOf is the name of the leader election Lease of shard ("": the
// unsharded instance's).
func LeaseOf(shard string) string {
	if shard == "" {
		return LeaderElectionID
	}
	return "lifecycle-manager-" + shard + ".operator.kyma-project.io"
}

// ListenerModeGateway and ListenerModeDirect are the values of --listener-mode.
const (
	ListenerModeGateway = "gateway"
	ListenerModeDirect  = "direct"
)

// Settings that follow a flag instead of having their own; the reasons are
// in docs/design/settings.md.
const (
	// manifestsPerKyma: a Kyma reconcile hands out its modules' Manifests,
	// which then wait on runtime writes.
	manifestsPerKyma = 2
	// busyBackoffFactor bounds the halving backoff of a busy recheck.
	busyBackoffFactor = 12
	// warningPerError: a Warning is a state a user resolves, an Error may
	// be a transient failure.
	warningPerError = 2
	// failureBackoffPerError bounds the retries of a failing reconcile.
	failureBackoffPerError = 5
	// noPushResyncMax is the longest resync of a Kyma without a push path.
	noPushResyncMax = time.Minute
	// runtimeIdleBeyondResync keeps a runtime's client across its resyncs.
	runtimeIdleBeyondResync = time.Hour
)

// follow sets every setting that follows a flag from the flags' values:
// in Default, and again whenever one of those flags is parsed.
func (o *Options) follow() {
	o.ManifestConcurrency = manifestsPerKyma * o.KymaConcurrency
	o.RequeueNoPush = min(o.RequeueSuccess, noPushResyncMax)
	o.RuntimeIdleTTL = o.RequeueSuccess + runtimeIdleBeyondResync
	o.RequeueBusyMax = busyBackoffFactor * o.RequeueBusy
	o.RequeueWarning = warningPerError * o.RequeueError
	o.RateLimiterMaxDelay = failureBackoffPerError * o.RequeueError
	o.WatcherController = o.ListenerMode == ListenerModeGateway
	o.Replicas.follow()
	o.LeaderElect = o.Replicas.LeaseDuration > 0
}

// derive makes fn run each time the flag name is set, after its value is:
// the settings fn writes follow that flag.
func derive(fs *pflag.FlagSet, name string, fn func()) {
	f := fs.Lookup(name)
	f.Value = followers{Value: f.Value, then: fn}
}

type followers struct {
	pflag.Value
	then func()
}

func (f followers) Set(s string) error {
	if err := f.Value.Set(s); err != nil {
		return err
	}
	f.then()
	return nil
}

// AgentInstall is whether the operator installs the agent into runtimes:
// it does once agents have an address to send events to.
func (o *Options) AgentInstall() bool { return o.AgentKCPAddress != "" }
