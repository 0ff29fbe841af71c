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
//     "<module>.", or one of its webhooks calls a URL instead of a Service;
//     wildcard: a ClusterRole or Role that grants every verb ("*") in every
//     API group, or every verb on every resource of a group that is not
//     the module's own; a ClusterRole with an aggregationRule (it gets the
//     rules of whatever ClusterRoles its selectors match, cluster-admin
//     included); a binding whose roleRef is cluster-admin or such a role
//     of the module;
//     broad: a webhook configuration one of whose rules matches every
//     resource ("*" or "*/*") of a group that is not the module's own, or
//     Secrets (in the core group or "*"), whatever its selectors.
//
// A module's own groups are those of the CRDs it renders, except
// Kubernetes' own (core, *.k8s.io, *.kubernetes.io), which a CRD cannot
// make a module's. Modules listed by WithPrivileged (--module-privileged)
// are exempt from wildcard and broad, and from nothing else: a fleet trusts
// them with cluster-wide power, granted by rules the module renders, where
// a binding to cluster-admin would grant whatever that role is in the
// runtime.
//
// Names decide what is the module's webhook, not labels: the operator puts
// the module-name label on every object it renders, so a label would say
// nothing about what the module meant. A webhook that calls a URL could
// send every AdmissionReview it gets (Secrets included) anywhere.
//
// Defaults returns the operator's default rules: bindings of cluster-admin,
// cluster-wide or in a namespace; foreign and broad webhook configurations;
// wildcard ClusterRoles and the ClusterRoleBindings of wildcard roles.
//
// # Default CR
//
// A module's default CR is created by the operator, with its credentials:
// CheckShipped refuses one whose kind no CRD of the module defines, and
// CheckDefaultCR judges it by the rules as a rendered object.
package contentpolicy
