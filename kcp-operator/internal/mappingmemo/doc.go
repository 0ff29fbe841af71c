// Package mappingmemo remembers the REST mappings a mapper has found for a
// kind at an explicit version. Every client request and every cache lookup
// asks its mapper for one; controller-runtime's mapper answers by walking
// all the API groups it knows, which at 10,000 runtimes was 4% of the
// operator's CPU. A mapping of a kind at a given version does not change
// while the kind is served (a CRD's scope is immutable), and a kind that
// stops being served fails its requests as before, with NotFound instead
// of NoMatch, just as with the wrapped mapper, which keeps what it
// discovered too.
package mappingmemo
