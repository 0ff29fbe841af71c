package rotationtrigger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/certs/rotation"
)

// Rotator is the part of the certificate rotation this package drives.
type Rotator interface {
	RotateFor(ctx context.Context, request string) (rotation.Status, error)
	RotateEmergencyFor(ctx context.Context, request string) (rotation.Status, error)
	Emergency() rotation.EmergencyStatus
	DroppedForeign() []rotation.DroppedCA
}

// ReasonForeignCADropped is the reason of the Event on the bundle Secret
// about a CA someone else wrote into it, which the rotation dropped.
const ReasonForeignCADropped = "ForeignCADropped"

// Trigger polls the bundle Secret for a new rotate-ca or
// rotate-ca-emergency value, and reports an emergency rotation's progress.
type Trigger struct {
	Client   client.Client
	Bundle   client.ObjectKey
	Rotator  Rotator
	Interval time.Duration
	Log      logr.Logger
	// Events, when set, receives Events on the bundle Secret about
	// emergency rotations.
	Events events.EventRecorder

	// progress is what was last reported; Check runs on one goroutine.
	progress reported
}

// NeedLeaderElection is true: only the leader rotates.
func (t *Trigger) NeedLeaderElection() bool { return true }

// Start checks the Secret every Interval until ctx ends.
func (t *Trigger) Start(ctx context.Context) error {
	tick := time.NewTicker(t.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			if err := t.Check(ctx); err != nil {
				t.Log.Error(err, "handling a requested CA rotation")
			}
		}
	}
}

// Check starts a rotation when the Secret asks for one not handled yet.
func (t *Trigger) Check(ctx context.Context) error {
	secret := &corev1.Secret{}
	if err := t.Client.Get(ctx, t.Bundle, secret); err != nil {
		return client.IgnoreNotFound(err)
	}
	t.reportForeign(secret)
	if err := t.checkEmergency(ctx, secret); err != nil {
		return err
	}
	want := secret.Annotations[shared.RotateCAAnnotation]
	if want == "" || want == secret.Annotations[shared.CARotatedForAnnotation] {
		return nil
	}
	// The rotator records the request with the rotation: seen again after a
	// crash before the patch below, it is not carried out twice.
	status, err := t.Rotator.RotateFor(ctx, want)
	if errors.Is(err, rotation.ErrRotationInProgress) {
		return nil // asked again while one runs; the request stays and is served after it
	}
	if err != nil {
		return fmt.Errorf("rotating the CA: %w", err)
	}
	patch := client.MergeFrom(secret.DeepCopy())
	secret.Annotations[shared.CARotatedForAnnotation] = want
	if err := t.Client.Patch(ctx, secret, patch); err != nil {
		return fmt.Errorf("recording the handled rotation request: %w", err)
	}
	t.Log.Info("CA rotation started on request", "request", want, "phase", status.Phase)
	return nil
}

// reportForeign puts a Warning Event on the bundle Secret for each CA the
// rotation dropped from it as someone else's.
func (t *Trigger) reportForeign(secret *corev1.Secret) {
	for _, ca := range t.Rotator.DroppedForeign() {
		t.event(secret, corev1.EventTypeWarning, ReasonForeignCADropped, "Drop",
			"dropped CA %s (SHA-256 %s, valid until %s) from the trust bundle: the operator did not make it; name its fingerprint in --cert-trusted-ca-fingerprints to keep it",
			ca.Name, ca.Fingerprint, ca.NotAfter.UTC().Format(time.RFC3339))
		t.Log.Info("foreign CA dropped from the trust bundle", "ca", ca.Name, "fingerprint", ca.Fingerprint)
	}
}
