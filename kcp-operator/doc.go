// Package kcpoperator is the module of the KCP operator binary: the Kyma,
// Manifest, Purge and Watcher controllers. The binary will live in
// cmd/kcp-operator, its behaviour in internal/.
package kcpoperator
