// Package promtest runs the Prometheus that tests check the chart's
// dashboard and alert rules with: Debian's prometheus and promtool
// (hack/prometheus.sh installs them), a server on loopback with a generated
// configuration, and a client of its HTTP API.
package promtest
