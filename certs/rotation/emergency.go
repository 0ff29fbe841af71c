package rotation

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"github.com/lifecycle-manager/certs/issuer"
	"github.com/lifecycle-manager/certs/metrics"
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/trust"
)

// emergencyRecheck is how often Reconcile counts the agents still behind
// while an emergency rotation waits for them.
const emergencyRecheck = 10 * time.Second

// The steps of an emergency rotation, EmergencyStatus.Step.
const (
	// StepWaitingForCA: the backend has not delivered the new CA yet.
	StepWaitingForCA = "WaitingForCA"
	// StepPropagating: the new CA is in the bundle; agents get certificates
	// of it once every listener and gateway trusts it (the propagation delay).
	StepPropagating = "Propagating"
	// StepReissuingAgents: agents get certificates of the new CA; the old
	// CAs leave once none is behind, or at the deadline.
	StepReissuingAgents = "ReissuingAgents"
	// StepDone: the old CAs left the bundle in this run.
	StepDone = "Done"
)

// EmergencyStatus tells how far an emergency rotation is.
type EmergencyStatus struct {
	// Active is true while one runs.
	Active bool
	// Step is one of the Step constants; empty when none runs.
	Step string
	// Since is when it was asked for; Deadline when the old CAs go at the latest.
	Since, Deadline time.Time
	// AgentsBehind is the number of agents whose certificate is not from
	// the new CA yet (a Kyma whose request cannot be built counts too);
	// AgentsTotal of all agents. -1 until counted (StepReissuingAgents).
	AgentsBehind, AgentsTotal int
	// Outcome, on StepDone: metrics.OutcomeAllAgentsMoved or metrics.OutcomeDeadline.
	Outcome string
	// Dropped are the CAs that left the bundle on StepDone.
	Dropped []*x509.Certificate
}

// RotateEmergency starts an emergency rotation, after a CA key leaked: a
// new CA, agent certificates of it for every runtime, and then — as soon as
// no agent is behind, or at the EmergencyDeadline — every older CA leaves
// the bundle, so that neither the listener nor the agents trust them any
// more. It may start while a normal rotation runs; it is refused with
// ErrRotationInProgress while another emergency rotation runs. Asked again
// before its new CA arrived, it asks the backend again. Once it started, it
// returns no error: the Rotator retries what fails after.
func (r *Rotator) RotateEmergency(ctx context.Context) (Status, error) {
	return r.RotateEmergencyFor(ctx, "")
}

// RotateEmergencyFor is RotateEmergency for the request named request (the
// rotate-ca-emergency annotation's value), recorded in the bundle with the
// emergency: seen again — after a restart before its caller recorded it as
// handled — it is recognised, running or done, and not carried out twice.
func (r *Rotator) RotateEmergencyFor(ctx context.Context, request string) (Status, error) {
	r.mu.Lock()
	err := r.startEmergency(ctx, request)
	r.mu.Unlock()
	if err != nil {
		r.metrics.Failed(metrics.OperationRotate)
		return Status{}, fmt.Errorf("starting an emergency CA rotation: %w", err)
	}
	// It started: a failure of the pass after (one broken Kyma, say) is the
	// Rotator's to retry, not a reason to ask for another rotation.
	st, err := r.Reconcile(ctx)
	if err != nil {
		r.log.Error(err, "first pass of the emergency CA rotation; retrying")
	}
	return st, nil
}

func (r *Rotator) startEmergency(ctx context.Context, request string) error {
	st, err := r.store.Load(ctx)
	if err != nil {
		return err
	}
	seen := request != "" && st.EmergencyRequest == request
	switch {
	case seen && (!st.Emergency.Active() || st.EmergencyCAJoined()):
		r.log.Info("emergency CA rotation request already carried out or running", "request", request)
		return nil
	case !seen && st.EmergencyCAJoined():
		return ErrRotationInProgress
	case !st.Emergency.Active():
		// Recorded before the new CA is made, so that a restart in between
		// still ends in the old CAs' removal.
		st = st.WithEmergency(r.opts.Clock())
		st.EmergencyRequest = request
		if err := r.store.Save(ctx, st); err != nil {
			return err
		}
		r.log.Info("emergency CA rotation asked for: the CAs in the bundle leave it once every agent has a certificate of a new CA",
			"replaces", caName(st.Newest()), "deadline", st.Emergency.Since.Add(r.opts.EmergencyDeadline))
	}
	// The backend may have made the new CA already (a save of the bundle
	// failed after it): a second one is not needed.
	if cur, err := r.backend.CurrentCA(ctx); err == nil && trust.Fingerprint(cur) != st.Emergency.Replaces {
		return nil
	}
	return r.backend.RotateCA(ctx)
}

