// Package rotationtrigger starts a CA rotation of certs/rotation when
// someone asks for one: a new value of the rotate-ca annotation on the
// trust bundle Secret, e.g.
//
//	kubectl annotate secret lifecycle-manager-ca-bundle -n kcp-system \
//	    operator.kyma-project.io/rotate-ca="$(date -u +%FT%TZ)" --overwrite
//
// The rotation itself (certs/rotation) adds the new CA to the bundle first
// and so never locks a runtime out; the old CA stays trusted until it
// expires.
//
// After a CA key leaked, ask for an emergency rotation instead, with a new
// value of the rotate-ca-emergency annotation:
//
//	kubectl annotate secret lifecycle-manager-ca-bundle -n kcp-system \
//	    operator.kyma-project.io/rotate-ca-emergency="$(date -u +%FT%TZ)" --overwrite
//
// It issues a new CA and new agent certificates, and drops every older CA
// from the bundle as soon as every agent has a certificate of the new one,
// at the latest an hour after the request. Events on the bundle Secret
// tell how far it is.
//
// The rotation records the request's value in the bundle Secret before it
// makes the new CA, and the trigger records it as handled after: a request
// seen again in between (the operator restarted) is recognised and not
// carried out a second time.
package rotationtrigger
