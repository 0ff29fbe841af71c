// Package pushpki assembles the push-path PKI for the KCP operator from
// config.Options: the configured backend (built-in or cert-manager), the
// rotator, the runtime Secret syncer and the metrics. It is the one entry
// point the operator needs: EnsureKyma and RemoveKyma in its Kyma
// reconciler, SyncRuntime to put the result into the runtime, and
// AddToManager to run the rotation. certs/README.md documents the flow.
package pushpki
