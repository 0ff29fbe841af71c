package skrwebhook

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/certs/pushpki"
	"github.com/lifecycle-manager/certs/runtimesync"
	"github.com/lifecycle-manager/certs/tlssecret"
	"github.com/lifecycle-manager/certs/trust"
	"github.com/lifecycle-manager/kcp-operator/internal/agent"
	"github.com/lifecycle-manager/kcp-operator/internal/conditionboard"
	"github.com/lifecycle-manager/kcp-operator/internal/index"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
	"github.com/lifecycle-manager/kcp-operator/internal/runtimeprep"
	"github.com/lifecycle-manager/kcp-operator/internal/schedule"
	"github.com/lifecycle-manager/kcp-operator/internal/shard"
)

// Reconciler installs the agent of one Kyma's runtime.
type Reconciler struct {
	// Guard, set in a sharded operator, runs reconciles only while this
	// shard holds the Kyma (internal/shard).
	Guard     shard.Wrapper
	KCP       client.Client
	Runtimes  *remote.Cache
	PKI       *pushpki.PKI
	Installer *agent.Installer
	// SecretName is the agent's TLS Secret in the runtime.
	SecretName string
	// Resync is the interval while the agent is ready; Retry while it is not.
	Resync, Retry time.Duration
	// Sources are further event sources: drift events of the agent's objects.
	Sources []source.Source
	// Events records problems on the Kyma (may be nil).
	Events events.EventRecorder
	// Board takes the SKRWebhook condition to the Kyma controller.
	Board *conditionboard.Board
}

// Reconcile ensures the certificate and the agent, then reports.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	kyma := &v1beta2.Kyma{}
	if err := r.KCP.Get(ctx, req.NamespacedName, kyma); err != nil {
		if apierrors.IsNotFound(err) {
			r.Board.Forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if kyma.SkipsReconciliation() || !kyma.DeletionTimestamp.IsZero() || !schedule.TakenOver(kyma) {
		// A Kyma the Kyma controller has not taken over yet comes back
		// when it has (see schedule.TakenOver).
		return ctrl.Result{}, nil
	}
	cond, agentStatus := r.install(ctx, kyma)
	if wait := r.startingUp(kyma, cond, agentStatus); wait > 0 {
		return schedule.UnderWay(wait), nil
	}
	cond = r.reportRefusedURL(kyma, cond, agentStatus.WebhookURLRefused)
	r.Board.Report(kyma, cond)
	if cond.Status != metav1.ConditionTrue {
		return ctrl.Result{RequeueAfter: r.Retry}, nil
	}
	return ctrl.Result{RequeueAfter: r.Resync}, nil
}

// Reasons of the condition while things are under way: the agent's
// Deployment is not available, its certificate not issued yet.
const (
	reasonNotReady            = "AgentNotReady"
	reasonCertificatesPending = "CertificatesPending"
)

// certificateGrace is how long a new Kyma's certificate may be pending
// before the condition says so.
const certificateGrace = 30 * time.Second

// startingUp returns how long to wait before reporting a new agent that is
// not available yet or whose certificate is being issued, or 0 to report
// now. A new agent is never available at
// once, and saying so cost each new Kyma a write and a reconcile of its
// own; one still unavailable a retry interval after its Deployment was
// created is reported. An agent that was reported before is reported at once.
func (r *Reconciler) startingUp(kyma *v1beta2.Kyma, cond metav1.Condition, st agent.Status) time.Duration {
	if r.Board.Find(kyma, v1beta2.ConditionSKRWebhook) != nil {
		return 0
	}
	if cond.Reason == reasonCertificatesPending && time.Since(kyma.CreationTimestamp.Time) < certificateGrace {
		// A new Kyma's certificate is issued within a reconcile or two;
		// one that takes longer (cert-manager stuck, say) is reported.
		return r.Retry
	}
	if cond.Reason != reasonNotReady || st.Created.IsZero() {
		return 0
	}
	// The API server stores the creation time to the second.
	return max(0, time.Until(st.Created.Add(r.Retry+time.Second)))
}

// install does the work and describes the outcome as the condition, with
// the agent's status when it got that far.
func (r *Reconciler) install(ctx context.Context, kyma *v1beta2.Kyma) (_ metav1.Condition, status agent.Status) {
	notReady := func(reason string, err error) (metav1.Condition, agent.Status) {
		return metav1.Condition{Type: v1beta2.ConditionSKRWebhook, Status: metav1.ConditionFalse, Reason: reason, Message: err.Error()}, status
	}
	if owner, err := index.Owner(ctx, r.KCP, index.RuntimeID(kyma)); err != nil {
		return notReady("RuntimeIDUnknown", err)
	} else if owner != nil && owner.UID != kyma.UID {
		return notReady(ReasonRuntimeIDConflict, r.refuseIdentity(ctx, kyma, owner))
	}
	res, err := r.PKI.EnsureKyma(ctx, kyma)
	switch {
	case errors.Is(err, trust.ErrNoBundle):
		return notReady(reasonCertificatesPending, fmt.Errorf("the KCP CA bundle is not ready yet: %w", err))
	case apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err):
		// Another write of the certificate Secret (a reconcile that read an
		// older cache, the rotation) got there first: progress, not an error.
		return notReady(reasonCertificatesPending, fmt.Errorf("the agent's certificate is being issued: %w", err))
	case err != nil:
		return notReady("CertificateError", err)
	case res.Pending:
		return notReady(reasonCertificatesPending, errors.New("the agent's certificate is being issued"))
	}
	rt, err := r.Runtimes.For(ctx, kyma)
	if err != nil {
		return notReady(remote.ConditionReason(err, "RuntimeUnreachable"), err)
	}
	status, err = r.installInto(ctx, kyma, rt, res.Material)
	if err != nil {
		r.Runtimes.Forget(rt, err)
		return notReady("InstallError", err)
	}
	if len(status.PublicAgentRemoved) > 0 && r.Events != nil {
		r.Events.Eventf(kyma, nil, corev1.EventTypeNormal, ReasonPublicAgentRemoved, "InstallAgent",
			"removed the public lifecycle manager's agent from the runtime: %s", strings.Join(status.PublicAgentRemoved, ", "))
	}
	if !status.Ready {
		return notReady(reasonNotReady, errors.New(status.Message))
	}
	return metav1.Condition{Type: v1beta2.ConditionSKRWebhook, Status: metav1.ConditionTrue, Reason: "AgentReady", Message: status.Message}, status
}

