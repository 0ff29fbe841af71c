// Package fleet runs a scale experiment: a KCP and a few runtime API
// servers (real kube-apiserver and etcd), modules published with modulectl
// to a real registry, N Kymas whose runtimes share the runtime API servers
// through the sync-namespace annotation, and kcp-operator as a separate
// process with production flags. It plays the kubelet (Deployments become
// available in bulk through one watch per runtime API server), runs real
// skr-agent processes for a sample of runtimes, answers the other runtimes'
// webhook calls with a sink, and measures the phases of a run into a
// report.Report. docs/performance.md describes the method.
package fleet