// advanceEmergency drops every CA but the newest when the emergency
// rotation is through: the new CA joined, the propagation delay passed, and
// every agent has a certificate of it — or the deadline passed.
func (r *Rotator) advanceEmergency(ctx context.Context, st trust.State, now time.Time) (trust.State, EmergencyStatus, error) {
	if !st.Emergency.Active() {
		r.metrics.EmergencyOver("")
		return st, EmergencyStatus{}, nil
	}
	es := EmergencyStatus{
		Active: true, Since: st.Emergency.Since, Deadline: st.Emergency.Since.Add(r.opts.EmergencyDeadline),
		AgentsBehind: -1, AgentsTotal: -1,
	}
	defer func() {
		if es.Active {
			r.metrics.SetEmergency(es.Deadline, es.AgentsBehind)
		}
	}()
	late := !now.Before(es.Deadline)
	switch {
	case !st.EmergencyCAJoined():
		es.Step = StepWaitingForCA
		if late {
			r.log.Error(errors.New("no new CA yet"), "the emergency CA rotation is past its deadline, but the old CAs stay until a new one joined")
		}
		return st, es, nil
	case now.Sub(st.NewestAddedAt) < r.opts.PropagationDelay:
		// Even at the deadline: before it, no agent can have a certificate
		// of the new CA, nor every listener trust it.
		es.Step = StepPropagating
		return st, es, nil
	}
	es.Step = StepReissuingAgents
	behind, total, err := r.agentsBehind(ctx, st.Newest())
	if err != nil && !late {
		return st, es, err
	}
	es.AgentsBehind, es.AgentsTotal = behind, total
	if err == nil && behind > 0 && !late {
		return st, es, nil
	}
	es.Outcome = metrics.OutcomeAllAgentsMoved
	if err != nil || behind > 0 {
		es.Outcome = metrics.OutcomeDeadline
	}
	st, es.Dropped = st.OnlyNewest()
	es.Active, es.Step = false, StepDone
	for _, ca := range es.Dropped {
		r.log.Info("emergency CA rotation: CA left the trust bundle", "ca", caName(ca), "outcome", es.Outcome, "agentsBehind", behind)
		r.metrics.ForgetExpiry(metrics.KindCA, r.store.Key().Namespace, caName(ca))
	}
	r.metrics.EmergencyOver(es.Outcome)
	return st, es, nil
}

// agentsBehind counts the agents whose certificate Secret holds a
// certificate that newest did not sign, and the Kymas without a valid
// request (their certificate cannot be re-issued). A missing or unreadable
// certificate is not behind: it is of no old CA.
func (r *Rotator) agentsBehind(ctx context.Context, newest *x509.Certificate) (behind, total int, err error) {
	if r.agents == nil {
		return 0, 0, nil
	}
	reqs, skipped, err := r.agents.AgentRequests(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("listing agents: %w", err)
	}
	behind = countErrors(skipped)
	for _, req := range reqs {
		secret, err := issuer.GetSecret(ctx, r.c, req.Secret)
		if err != nil {
			return 0, 0, err
		}
		certs, err := pki.ParseCerts(issuer.RawMaterial(secret).Cert)
		if err == nil && !signedBy(certs[0], newest) {
			behind++
		}
	}
	return behind, len(reqs) + countErrors(skipped), nil
}

// signedBy compares key IDs when both are there: a signature check for
// every agent on every recheck would cost a second of CPU per 10,000
// agents, and these Secrets are written by the PKI itself.
func signedBy(leaf, ca *x509.Certificate) bool {
	if len(leaf.AuthorityKeyId) > 0 && len(ca.SubjectKeyId) > 0 {
		return bytes.Equal(leaf.AuthorityKeyId, ca.SubjectKeyId)
	}
	return leaf.CheckSignatureFrom(ca) == nil
}

func countErrors(err error) int {
	if err == nil {
		return 0
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		return len(joined.Unwrap())
	}
	return 1
}
