// Package kcptest runs a stand-in for the KCP listener in tests and
// benchmarks: a real HTTPS server that requires a client certificate from
// the given CA bundle (tlsreload.ServerConfig), records the events it
// receives with the client's CN, answers as told (status, Retry-After,
// delay), and can go down and come back on the same address.
package kcptest
