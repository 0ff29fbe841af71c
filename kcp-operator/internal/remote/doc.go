// Package remote gives controllers a client for a Kyma's runtime cluster.
//
// One Cache serves every controller of the operator. A runtime's kubeconfig
// comes from the KCP Secret labelled operator.kyma-project.io/kyma-name=<kyma>
// (key "config"). Connections are keyed by the kubeconfig's content, so a
// rotated kubeconfig gets a new connection, and Kymas that share credentials
// (the scale harness puts many runtimes on one API server) share its HTTP
// client and REST mapper. Each Kyma still gets its own client with its own
// rate limiter, and every request has a timeout, so one slow or busy runtime
// cannot use up the budget of the others. Connection, TLS and authorization
// errors evict a connection, and idle connections expire. A Kyma leaves the
// connection of its old kubeconfig when it gets a new one, and its client
// goes when the Kyma does, so that the connections follow the live Kymas,
// not how often their Secrets changed.
//
// Every kubeconfig passes internal/kubeconfig before a connection is built
// from it: only inline credentials unless Options.Kubeconfig allows more.
// A refused one is a *KubeconfigRefusedError for every controller that asks
// (For is the only way to a runtime client), and it stays refused until its
// Secret changes.
//
// Each connection's REST mapper is a MemoMapper, which remembers the
// mappings of kinds at a version; the operator's KCP client uses one too.
package remote
