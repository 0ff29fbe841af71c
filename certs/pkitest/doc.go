// Package pkitest issues real certificates for the tests of the listener
// and the agent, with the pki package: root and intermediate CAs, client
// and server leaves valid for localhost and 127.0.0.1, TLS material for
// tlsreload, and TLS files replaced the way a Secret volume replaces them.
// Only tests import it.
package pkitest
