package conversion

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/certs/tlssecret"
)

// Loader keeps Certificate equal to the Secret the Keeper writes, on every
// replica: each serves the webhook behind the Service.
type Loader struct {
	Reader      client.Reader
	Secret      types.NamespacedName
	Certificate *Certificate
	// Interval between reads once a certificate is loaded; before that, a
	// read every half second.
	Interval time.Duration
	Log      logr.Logger
}

// NeedLeaderElection is false: every replica serves.
func (l *Loader) NeedLeaderElection() bool { return false }

// Start reloads until ctx ends.
func (l *Loader) Start(ctx context.Context) error {
	for ctx.Err() == nil {
		wait := l.Interval
		if err := l.Load(ctx); err != nil && ctx.Err() == nil {
			if !l.Certificate.Loaded() {
				wait = 500 * time.Millisecond
			}
			l.Log.V(1).Info("the conversion webhook certificate is not loadable yet", "secret", l.Secret, "error", err.Error())
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

// Load reads the Secret once into Certificate.
func (l *Loader) Load(ctx context.Context) error {
	m, err := tlssecret.Read(ctx, l.Reader, l.Secret)
	if err != nil {
		return err
	}
	changed, err := l.Certificate.Set(m)
	if changed {
		l.Log.Info("conversion webhook certificate loaded", "secret", l.Secret)
	}
	return err
}
