package rotation

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/certs/denylist"
	"github.com/lifecycle-manager/certs/issuer"
	"github.com/lifecycle-manager/certs/metrics"
)

// LoadDenyList reads the deny list Secret key (config.DenySecretKey) into
// list and reports whether that changed it. A missing Secret is an empty
// list; one that does not parse leaves list as it was and is an error
// naming the line. The listener's embedder and the Rotator both call it.
func LoadDenyList(ctx context.Context, c client.Reader, key types.NamespacedName, list *denylist.List) (bool, error) {
	secret, err := issuer.GetSecret(ctx, c, key)
	if err != nil {
		return false, err
	}
	var text []byte
	if secret != nil {
		text = secret.Data[config.DenySecretKey]
	}
	changed, err := list.SetText(text)
	if err != nil {
		return false, fmt.Errorf("deny list %s, key %s: %w", key, config.DenySecretKey, err)
	}
	return changed, nil
}

// DenySecretKey is the deny list Secret of the options; ok is false when
// none is configured.
func DenySecretKey(o config.Options) (types.NamespacedName, bool) {
	return types.NamespacedName{Namespace: o.Namespace, Name: o.DenySecret}, o.DenySecret != ""
}

// refreshDenyList reloads the deny list; a failure keeps the list as it was
// and is logged: it must not hold up the rotation.
func (r *Rotator) refreshDenyList(ctx context.Context) {
	key, ok := DenySecretKey(r.opts)
	if !ok {
		return
	}
	changed, err := LoadDenyList(ctx, r.c, key, r.denied)
	switch {
	case err != nil:
		r.metrics.Failed(metrics.OperationRotate)
		r.log.Error(err, "reading the deny list of leaked certificates; keeping the previous one")
	case changed:
		r.log.Info("deny list of leaked certificates changed: re-issuing the denied agent certificates", "entries", r.denied.Len())
	}
}
