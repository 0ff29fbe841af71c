// Package remote gives controllers a client for a Kyma's runtime cluster.
//
// One Cache serves every controller of the operator. A runtime's kubeconfig
// comes from the KCP Secret labelled operator.kyma-project.io/kyma-name=<kyma>
// (key "config"). Clients are keyed by the kubeconfig's content, so a rotated
// kubeconfig gets a new client and Kymas that share credentials (the scale
// harness puts many runtimes on one API server) share one client. Each client
// has its own rate limiter and request timeout, so one slow runtime cannot
// use up the budget of the others; connection, TLS and authorization errors
// evict it, and idle clients expire.
package remote
