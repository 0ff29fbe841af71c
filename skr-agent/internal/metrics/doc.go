// Package metrics defines the agent's Prometheus metrics and registers them
// on the registerer it is given (never the global one). The names start with
// skr_agent_; the README of the module lists them.
package metrics
