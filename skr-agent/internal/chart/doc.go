// Package chart holds the tests of the agent's Helm chart in
// charts/skr-agent: they render it with the Helm library for representative
// values, check what matters in the objects, apply them with server-side
// dry-run to a real kube-apiserver, and let that API server call a running
// agent through the rendered webhook configuration.
package chart
