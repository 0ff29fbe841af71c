// Package manifest is the Manifest controller: it installs one module into
// one runtime and keeps it there. It renders the module's layers (through a
// Source), applies the objects by server-side apply in dependency order,
// prunes what is no longer rendered, creates the module's default CR, and
// reports readiness — the default CR's status.state, else the module's
// Deployments and StatefulSets — in the Manifest's state and conditions
// (Resources, ModuleCR, Installation). On deletion it removes the default
// CR, refuses while users' CRs of the module's kinds remain, and then
// removes the module's objects, CRDs and namespaces last.
package manifest
