// Package removal decides what of a module the operator may delete from a
// runtime, and deletes it. Prune (a new module version no longer renders an
// object), the removal of a module and the purge of a Kyma stuck in deletion
// all go through Rules.Delete, so that one rule holds for all three and user
// data is never deleted by default:
//
//   - A Namespace is deleted only when the operator created it — recorded
//     with its UID in the Manifest's status.created — and only while it still
//     has that UID, and never when it is protected (Rules.Protected, the
//     --protected-namespaces flag, and the runtime's sync namespace). A
//     Namespace the module found in place is shared: applied into, not owned.
//
//   - A CustomResourceDefinition is deleted only when no custom resource of
//     it remains other than the module's own default CR, the one the operator
//     created (customResourcePolicy CreateAndDelete). With the policy Ignore
//     the default CR is the user's, and keeps the CRD like any other.
//     Neither policy deletes a CRD whose CRs users still hold: such a CRD is
//     kept and stays the module's, to be deleted once its CRs are gone.
//
//   - Any other object, a CRD included, is deleted only while it carries the
//     module's labels (Rules.IsModules), and only the object read with them
//     (a UID precondition). A record may list more than the module holds —
//     the Manifest's status.synced lists what an apply is about to place
//     before it places it, and deletion adds what a sweep by the module's
//     labels finds — so the labels, not the record, decide: an object the
//     module found and refused to take over, a user's, or another module's
//     is kept.
package removal
