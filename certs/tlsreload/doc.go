// Package tlsreload builds tls.Configs for servers and clients whose
// certificate, key and CA bundle can change while they run: every handshake
// reads the current material, so a rotated certificate or a new CA takes
// effect for new connections within seconds, while open connections go on
// undisturbed. The material comes from files (polled, so that Secret volume
// updates and plain rewrites are both seen) or is set directly from Secret
// data.
//
// It depends on the standard library and logr only: the agent in every
// runtime imports it. controller-runtime's certwatcher was the design's
// choice, but it pulls in all of client-go through its metrics package, and
// it reloads no CA bundle.
package tlsreload
