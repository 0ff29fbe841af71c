package setup

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/certs/denylist"
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/pushpki"
	"github.com/lifecycle-manager/certs/tlsreload"
	"github.com/lifecycle-manager/kcp-operator/internal/agent"
	"github.com/lifecycle-manager/kcp-operator/internal/index"
	"github.com/lifecycle-manager/kcp-operator/internal/options"
	"github.com/lifecycle-manager/kcp-operator/internal/pkiclient"
	"github.com/lifecycle-manager/kcp-operator/internal/push"
	"github.com/lifecycle-manager/kcp-operator/internal/recorder"
	"github.com/lifecycle-manager/kcp-operator/internal/rotationtrigger"
	"github.com/lifecycle-manager/listener"
	"github.com/lifecycle-manager/listener/event"
	"github.com/lifecycle-manager/listener/eventsource"
)

// KymaManager is the listener manager of runtime Kyma changes: the name
// the public runtime-watcher uses for the lifecycle manager.
const KymaManager = "lifecycle-manager"

// pushPath is what the push path adds to the operator: the PKI, the
// listener and the event sources of the Kyma and Manifest controllers.
type pushPath struct {
	pki         *pushpki.PKI
	listener    *listener.Server
	kymaEvents  source.Source
	driftEvents source.Source
	agentEvents source.Source
	tracker     *push.Tracker
	// kymaWaits and manifestWaits hold the pushed writes the Kyma and
	// Manifest reconciles must read past.
	kymaWaits, manifestWaits *push.Waits
	// budget demotes the pushed requests of a runtime beyond its share.
	budget *push.Budget
}

func newPushPath(mgr manager.Manager, opts options.Options, certOpts config.Options, reg prometheus.Registerer, log logr.Logger) (*pushPath, error) {
	c, err := newPKIClient(mgr, certOpts)
	if err != nil {
		return nil, err
	}
	p, err := pushpki.New(c, certOpts, reg, log.WithName("certs"))
	if err != nil {
		return nil, err
	}
	if err := p.AddToManager(mgr); err != nil {
		return nil, fmt.Errorf("adding the certificate rotation: %w", err)
	}
	trigger := &rotationtrigger.Trigger{
		Client: c, Bundle: client.ObjectKey{Namespace: certOpts.Namespace, Name: certOpts.BundleSecret},
		Rotator: p.Rotator, Interval: 5 * time.Second, Log: log.WithName("ca-rotation"),
		Events: recorder.Bounded{EventRecorder: mgr.GetEventRecorder("ca-rotation")},
	}
	if err := mgr.Add(trigger); err != nil {
		return nil, fmt.Errorf("adding the CA rotation trigger: %w", err)
	}
	pp := &pushPath{pki: p}
	if opts.ListenerAddr == "" {
		return pp, nil
	}
	if err := pp.addListener(mgr, opts, reg, log); err != nil {
		return nil, err
	}
	return pp, nil
}

// newPKIClient is the PKI's client: it reads agent certificates from the
// manager's cache (they carry the Kyma label), its own Secrets from a small
// cache added to the manager, and only what neither holds from the API
// server.
func newPKIClient(mgr manager.Manager, certOpts config.Options) (*pkiclient.Client, error) {
	direct, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), HTTPClient: mgr.GetHTTPClient()})
	if err != nil {
		return nil, fmt.Errorf("creating the PKI's client: %w", err)
	}
	own, err := pkiclient.NewSingletonCache(mgr.GetConfig(),
		cache.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), HTTPClient: mgr.GetHTTPClient()},
		certOpts.Namespace, certOpts.EndpointNamespace)
	if err != nil {
		return nil, err
	}
	// Registered now, so that the manager waits for it before the rotator starts.
	if _, err := own.GetInformer(context.Background(), &corev1.Secret{}); err != nil {
		return nil, fmt.Errorf("watching the PKI's Secrets: %w", err)
	}
	if err := mgr.Add(own); err != nil {
		return nil, fmt.Errorf("adding the cache of the PKI's Secrets: %w", err)
	}
	return &pkiclient.Client{Client: direct, Secrets: []client.Reader{mgr.GetCache(), own}, Kymas: mgr.GetCache()}, nil
}

