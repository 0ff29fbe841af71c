// Package trust keeps the trust bundle of the push path: the CA certificates
// that listeners, gateways and agents accept, stored in one KCP Secret
// (ca.crt) whose ca-added-at annotation records when its newest CA joined.
//
// From the bundle and the clock it derives the rotation phase and which CA
// each kind of certificate should come from: a new CA is first only trusted
// (CAAdded), after the propagation delay it signs client certificates
// (ReissuingClients), and after the grace period the endpoint's server
// certificate too (Stable). Expired CAs leave the bundle. Being derived from
// the stored bundle, the phase survives restarts and leader changes.
package trust
