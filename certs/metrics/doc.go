// Package metrics exposes the state of the push-path PKI to Prometheus:
// certificate expiry timestamps, renewals by reason, the rotation phase,
// failures by operation and runtime Secret syncs. The metrics are registered
// on the prometheus.Registerer given to New, never on a global registry. A
// nil *Metrics records nothing, so tests and tools may leave it out.
package metrics
