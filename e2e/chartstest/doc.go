// Package chartstest tests the Helm chart charts/kcp-operator: it renders
// the chart with the Helm library for representative values, applies every
// object to a real kube-apiserver with server-side dry-run, checks the RBAC
// it grants with SubjectAccessReviews, keeps the chart's CRDs equal to the
// generated ones in api/config/crd/bases, checks that every flag the chart
// passes exists in the operator and every metric its Grafana dashboard
// charts is defined in the code, and runs helm lint --strict.
//
// The package holds tests only.
package chartstest
