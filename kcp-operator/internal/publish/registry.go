package publish

import (
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/lifecycle-manager/kcp-operator/internal/oci"
)

// Access says how to reach the registry and where to report progress.
type Access struct {
	// Username and Password log in to the registry; without a Username
	// the Docker config file (~/.docker/config.json, $DOCKER_CONFIG) and
	// its credential helpers are used, and registries without a login
	// there are accessed anonymously.
	Username, Password string
	// Insecure reaches the registry over plain HTTP.
	Insecure bool
	// Timeout bounds each registry call (default oci.DefaultTimeout).
	Timeout time.Duration
	// UserAgent of the requests (default "modulectl").
	UserAgent string
	// Progress receives one line per step (layer pushed or fetched, with
	// size and digest) and warnings; nil is silent.
	Progress io.Writer
}

// keychain returns the logins for host.
func (a Access) keychain(host string) (authn.Keychain, error) {
	if a.Username == "" {
		return authn.DefaultKeychain, nil
	}
	keys, err := oci.BasicCredentials(host, a.Username, a.Password)
	if err != nil {
		return nil, usageError("registry login: %w", err)
	}
	return keys, nil
}

func (a Access) ociOptions(host string, insecure bool) oci.Options {
	opts := oci.Options{Timeout: a.Timeout, UserAgent: a.UserAgent}
	if opts.UserAgent == "" {
		opts.UserAgent = "modulectl"
	}
	if insecure || a.Insecure || isLoopback(host) {
		opts.InsecureRegistries = []string{host}
	}
	return opts
}

// isLoopback reports whether host[:port] is this machine. modulectl
// reaches such a registry over plain HTTP without --insecure, as a
// developer's local registry usually is: the person running modulectl
// named it. The operator has no such exception (oci.Options).
func isLoopback(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (a Access) printf(format string, args ...any) {
	if a.Progress != nil {
		_, _ = fmt.Fprintf(a.Progress, format+"\n", args...) // progress is best effort
	}
}

func (a Access) warn(warnings ...string) {
	for _, w := range warnings {
		a.printf("warning    %s", w)
	}
}

// size formats a byte count for people: 512 B, 12.5 KiB, 3.1 MiB.
func size(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
