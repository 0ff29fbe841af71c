// Package logging builds the agent's logr logger on zap: JSON lines with
// ISO 8601 times, at the level named by the --log-level flag.
package logging
