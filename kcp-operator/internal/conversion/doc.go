// Package conversion serves the v1beta1 API of the original documentation
// beside v1beta2: the CRD conversion webhook of the operator.
//
// The pieces, and who runs them:
//   - Configure (kcp-operator --upgrade-crds, the chart's hook) serves
//     v1beta1 on every CRD that has it and points the CRD's conversion at
//     Target: the operator's Service, or a URL for an operator run outside
//     the cluster. Without it the CRDs leave v1beta1 unserved, so that a
//     v1beta1 request fails instead of being pruned to the v1beta2 schema.
//   - Keeper (the leader) keeps the webhook's serving certificate in a
//     Secret, issued by the push path's PKI as the listener's is, and keeps
//     each CRD's caBundle equal to the PKI's trust bundle. The caBundle must
//     follow the bundle through CA rotations (the new CA joins it long
//     before the certificate moves to it), which a hook that runs only on
//     install and upgrade could not do.
//   - Loader (every replica) serves the certificate from that Secret, and
//     Server answers the API server's ConversionReviews with
//     controller-runtime's handler: v1beta2 is the hub, api/v1beta1 holds
//     the conversions. A conversion to the hub checks the fields that the
//     v1beta2-spec annotation set against the hub CRD's schema (hubcheck.go).
package conversion
