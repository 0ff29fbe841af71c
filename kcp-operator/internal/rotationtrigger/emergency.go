package rotationtrigger

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/certs/rotation"
)

// The annotations of an emergency rotation on the bundle Secret: a new
// value of EmergencyAnnotation asks for one; EmergencyHandledAnnotation
// records the value that was served.
const (
	EmergencyAnnotation        = shared.OperatorGroup + "/rotate-ca-emergency"
	EmergencyHandledAnnotation = shared.OperatorGroup + "/ca-emergency-rotated-for"
)

// Reasons of the Events on the bundle Secret.
const (
	ReasonEmergencyStarted  = "EmergencyCARotationStarted"
	ReasonEmergencyProgress = "EmergencyCARotationProgress"
	ReasonEmergencyDone     = "EmergencyCARotationDone"
)

// progressEvery bounds the progress Events while only the count of agents
// behind changes.
const progressEvery = time.Minute

type reported struct {
	step   string
	behind int
	at     time.Time
}

// checkEmergency starts an emergency rotation when the Secret asks for one
// not handled yet, and reports the progress of one that runs.
func (t *Trigger) checkEmergency(ctx context.Context, secret *corev1.Secret) error {
	defer t.reportProgress(secret)
	want := secret.Annotations[EmergencyAnnotation]
	if want == "" || want == secret.Annotations[EmergencyHandledAnnotation] {
		return nil
	}
	// Recorded with the emergency: seen again after a crash before the
	// patch below, it is not carried out twice.
	_, err := t.Rotator.RotateEmergencyFor(ctx, want)
	if errors.Is(err, rotation.ErrRotationInProgress) {
		return nil // served once the running one is over
	}
	if err != nil {
		t.event(secret, corev1.EventTypeWarning, ReasonEmergencyStarted, "Failed", "starting the emergency CA rotation: %v", err)
		return fmt.Errorf("starting an emergency CA rotation: %w", err)
	}
	patch := client.MergeFrom(secret.DeepCopy())
	secret.Annotations[EmergencyHandledAnnotation] = want
	if err := t.Client.Patch(ctx, secret, patch); err != nil {
		return fmt.Errorf("recording the handled emergency rotation request: %w", err)
	}
	es := t.Rotator.Emergency()
	t.event(secret, corev1.EventTypeWarning, ReasonEmergencyStarted, "Rotate",
		"emergency CA rotation asked for (%s): new agent certificates first, then the old CAs leave the trust bundle, at the latest at %s",
		want, es.Deadline.UTC().Format(time.RFC3339))
	t.Log.Info("emergency CA rotation started on request", "request", want, "deadline", es.Deadline)
	return nil
}

// reportProgress makes an Event when the emergency rotation reached a new
// step, or, at most every progressEvery, when the agents behind changed.
func (t *Trigger) reportProgress(secret *corev1.Secret) {
	es := t.Rotator.Emergency()
	if es.Step == "" || es.Step == t.progress.step && (es.AgentsBehind == t.progress.behind || time.Since(t.progress.at) < progressEvery) {
		return
	}
	t.progress = reported{step: es.Step, behind: es.AgentsBehind, at: time.Now()}
	if es.Step == rotation.StepDone {
		t.event(secret, corev1.EventTypeNormal, ReasonEmergencyDone, "Rotate",
			"emergency CA rotation done (%s): %d old CA(s) left the trust bundle; %d of %d agents had no certificate of the new CA",
			es.Outcome, len(es.Dropped), max(es.AgentsBehind, 0), max(es.AgentsTotal, 0))
		return
	}
	behind := "not counted yet"
	if es.AgentsBehind >= 0 {
		behind = fmt.Sprintf("%d of %d agents still on an old CA", es.AgentsBehind, es.AgentsTotal)
	}
	t.event(secret, corev1.EventTypeNormal, ReasonEmergencyProgress, "Rotate",
		"emergency CA rotation: %s, %s; the old CAs leave the trust bundle at the latest at %s",
		es.Step, behind, es.Deadline.UTC().Format(time.RFC3339))
}

func (t *Trigger) event(secret *corev1.Secret, kind, reason, action, note string, args ...any) {
	if t.Events != nil {
		t.Events.Eventf(secret, nil, kind, reason, action, note, args...)
	}
}
