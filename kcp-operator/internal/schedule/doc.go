// Package schedule decides when the operator's controllers reconcile an
// object again: fan-out pacing, requeue intervals and the governor that
// slows the fan-out while the API servers are slow.
//
// Fan-out (AllKymas, Pacer): event handlers that fan one change (a
// template, a release, a Watcher) out to many Kymas, paced so that a
// change does not reconcile thousands of Kymas at the same moment nor
// faster than the API servers can also serve pushed changes. Fanned-out
// work is background work: it queues behind pushed changes and new Kymas.
//
// Requeue: the resync intervals per state that the controllers share, with
// jitter so that objects created together do not resync together.
//
// Governor and Meter: a release re-enqueues every Kyma at --fan-out-rate.
// When that rate is more than the API servers can serve (a KCP shared by
// thousands of runtimes, or a machine that runs every server at once), the
// release's requests queue at the servers, and a pushed change, which the
// operator's queues put first, still waits there behind them: at the KCP
// API server, which every reconcile writes to, and at the runtime's, where
// the pushed change is stored and read. Write latency is the signal: a
// Meter per kind of server counts the operator's writes slower than its
// target, and a Governor turns them into a pace for the Pacers, halving it
// while most writes of any Meter are slow and raising it step by step
// while they are not (additive increase, multiplicative decrease). Pushed
// and other work reconcile as before; only the intake of new background
// work yields.
package schedule
