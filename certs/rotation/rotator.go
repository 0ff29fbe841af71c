package rotation

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/certs/denylist"
	"github.com/lifecycle-manager/certs/issuer"
	"github.com/lifecycle-manager/certs/metrics"
	"github.com/lifecycle-manager/certs/trust"
)

// ErrRotationInProgress is returned by Rotate while a rotation runs.
var ErrRotationInProgress = errors.New("a CA rotation is in progress")

const (
	// pendingRetry is how soon Reconcile asks to run again while cert-manager
	// is still issuing.
	pendingRetry = 5 * time.Second
	// resweepAfter passes every agent to the issuer again even when the CAs
	// did not change, so that certificates entering their renewal window are
	// renewed whether or not the operator reconciles their Kyma.
	resweepAfter = time.Hour
)

// Agents lists the agent certificate requests, one per runtime.
type Agents interface {
	// AgentRequests returns the requests it could build; skipped explains
	// the runtimes it could not (say, a bad annotation), err a failed listing.
	AgentRequests(ctx context.Context) (reqs []issuer.Request, skipped, err error)
}

// Status is what one Reconcile found.
type Status struct {
	Phase trust.Phase
	// CAs in the trust bundle, oldest first.
	CAs []*x509.Certificate
	// RequeueAfter is when Reconcile wants to run again.
	RequeueAfter time.Duration
	// BundleChanged is true when this run wrote the bundle.
	BundleChanged bool
	// AgentsSwept is true when this run passed every agent to the issuer.
	AgentsSwept bool
	// Pending is true while cert-manager has yet to deliver a certificate
	// the rotation needs.
	Pending bool
	// Emergency tells how far an emergency rotation is; zero when none runs.
	Emergency EmergencyStatus
}

// Rotator keeps the trust bundle, the endpoint certificate and the agent
// certificates in step with the CAs.
type Rotator struct {
	c       client.Client
	backend issuer.Backend
	store   *trust.Store
	agents  Agents
	opts    config.Options
	metrics *metrics.Metrics
	log     logr.Logger
	// denied is the deny list, loaded from its Secret on every Reconcile;
	// agent requests consult it (see DenyList).
	denied *denylist.List
	// emergency is the last EmergencyStatus, for Emergency.
	emergency atomic.Pointer[EmergencyStatus]

	// mu serialises Reconcile and Rotate, and guards lastSweep: the bundle
	// and client CA that every agent was last brought to.
	mu          sync.Mutex
	lastSweep   string
	lastSweepAt time.Time
	retry       map[types.NamespacedName]bool
	// foreign are the CAs dropped from the bundle as someone else's, not
	// yet taken by DroppedForeign; at most maxForeignKept.
	foreign []DroppedCA
}

// maxForeignKept bounds the dropped CAs kept for DroppedForeign; the
// metric counts them all.
const maxForeignKept = 16

// DroppedCA is a CA someone else wrote into the trust bundle, which the
// Rotator dropped.
type DroppedCA struct {
	// Name is the CA's common name and serial, as in the logs.
	Name string
	// Fingerprint is its SHA-256 (trust.Fingerprint), as
	// --cert-trusted-ca-fingerprints takes it.
	Fingerprint string
	NotAfter    time.Time
}

// New returns a Rotator. agents may be nil when no agent certificates are
// managed (the sweep is skipped).
func New(c client.Client, backend issuer.Backend, agents Agents, opts config.Options, m *metrics.Metrics, log logr.Logger) *Rotator {
	return &Rotator{
		c:       c,
		denied:  &denylist.List{},
		backend: backend,
		store:   trust.NewStore(c, types.NamespacedName{Namespace: opts.Namespace, Name: opts.BundleSecret}, opts.TrustedCAFingerprints...),
		agents:  agents,
		opts:    opts,
		metrics: m,
		log:     log,
	}
}

// DenyList is the deny list of leaked certificates as the last Reconcile
// read it: agent requests that consult it re-issue a denied certificate.
func (r *Rotator) DenyList() *denylist.List {
	if r == nil {
		return nil
	}
	return r.denied
}

// Emergency returns how far an emergency rotation was at the last Reconcile.
func (r *Rotator) Emergency() EmergencyStatus {
	if es := r.emergency.Load(); es != nil {
		return *es
	}
	return EmergencyStatus{}
}

