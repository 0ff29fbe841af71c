package harness

import (
	"io"
	"log"
	"net/http/httptest"
	"strings"

	"github.com/google/go-containerregistry/pkg/registry"
)

// StartRegistry serves go-containerregistry's registry on loopback; the
// operator reaches it over plain HTTP (loopback registries always are).
func StartRegistry() (host string, stop func()) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	return strings.TrimPrefix(srv.URL, "http://"), srv.Close
}
