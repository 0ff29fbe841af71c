//go:build tools

// Package tools pins istiod so that `go build istio.io/istio/pilot/cmd/pilot-discovery`
// resolves against this module's go.mod and go.sum.
package tools

import _ "istio.io/istio/pilot/cmd/pilot-discovery"
