// Package headroom slows the operator's background fan-out while the KCP
// API server is slow.
//
// A release re-enqueues every Kyma at --fan-out-rate. When that rate is
// more than the API servers can serve (a KCP shared by thousands of
// runtimes, or a machine that runs every server at once), the release's
// requests queue at the servers, and a pushed change, which the operator's
// queues put first, still waits there behind them. The KCP API server is
// the one server every reconcile writes to, so its write latency is the
// signal: a Meter counts the operator's KCP writes slower than a target,
// and a Governor turns that into a pace for the fan-outs, halving it while
// most writes are slow and raising it step by step while they are not
// (additive increase, multiplicative decrease). Pushed and other work
// reconcile as before; only the intake of new background work yields.
package headroom
