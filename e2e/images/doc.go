// Package images builds the container images of the kcp-operator and the
// skr-agent without a container daemon: each is a static binary compiled
// from this repository on a minimal base written here (a passwd entry for
// the non-root user, the build machine's CA bundle, /tmp), with OCI labels
// naming the source and the commit. It is the only definition of the
// images; `make images` and e2e/kind-up.sh use it through cmd/images.
package images
