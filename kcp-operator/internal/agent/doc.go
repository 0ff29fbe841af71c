// Package agent installs the skr-agent into a runtime: it renders the
// agent's Helm chart (charts/skr-agent, embedded; `make generate` keeps the
// copy in chart/ current) with the values of one runtime — image, KCP
// address, one webhook per Watcher plus the built-in drift watch on module
// resources, the runtime's certificate Secret and the KCP CA bundle — and
// applies it by server-side apply. It reports whether the agent's
// Deployment is available and removes the agent when the Kyma goes.
package agent
