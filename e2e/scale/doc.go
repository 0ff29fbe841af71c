// Package scale is the scale harness behind `make scale`: one KCP and a few
// runtime API servers on this machine, N Kymas with five modules each, the
// operator as a separate process with production flags, and a report of
// what it cost. The work is split by concern:
//
//   - fleet: the clusters, modules, Kymas, the kubelet's role, the agents of
//     the sampled runtimes, and the phases of a run;
//   - stats: percentiles and rates;
//   - proc: CPU time and memory of a process from /proc;
//   - metrics: reading the operator's Prometheus metrics;
//   - report: the JSON report, its table and the targets;
//   - plot: PNG line and scatter plots written with the standard library.
//
// cmd/scale wires them behind flags. docs/performance.md explains the method.
package scale
