// Package config reads the agent's configuration from flags and from the
// environment variables of the public runtime-watcher agent (KCP_ADDR,
// KCP_CONTRACT, CA_CERT, TLS_CERT, TLS_KEY, WEBHOOK_PORT, METRICS_PORT),
// and validates all of it at once so that a bad deployment fails at start
// with every problem named. Every flag and its default is defined here, in
// one place; a flag given on the command line wins over its variable.
package config
