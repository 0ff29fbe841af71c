// Package agent assembles the agent from its parts (TLS material that
// reloads, the event queue, the forwarder and its KCP client, the webhook
// and the ops server) and runs it until its context ends, then shuts down
// in order: fail readiness, stop the webhook, drain the queue, stop the
// ops server. cmd/skr-agent and the integration tests run it the same way.
package agent
