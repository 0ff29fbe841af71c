// Package kubeconfig decides whether the operator may use a runtime
// kubeconfig, and turns an accepted one into a rest.Config.
//
// A runtime's kubeconfig comes from a KCP Secret that whoever provisions the
// runtime writes. The operator must not let that writer make it act on its
// own behalf: a tokenFile of /var/run/secrets/kubernetes.io/serviceaccount/token
// with a server of the writer's choosing would send the operator's own
// service-account token there; an exec plugin would run a command inside
// the operator. So by default only inline credentials are accepted:
// server (https), tls-server-name, certificate-authority-data, token,
// client-certificate-data with client-key-data. Everything that reads the
// operator's filesystem, runs a program, talks to a third address, weakens
// TLS or changes the identity is refused with the field and the context,
// user or cluster it is in, unless the operator was started with that
// Feature allowed.
//
// Only what would be used is checked: the current context, its cluster and
// its user. The rest.Config is built from a copy of the kubeconfig that holds
// nothing else, so no other context can slip in; and the result is checked
// once more on the rest.Config itself, so that whatever client-go would do
// with the accepted input is held to the same rules.
package kubeconfig
