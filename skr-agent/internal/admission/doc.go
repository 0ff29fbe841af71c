// Package admission is the validating webhook: it reads an
// admission.k8s.io/v1 AdmissionReview, decides whether the request is a
// change the KCP wants to hear about, queues it, and allows the request at
// once. It never blocks a write and never waits for the KCP.
//
// The review is decoded into small local types that are wire-compatible with
// admission.k8s.io/v1 instead of k8s.io/api: they read only the fields the
// decision needs, and the agent stays free of apimachinery (about 2 MiB less
// resident memory and 3 MB less binary, measured; see the module README).
package admission
