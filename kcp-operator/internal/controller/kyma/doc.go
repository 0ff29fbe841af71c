// Package kyma is the Kyma controller: it connects a KCP Kyma with its
// runtime (CRDs, namespace, the runtime Kyma "default" and the two-way sync
// of its modules and channel), resolves every module to a ModuleTemplate,
// keeps one Manifest per module, and reports the result in the Kyma's
// status, in the runtime Kyma's status, in Events and in metrics. The module
// catalog of a runtime and the agent install are other controllers' work;
// they report through their own conditions on the same Kyma.
package kyma
