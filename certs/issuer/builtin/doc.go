// Package builtin is the backend that needs nothing but the KCP: a
// self-signed root CA kept in a KCP Secret (ECDSA P-256 by default, RSA
// 2048/4096 selectable) signs agent and endpoint certificates in-process.
//
// The CA Secret holds the newest CA in tls.crt/tls.key and the one before it
// in previous.crt/previous.key, which keeps signing while a rotation waits
// for the new CA to reach every listener. It is created on first use and
// never overwritten when it does not parse: losing a CA key would lock out
// every runtime.
package builtin
