// Tools for hack/realnode (a pause binary and an image writer). Not part of
// go.work: built with GOWORK=off like hack/envtest.
module github.com/lifecycle-manager/hack/realnode

go 1.26.0

require github.com/google/go-containerregistry v0.22.1

require (
	github.com/klauspost/compress v1.19.2 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
)
