// Package purge is the Purge controller. A Kyma whose deletion has not
// finished within the grace period — its runtime is unreachable, user CRs
// block a module, a finalizer is stuck — is purged: what the operator
// placed in the runtime is removed where the runtime answers, as far as the
// removal rules allow (internal/removal: no Namespace the module did not
// create, no CRD whose users' CRs remain; the Event names what was kept), the
// finalizers the operator owns are dropped from its Manifests and from the
// Kyma, and an Event and a metric record it. A Kyma that is not being
// deleted is never touched.
package purge
