// Package conditionboard is a board in memory of the conditions that other
// controllers report on a Kyma (ModuleCatalog, SKRWebhook), which carries
// them to the Kyma controller; that writes them with the Kyma's status in
// its one status write. Each reporting controller writing its own
// condition cost every new Kyma two status writes of its own, and the Kyma
// controller a reconcile for each.
//
// The Board lives in memory: after a restart the reporting controllers
// reconcile every Kyma and report again, and until they have, the
// conditions in the Kyma's status stand.
package conditionboard
