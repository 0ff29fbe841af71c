// Package intake paces how fast the Kyma controller takes over new Kymas:
// no faster than the Manifest controller takes up their Manifests.
//
// Taking a Kyma over is cheap next to installing its modules, so without a
// gate a fleet of new Kymas is taken over within moments and their
// Manifests queue up by the thousand. Every Kyma then waits minutes between
// its takeover and its modules' first apply, shows Processing for all that
// time, and its first status cannot wait in memory for its modules (the
// hold ends after --requeue-busy-max). With the gate, new Kymas wait their
// turn untouched while the Manifests already created wait for the Manifest
// controller, and each Kyma taken over is installed soon after.
package intake
