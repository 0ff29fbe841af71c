package setup

import "context"

// updateDenyList reloads the listener's deny list of leaked certificates
// from its Secret (lifecycle-manager-denied-certificates in
// --cert-namespace), on every replica. A list that does
// not parse is logged and the previous one kept: refusing everything, or
// nothing, because of a typo would be worse.
func (u *materialUpdater) updateDenyList(ctx context.Context) {
	changed, err := u.pki.LoadDenyList(ctx, u.denied)
	switch {
	case err != nil:
		u.log.Error(err, "reading the deny list of leaked certificates; keeping the previous one")
	case changed:
		u.log.Info("listener deny list updated", "entries", u.denied.Len())
	}
}
