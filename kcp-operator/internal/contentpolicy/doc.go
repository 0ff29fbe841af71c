// Package contentpolicy refuses module content that reaches beyond the
// module: objects that a published module may render but that would give it
// (or whoever can publish it) the runtime, such as a binding to
// cluster-admin or an admission webhook that sees other modules' and users'
// objects. The Manifest controller checks every rendered module before it
// applies anything; a module with a denied object is not applied at all.
//
// # Rules
//
// A Policy is a list of rules, each written [GROUP/]KIND[:CONDITION]:
//
//   - KIND alone matches the kind in any API group; GROUP/KIND only in that
//     group, with "core" for the core group (core/Secret).
//   - CONDITION says which objects of the kind are denied:
//     always (the default): every one;
//     cluster-admin: a binding whose roleRef is the ClusterRole cluster-admin;
//     foreign: a webhook configuration that is not the module's — its name
//     is neither the module's name nor starts with "<module>-" or
//     "<module>.", or one of its webhooks calls a URL instead of a Service.
//
// Names decide what is the module's webhook, not labels: the operator puts
// the module-name label on every object it renders, so a label would say
// nothing about what the module meant. A webhook that calls a URL could
// send every AdmissionReview it gets (Secrets included) anywhere.
//
// Defaults returns the operator's default rules: bindings of cluster-admin,
// cluster-wide or in a namespace, and foreign webhook configurations.
package contentpolicy
