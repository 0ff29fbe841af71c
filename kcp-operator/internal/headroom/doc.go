// Package headroom slows the operator's background fan-out while the API
// servers it writes to are slow.
//
// A release re-enqueues every Kyma at --fan-out-rate. When that rate is
// more than the API servers can serve (a KCP shared by thousands of
// runtimes, or a machine that runs every server at once), the release's
// requests queue at the servers, and a pushed change, which the operator's
// queues put first, still waits there behind them: at the KCP API server,
// which every reconcile writes to, and at the runtime's, where the pushed
// change is stored and read. Write latency is the signal: a Meter per kind
// of server counts the operator's writes slower than its target, and a
// Governor turns them into a pace for the fan-outs, halving it while most
// writes of any Meter are slow and raising it step by step while they are
// not (additive increase, multiplicative decrease). Pushed and other work
// reconcile as before; only the intake of new background work yields.
package headroom
