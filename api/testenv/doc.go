// Package testenv starts real kube-apiservers (with etcd) for tests, with the
// CRDs of this API installed. It is the one place where tests of every module
// get an API server from, so that the binaries are found the same way
// everywhere: KUBEBUILDER_ASSETS when set, else the cache that
// `make envtest-assets` fills.
package testenv
