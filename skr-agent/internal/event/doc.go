// Package event defines what the agent forwards: the key of a change (the
// manager that wants it, the kind of the watched object, its namespace and
// name) and the JSON body and URL path of the public runtime-watcher wire
// format that carry it to the KCP listener.
package event