func (pp *pushPath) addListener(mgr manager.Manager, opts options.Options, reg prometheus.Registerer, log logr.Logger) error {
	kp, bundle, err := placeholderMaterial()
	if err != nil {
		return err
	}
	denied := &denylist.List{}
	cfg := listener.Config{
		Addr:              opts.ListenerAddr,
		Managers:          append([]string{KymaManager, agent.DriftManager}, opts.ListenerManagers...),
		ClientCAs:         bundle,
		AcceptRuntime:     acceptRuntime(mgr.GetClient()),
		Registerer:        reg,
		Log:               log.WithName("listener"),
		RuntimeEventRate:  opts.ListenerRuntimeRate,
		RuntimeEventBurst: opts.ListenerRuntimeBurst,
	}
	cfg.DeniedCertificates = denied // refreshed with the bundle by the materialUpdater
	if opts.ListenerMode == "direct" {
		cfg.Mode, cfg.KeyPair = listener.ModeDirect, kp
	} else {
		cfg.Mode = listener.ModeGateway
		for _, cidr := range opts.ListenerTrustedProxies {
			prefix, err := netip.ParsePrefix(cidr)
			if err != nil {
				return fmt.Errorf("--listener-trusted-proxies: %w", err)
			}
			cfg.TrustedProxies = append(cfg.TrustedProxies, prefix)
		}
	}
	srv, err := listener.New(cfg)
	if err != nil {
		return fmt.Errorf("creating the event listener: %w", err)
	}
	if err := mgr.Add(srv); err != nil {
		return fmt.Errorf("adding the event listener: %w", err)
	}
	updater := &materialUpdater{pki: pp.pki, kp: kp, bundle: bundle, denied: denied, direct: opts.ListenerMode == "direct",
		every: refreshInterval(pp.pki.Options.PropagationDelay), log: log.WithName("listener-tls")}
	if err := mgr.Add(updater); err != nil {
		return fmt.Errorf("adding the listener's certificate updater: %w", err)
	}
	reader := mgr.GetClient()
	pp.listener = srv
	if pp.tracker, err = push.NewTracker(reg); err != nil {
		return err
	}
	if err := pp.addWaits(reg); err != nil {
		return err
	}
	if pp.budget, err = push.NewBudget(options.PushRuntimeRate, options.PushRuntimeBurst, reg, nil); err != nil {
		return err
	}
	pp.kymaEvents = eventsource.New(srv, KymaManager, push.KymaEvents(reader, pp.tracker, pp.kymaWaits),
		eventsource.WithRecheck(opts.PushRecheckDelay), eventsource.WithVersionWait(versioned),
		eventsource.WithPriority(func(ev event.Event) int { return pp.budget.Priority(ev.RuntimeID) }))
	fan := &driftFanOut{
		listener: srv, reader: reader, agentSecret: pp.pki.Options.RuntimeSecret, waits: pp.manifestWaits,
		budget: pp.budget, recheck: opts.PushRecheckDelay,
		manifests: make(chan pushed, driftBuffer), agents: make(chan pushed, driftBuffer),
	}
	if err := mgr.Add(fan); err != nil {
		return fmt.Errorf("adding the drift event consumer: %w", err)
	}
	pp.driftEvents, pp.agentEvents = pushedSource{in: fan.manifests}, pushedSource{in: fan.agents}
	return addLeaderEndpoint(mgr, srv, opts.Replicas, log)
}

func (pp *pushPath) addWaits(reg prometheus.Registerer) error {
	var err error
	if pp.kymaWaits, err = push.NewWaits(reg, "kyma", push.WaitsOptions{}); err != nil {
		return err
	}
	pp.manifestWaits, err = push.NewWaits(reg, "manifest", push.WaitsOptions{})
	return err
}

// versioned tells the events whose write the reconcile waits for itself.
func versioned(ev event.Event) bool { return ev.OldResourceVersion != "" }

// acceptRuntime rejects events whose certificate names no Kyma's runtime.
func acceptRuntime(reader client.Reader) func(context.Context, string) error {
	return func(ctx context.Context, runtimeID string) error {
		var list v1beta2.KymaList
		if err := reader.List(ctx, &list, client.MatchingFields{index.KymaRuntimeID: runtimeID}, client.UnsafeDisableDeepCopy); err != nil {
			return err // the listener answers 503: the agent keeps the event and retries
		}
		if len(list.Items) == 0 {
			return listener.Reject("unknown_runtime", fmt.Errorf("no Kyma has the runtime ID %q", runtimeID))
		}
		return nil
	}
}

// placeholderMaterial lets the listener start before the certificate
// rotation (on the leader) has written the real material: a throwaway CA
// that no agent trusts or is signed by, replaced within seconds.
func placeholderMaterial() (*tlsreload.KeyPair, *tlsreload.Bundle, error) {
	key, err := pki.GenerateKey(pki.ECDSAP256)
	if err != nil {
		return nil, nil, err
	}
	ca, err := pki.NewCA("lifecycle-manager placeholder", key, time.Now(), time.Hour)
	if err != nil {
		return nil, nil, err
	}
	certPEM, keyPEM, err := ca.Issue(pki.LeafRequest{CommonName: "placeholder", DNSNames: []string{"localhost"},
		Usage: pki.UsageServer, NotBefore: time.Now(), Duration: time.Hour}, pki.ECDSAP256)
	if err != nil {
		return nil, nil, err
	}
	kp, err := tlsreload.NewKeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, nil, err
	}
	bundle, err := tlsreload.NewBundle(pki.EncodeCerts(ca.Cert))
	if err != nil {
		return nil, nil, err
	}
	return kp, bundle, nil
}

// materialUpdater keeps the listener's certificate and CA bundle equal to
// the PKI's, on every replica.
type materialUpdater struct {
	pki    *pushpki.PKI
	kp     *tlsreload.KeyPair
	bundle *tlsreload.Bundle
	denied *denylist.List
	direct bool
	every  time.Duration
	log    logr.Logger
}

// refreshInterval is how often a listener rereads its material (from the
// manager's cache): well within the CA propagation delay, after which the
// rotation signs agent certificates with a new CA — a listener that had not
// read the new CA by then refused those agents as of an unknown authority.
func refreshInterval(propagationDelay time.Duration) time.Duration {
	return min(10*time.Second, max(propagationDelay/5, 100*time.Millisecond))
}

// NeedLeaderElection is false: every replica's listener needs the material.
func (u *materialUpdater) NeedLeaderElection() bool { return false }

// Start polls the PKI until ctx ends.
func (u *materialUpdater) Start(ctx context.Context) error {
	interval := 500 * time.Millisecond
	for {
		if u.update(ctx) {
			interval = u.every
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

func (u *materialUpdater) update(ctx context.Context) bool {
	u.updateDenyList(ctx)
	if u.direct {
		m, err := u.pki.EndpointMaterial(ctx)
		if err == nil {
			var changed bool
			if changed, err = m.UpdateReloadable(u.kp, u.bundle); changed {
				u.log.Info("listener certificate and CA bundle updated")
			}
		}
		return err == nil
	}
	pem, err := u.pki.TrustBundle(ctx)
	if err == nil {
		var changed bool
		if changed, err = u.bundle.Set(pem); changed {
			u.log.Info("listener CA bundle updated")
		}
	}
	return err == nil
}