func (r *Reconciler) installInto(ctx context.Context, kyma *v1beta2.Kyma, rt *remote.Runtime, m tlssecret.Material) (agent.Status, error) {
	if err := runtimeprep.Ensure(ctx, rt); err != nil {
		return agent.Status{}, err
	}
	if _, err := runtimesync.New(rt.Namespace, r.SecretName, r.PKI.Metrics).Apply(ctx, rt.Client, m); err != nil {
		return agent.Status{}, fmt.Errorf("syncing the agent's certificate: %w", err)
	}
	var watchers v1beta2.WatcherList
	if err := r.KCP.List(ctx, &watchers); err != nil {
		return agent.Status{}, fmt.Errorf("listing Watchers: %w", err)
	}
	return r.Installer.Install(ctx, kyma, rt, m.CABundle, watchers.Items)
}

// ReasonPublicAgentRemoved is the Event's reason when an install removed
// the agent (skr-webhook) the public lifecycle manager left in the runtime.
const ReasonPublicAgentRemoved = "PublicAgentRemoved"

// ReasonRuntimeIDConflict is the SKRWebhook condition's reason on a Kyma
// whose runtime ID another, older Kyma has.
const ReasonRuntimeIDConflict = "RuntimeIDConflict"

// refuseIdentity takes the push path from a Kyma whose runtime ID belongs
// to owner: no agent certificate (one issued before is deleted from the
// KCP), so that its runtime cannot send events in owner's name, and its
// runtime is polled at the no-push resync interval instead. Nothing in
// its runtime is touched: both Kymas may point at the same cluster, whose
// agent is then owner's. The error it returns is the condition's message.
func (r *Reconciler) refuseIdentity(ctx context.Context, kyma, owner *v1beta2.Kyma) error {
	refused := fmt.Errorf("the runtime ID %q is the push identity of Kyma %s/%s already; this Kyma gets no agent "+
		"certificate and is resynced instead: give each runtime's Kyma its own %s label", index.RuntimeID(kyma),
		owner.Namespace, owner.Name, shared.RuntimeIDLabel)
	if err := r.PKI.RemoveKyma(ctx, kyma); err != nil {
		return fmt.Errorf("%w (removing its certificate failed: %w)", refused, err)
	}
	return refused
}

// Cleanup removes the agent, its Secret in the runtime and the Kyma's
// certificate in the KCP; the Kyma controller and the Purge controller run
// it when a Kyma goes.
func (r *Reconciler) Cleanup(ctx context.Context, kyma *v1beta2.Kyma, rt *remote.Runtime) error {
	if err := agent.Remove(ctx, rt); err != nil {
		return err
	}
	if err := runtimesync.New(rt.Namespace, r.SecretName, r.PKI.Metrics).Delete(ctx, rt.Client); err != nil {
		return fmt.Errorf("deleting the agent's certificate in the runtime: %w", err)
	}
	if err := r.PKI.RemoveKyma(ctx, kyma); err != nil {
		return fmt.Errorf("removing the agent's certificate in the KCP: %w", err)
	}
	return nil
}
