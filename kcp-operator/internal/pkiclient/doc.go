// Package pkiclient is the KCP client of the push path's PKI: it writes to
// the API server and reads Secrets from informer caches where they hold
// them — the agents' certificates from the manager's cache of Kyma
// Secrets, the trust bundle, the CA and the endpoint certificate from a
// small cache of their own — and from the API server only what no cache
// holds; it lists Kymas from the manager's cache. At 1,000 Kymas the PKI's direct reads were 8 GETs per Kyma, a
// fifth of the operator's KCP requests.
//
// A cached read may trail a write by moments; the PKI writes its Secrets at
// the resourceVersion it read, so a stale copy costs a conflict and a
// retry, never a lost update.
package pkiclient
