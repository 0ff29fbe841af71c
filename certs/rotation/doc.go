// Package rotation runs the CA rotation of the push path, the same for both
// backends. Its Rotator is a reconcile-style loop (Reconcile, or Start as a
// controller-runtime manager.Runnable under leader election) that:
//
//  1. puts the backend's current CA into the trust bundle, recording when it
//     joined (phase CAAdded), and starts a new CA when the newest nears its
//     end (built-in) or asks cert-manager for one;
//  2. after the propagation delay, re-issues every agent certificate from the
//     new CA (phase ReissuingClients) by calling the issuer for every agent;
//  3. after the grace period, switches the endpoint's server certificate to
//     the new CA (phase Stable);
//  4. drops expired CAs from the bundle.
//
// Every agent Secret also gets the new bundle in step 1, so agents trust the
// new CA before the endpoint presents a certificate from it.
package rotation
