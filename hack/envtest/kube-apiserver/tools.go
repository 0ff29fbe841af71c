//go:build tools

// Package tools pins kube-apiserver so that `go build k8s.io/kubernetes/cmd/kube-apiserver`
// resolves against this module's go.mod and go.sum.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
