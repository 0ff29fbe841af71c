// Package manifest is the Manifest controller: it installs one module into
// one runtime and keeps it there. It renders the module's layers (through a
// Source), records them in status.synced before it applies what is new
// (record.go), applies the objects by server-side apply in dependency order,
// prunes what is no longer rendered, creates the module's default CR, and
// reports readiness in the Manifest's state and conditions (Resources,
// ModuleCR, Installation): the default CR's state — its status.state, or
// the values spec.customStateCheck maps (statecheck.go) — and the
// workloads' — the manager's rollout when spec.manager names one
// (manager.go), else all the module's Deployments and StatefulSets. On
// deletion it removes the default CR, waits for the objects of the
// module's associated kinds (associated.go: it deletes only those the
// module applied), refuses while users' CRs of the module's kinds remain,
// and then removes the module's objects — those recorded, rendered or
// found by its labels (inventory.go) — CRDs and namespaces last. A
// Manifest with spec.remote: false, which the CRD refuses, is not
// installed anywhere.
package manifest
