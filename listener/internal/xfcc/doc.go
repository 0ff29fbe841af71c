// Package xfcc parses the X-Forwarded-Client-Cert header that Envoy (and so
// Istio) proxies add: a comma-separated list of elements, one per proxy
// hop, each a semicolon-separated list of key=value pairs whose values are
// double-quoted when they contain one of ",;=" (a quote inside is written
// as \"). Keys are case-insensitive. The parser is strict: anything that
// does not follow this grammar is an error, never a best guess, because
// the header decides who a caller is.
package xfcc
