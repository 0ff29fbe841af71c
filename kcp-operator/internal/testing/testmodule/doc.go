// Package testmodule gives the operator's integration tests what they share
// and what no process does on bare API servers: a real OCI registry (with
// switches for an outage and for corrupting chosen blobs), test modules
// published to it with their ModuleTemplate, and the kubelet's and a module
// operator's part in a runtime (Deployments become available, default CRs
// report a state). Only tests import it.
package testmodule
