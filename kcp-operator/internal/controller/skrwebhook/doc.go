// Package skrwebhook is the controller of the push path in each runtime:
// for every Kyma it ensures the agent's client certificate (certs),
// syncs it into the runtime, installs the agent with one webhook per
// Watcher, and reports the agent's readiness in the Kyma's SKRWebhook
// condition. When the Kyma goes, its Cleanup removes the agent and the
// certificates.
package skrwebhook
