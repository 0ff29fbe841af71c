// Package harness runs the product as users run it, for the e2e suite and
// `make demo`: a KCP and runtime clusters, the built kcp-operator, skr-agent
// and modulectl binaries as separate processes, mTLS between them, and a
// module registry.
//
// In local mode (the default) the clusters are real control planes
// (kube-apiserver and etcd from `make envtest-assets`) on loopback, the
// registry is go-containerregistry's, and the harness plays the kubelet:
// it marks Deployments available, runs the agent with the certificate the
// operator put into the runtime (rewriting the files when the Secret
// changes, as a Secret volume does), and runs the sample module's operator
// while its Deployment exists. The operator reaches each runtime through a
// TCP proxy, which is how the suite takes a runtime off the network.
//
// In local mode no process of the product runs as an admin: the operator
// uses a token of charts/kcp-operator's ServiceAccount with that chart's
// Roles in the KCP, and a token of charts/kcp-operator-runtime's
// ServiceAccount in each runtime (rbac.go). Every API server keeps an audit
// log, from which RefusedRequests lists each request of the operator that
// was answered 403 (audit.go); the suite fails on any.
//
// For the Istio scenario it also runs istiod (hack/istiod.sh) against the
// KCP, a second operator in gateway mode in its own namespace, and reads
// what istiod configures for an ingress gateway proxy over xDS
// (istiod.go, gatewayop.go, xds.go).
//
// In clusters mode (E2E_KCP_KUBECONFIG and E2E_SKR_KUBECONFIG set, the
// rest in clusters.go) the harness uses one KCP with charts/kcp-operator
// installed and one runtime (hack/realnode/e2e.sh, e2e/kind-up.sh); real
// kubelets run the pods, and stopping the operator scales its Deployment.
package harness
