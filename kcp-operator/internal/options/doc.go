// Package options is the one place where the operator's flags, their
// defaults and their validation live. kcp-operator/README.md lists them; a
// test keeps that list complete.
package options