// NeedLeaderElection makes a manager run the Rotator on the leader only.
func (r *Rotator) NeedLeaderElection() bool { return true }

// Start runs Reconcile until ctx ends, as often as it asks and at least
// every RotationInterval. Errors are logged and retried; it returns nil.
func (r *Rotator) Start(ctx context.Context) error {
	failures := 0
	for ctx.Err() == nil {
		wait := r.opts.RotationInterval
		st, err := r.Reconcile(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			// Back off from pendingRetry to the interval, so that a lasting
			// error (one broken Kyma) is not retried and logged every few seconds.
			r.log.Error(err, "CA rotation")
			wait = min(wait, pendingRetry<<min(failures, 6))
			failures++
		case err == nil:
			failures = 0
			if st.RequeueAfter > 0 {
				wait = min(wait, st.RequeueAfter)
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
	return nil
}

// Rotate starts a CA rotation now, e.g. after a key leaked. It refuses
// while one is in progress: a second new CA before the first reached every
// peer could lock runtimes out.
func (r *Rotator) Rotate(ctx context.Context) (Status, error) {
	return r.RotateFor(ctx, "")
}

// RotateFor is Rotate for the request named request (the rotate-ca
// annotation's value): it records the request in the bundle before the
// new CA is made, and a request seen again — after a restart before its
// caller recorded it as handled — is recognised and not carried out twice.
// An empty request is Rotate.
func (r *Rotator) RotateFor(ctx context.Context, request string) (Status, error) {
	r.mu.Lock()
	err := r.startRotation(ctx, request)
	r.mu.Unlock()
	if err != nil {
		r.metrics.Failed(metrics.OperationRotate)
		return Status{}, fmt.Errorf("rotating the CA: %w", err)
	}
	return r.Reconcile(ctx)
}

func (r *Rotator) startRotation(ctx context.Context, request string) error {
	st, err := r.store.Load(ctx)
	if err != nil {
		return err
	}
	if request != "" && st.Request.ID == request {
		// Asked before: made for it already when the backend's CA is not
		// the one it replaces (the bundle takes it up in Reconcile).
		if cur, err := r.backend.CurrentCA(ctx); err == nil && trust.Fingerprint(cur) != st.Request.Replaces {
			r.log.Info("CA rotation request already carried out", "request", request)
			return nil
		}
		return r.backend.RotateCA(ctx)
	}
	if st.Emergency.Active() || st.Phase(r.opts.Clock(), issuer.TimingOf(r.opts)) != trust.PhaseStable {
		return ErrRotationInProgress
	}
	if request != "" {
		// Recorded before the new CA is made: see RotateFor.
		st.Request = trust.Request{ID: request}
		if n := st.Newest(); n != nil {
			st.Request.Replaces = trust.Fingerprint(n)
		}
		if err := r.store.Save(ctx, st); err != nil {
			return err
		}
	}
	return r.backend.RotateCA(ctx)
}

// Reconcile brings the bundle, the endpoint certificate and the agent
// certificates one step further; it is idempotent.
func (r *Rotator) Reconcile(ctx context.Context) (Status, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refreshDenyList(ctx)
	st, status, err := r.reconcileBundle(ctx)
	// A finished emergency stays visible until the next one starts.
	if status.Emergency.Active || status.Emergency.Step == StepDone || r.Emergency().Step != StepDone {
		r.emergency.Store(&status.Emergency)
	}
	if err != nil {
		r.metrics.Failed(metrics.OperationRotate)
		return Status{}, err
	}
	now := r.opts.Clock()
	status.Phase = st.Phase(now, issuer.TimingOf(r.opts))
	status.CAs = st.CAs
	r.metrics.SetPhase(string(status.Phase))
	if next := st.NextChange(now, issuer.TimingOf(r.opts)); !next.IsZero() {
		status.RequeueAfter = max(next.Sub(now), time.Second)
	}
	if status.Emergency.Active {
		status.RequeueAfter = min(nonZero(status.RequeueAfter, emergencyRecheck), emergencyRecheck)
	}
	// The endpoint and the agents do not wait for each other's failures.
	pending, endpointErr := r.reconcileEndpoint(ctx)
	swept, sweepPending, sweepErr := r.sweepAgents(ctx, st, now)
	status.AgentsSwept = swept
	status.Pending = pending || sweepPending
	if status.Pending {
		status.RequeueAfter = min(nonZero(status.RequeueAfter, pendingRetry), pendingRetry)
	}
	return status, errors.Join(endpointErr, sweepErr)
}

func nonZero(d, fallback time.Duration) time.Duration {
	if d == 0 {
		return fallback
	}
	return d
}

// reconcileBundle puts the backend's current CA into the bundle, starts a
// new CA when the newest nears its end and no rotation runs, and drops
// expired CAs.
func (r *Rotator) reconcileBundle(ctx context.Context) (trust.State, Status, error) {
	var status Status
	st, err := r.store.Load(ctx)
	if err != nil && !errors.Is(err, trust.ErrNoBundle) {
		return st, status, err // a bundle that does not parse is never overwritten
	}
	now := r.opts.Clock()
	current, err := r.backend.CurrentCA(ctx)
	if err != nil {
		return st, status, fmt.Errorf("reading the current CA: %w", err)
	}
	// Load left out the CAs someone else added; the save below drops them,
	// and a bundle from before the record gets one.
	recordMissing := st.Recorded == nil && len(st.CAs) > 0
	r.reportForeign(st.Foreign)
	st, changed := st.WithNewest(current, now)
	if changed {
		r.log.Info("CA joined the trust bundle", "ca", caName(current), "notAfter", current.NotAfter)
	}
	changed = changed || recordMissing || len(st.Foreign) > 0
	if st, status.Emergency, err = r.advanceEmergency(ctx, st, now); err != nil {
		return st, status, fmt.Errorf("emergency CA rotation: %w", err)
	}
	changed = changed || status.Emergency.Step == StepDone
	if !st.Emergency.Active() && st.Phase(now, issuer.TimingOf(r.opts)) == trust.PhaseStable && r.caDue(st.Newest(), now) {
		r.log.Info("the newest CA nears its end: starting a rotation", "ca", caName(st.Newest()))
		if err := r.backend.RotateCA(ctx); err != nil {
			return st, status, fmt.Errorf("starting a CA rotation: %w", err)
		}
		if current, err = r.backend.CurrentCA(ctx); err != nil {
			return st, status, fmt.Errorf("reading the new CA: %w", err)
		}
		var added bool
		st, added = st.WithNewest(current, now) // cert-manager may need a while: then on a later run
		changed = changed || added
	}
	st, removed := st.Pruned(now)
	for _, ca := range removed {
		r.log.Info("expired CA left the trust bundle", "ca", caName(ca), "notAfter", ca.NotAfter)
		r.metrics.ForgetExpiry(metrics.KindCA, r.store.Key().Namespace, caName(ca))
	}
	if changed || len(removed) > 0 {
		if err := r.store.Save(ctx, st); err != nil {
			return st, status, err
		}
		status.BundleChanged = true
	}
	for _, ca := range st.CAs {
		r.metrics.SetExpiry(metrics.KindCA, r.store.Key().Namespace, caName(ca), ca.NotAfter)
	}
	return st, status, nil
}

// reportForeign logs and counts the CAs dropped as someone else's and
// keeps them for DroppedForeign.
func (r *Rotator) reportForeign(cas []*x509.Certificate) {
	for _, ca := range cas {
		d := DroppedCA{Name: caName(ca), Fingerprint: trust.Fingerprint(ca), NotAfter: ca.NotAfter}
		r.log.Error(errors.New("a CA the operator did not make was in the trust bundle"),
			"dropping it: name its fingerprint in --cert-trusted-ca-fingerprints to keep it",
			"ca", d.Name, "fingerprint", d.Fingerprint, "notAfter", d.NotAfter)
		r.metrics.ForeignCADropped()
		r.metrics.ForgetExpiry(metrics.KindCA, r.store.Key().Namespace, d.Name)
		if len(r.foreign) < maxForeignKept {
			r.foreign = append(r.foreign, d)
		}
	}
}

// DroppedForeign returns the CAs dropped as someone else's since the last
// call, for an Event.
func (r *Rotator) DroppedForeign() []DroppedCA {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.foreign
	r.foreign = nil
	return out
}

// caName tells CAs apart in logs and metrics: cert-manager's successive CAs
// share their common name, so the serial number's start goes with it.
func caName(ca *x509.Certificate) string {
	serial := ca.SerialNumber.Text(16)
	return fmt.Sprintf("%s (serial %.8s)", ca.Subject.CommonName, serial)
}

// caDue reports whether the CA is inside its renewal window: CARenewBefore
// before its end, or the last third of its life when that is shorter (a
// cert-manager CA may live shorter than the built-in default).
func (r *Rotator) caDue(ca *x509.Certificate, now time.Time) bool {
	renewBefore := r.opts.CARenewBefore
	if life := ca.NotAfter.Sub(ca.NotBefore); renewBefore >= life {
		renewBefore = life / 3
	}
	return !now.Before(ca.NotAfter.Add(-renewBefore))
}

// EndpointRequest is the request for the event endpoint's server
// certificate; ok is false when no endpoint DNS names are configured.
func EndpointRequest(o config.Options) (issuer.Request, bool) {
	if len(o.EndpointDNSNames) == 0 {
		return issuer.Request{}, false
	}
	req := issuer.Request{
		Secret:     types.NamespacedName{Namespace: o.EndpointNamespace, Name: o.EndpointSecret},
		Purpose:    issuer.PurposeEndpoint,
		CommonName: o.EndpointDNSNames[0],
	}
	for _, n := range o.EndpointDNSNames {
		if ip := net.ParseIP(n); ip != nil {
			req.IPs = append(req.IPs, ip)
		} else {
			req.DNSNames = append(req.DNSNames, n)
		}
	}
	return req, true
}

func (r *Rotator) reconcileEndpoint(ctx context.Context) (pending bool, err error) {
	req, ok := EndpointRequest(r.opts)
	if !ok {
		return false, nil
	}
	res, err := r.backend.Ensure(ctx, req)
	if err != nil {
		r.metrics.Failed(metrics.OperationIssue)
		return false, fmt.Errorf("endpoint certificate: %w", err)
	}
	if res.Issued {
		r.log.Info("issued the endpoint certificate", "secret", req.Secret, "reason", res.Reason, "notAfter", res.NotAfter)
	}
	return res.Pending, nil
}

// sweepAgents passes every agent to the issuer once per bundle and client
// CA: that spreads a new bundle, and later re-issues from the new CA. Agents
// that failed or wait for cert-manager are retried on the next runs, alone.
func (r *Rotator) sweepAgents(ctx context.Context, st trust.State, now time.Time) (swept, pending bool, err error) {
	if r.agents == nil {
		return false, false, nil
	}
	key := sweepKey(st, st.ClientCA(now, issuer.TimingOf(r.opts)), r.denied.Version())
	full := key != r.lastSweep || now.Sub(r.lastSweepAt) >= resweepAfter
	if !full && len(r.retry) == 0 {
		return false, false, nil
	}
	reqs, skipped, err := r.agents.AgentRequests(ctx)
	if err != nil {
		return false, false, fmt.Errorf("listing agents: %w", err)
	}
	var errs []error
	if full {
		errs = append(errs, skipped) // a Kyma without a valid request must not hold the others up
	} else {
		reqs = slices.DeleteFunc(reqs, func(req issuer.Request) bool { return !r.retry[req.Secret] })
	}
	retry := map[types.NamespacedName]bool{}
	issued := 0
	for _, req := range reqs {
		res, err := r.backend.Ensure(ctx, req)
		switch {
		case err != nil:
			r.metrics.Failed(metrics.OperationIssue)
			errs = append(errs, fmt.Errorf("agent certificate %s: %w", req.Secret, err))
			retry[req.Secret] = true
		case res.Pending:
			pending, retry[req.Secret] = true, true
		case res.Issued:
			issued++
		}
	}
	r.retry = retry
	if full {
		r.lastSweep, r.lastSweepAt = key, now
	}
	r.log.Info("passed agents to the issuer", "all", full, "agents", len(reqs), "issued", issued, "retrying", len(retry))
	return full, pending, errors.Join(errs...)
}

// sweepKey changes with the bundle, the client CA and the deny list: each
// change needs every agent passed to the issuer.
func sweepKey(st trust.State, clientCA *x509.Certificate, denied string) string {
	h := sha256.New()
	h.Write(st.PEM())
	if clientCA != nil {
		h.Write(clientCA.Raw)
	}
	h.Write([]byte(denied))
	return hex.EncodeToString(h.Sum(nil))
}
