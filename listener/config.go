package listener

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lifecycle-manager/certs/denylist"
	"github.com/lifecycle-manager/certs/tlsreload"
)

// Mode says where a caller's identity comes from.
type Mode string

const (
	// ModeDirect means that the listener terminates TLS and requires a client
	// certificate that chains to the CA bundle.
	ModeDirect Mode = "direct"
	// ModeGateway means that a proxy (the Istio gateway) terminated mTLS
	// and passes the client certificate in X-Forwarded-Client-Cert; the header is
	// believed only from TrustedProxies and its certificate is verified
	// against the CA bundle.
	ModeGateway Mode = "gateway"
)

// Defaults of Config; the one place where they are written down.
const (
	DefaultAddr              = ":8082"
	DefaultMaxBodyBytes      = 16 << 10
	DefaultQueueCapacity     = 8192
	DefaultRetryAfter        = 2 * time.Second
	DefaultShutdownTimeout   = 20 * time.Second
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 30 * time.Second
	DefaultIdleTimeout       = 5 * time.Minute
	DefaultMaxHeaderBytes    = 64 << 10
	// A module install makes hundreds of watched writes within a second,
	// so the defaults never limit a healthy runtime; they stop one that
	// writes in a loop from taking the queue that all runtimes share.
	DefaultRuntimeEventRate  = 100.0
	DefaultRuntimeEventBurst = 1000
)

// Config configures a Server. Zero values take the defaults above.
type Config struct {
	// Addr is the address Start listens on.
	Addr string
	// Mode is ModeDirect (the default) or ModeGateway.
	Mode Mode
	// Managers are the path segments events may be sent to; each gets its
	// own queue and consumer. At least one.
	Managers []string

	// Files are certificate files to load and keep reloading while the
	// server runs: CertFile and KeyFile for the serving certificate, CAFile
	// for the bundle of CAs that client certificates must chain to.
	Files tlsreload.Files
	// ReloadInterval is how often Files are polled; tlsreload.DefaultInterval when zero.
	ReloadInterval time.Duration
	// KeyPair is the serving certificate when the embedder owns it (and
	// reloads it); instead of Files.CertFile and Files.KeyFile.
	KeyPair *tlsreload.KeyPair
	// ClientCAs is the CA bundle when the embedder owns it; instead of Files.CAFile.
	ClientCAs *tlsreload.Bundle
	// DeniedCertificates, when set, refuses certificates that chain to the
	// bundle but are on the list (a leaked runtime certificate, by serial
	// number): 401 with reason denied_certificate, in both modes, also on
	// connections opened before. The embedder owns and updates it.
	DeniedCertificates *denylist.List

	// TrustedProxies are the networks whose X-Forwarded-Client-Cert header is
	// believed in ModeGateway: the addresses the gateway (or the mesh
	// sidecar in front of the listener) connects from. Required there.
	TrustedProxies []netip.Prefix
	// XFCCElement picks the X-Forwarded-Client-Cert element that holds the
	// caller's certificate, counted from the end: 1 (the default) is the
	// element the proxy in front of the listener appended. Elements before
	// it may come from the client and are never used.
	XFCCElement int

	// AcceptRuntime, when set, is asked about every verified runtime ID
	// before its event is accepted. Return nil to accept, an error made
	// with Reject to refuse the runtime (403), any other error when the
	// answer is not known yet, e.g. while a cache syncs (503 with
	// Retry-After, so that the agent retries). It runs on the request's
	// goroutine and should answer from memory.
	AcceptRuntime func(ctx context.Context, runtimeID string) error

	// MaxBodyBytes limits the body of an event.
	MaxBodyBytes int64
	// QueueCapacity is the number of distinct events that may wait for a
	// manager's consumer; further ones are answered 429.
	QueueCapacity int
	// RetryAfter is sent with 429 (full queue) and 503 answers, rounded up
	// to seconds.
	RetryAfter time.Duration
	// RuntimeEventRate is the number of events per second one runtime may
	// send on average, over all managers; RuntimeEventBurst how many it may
	// send at once. Events beyond are answered 429 with a Retry-After of
	// when the runtime's next event will pass, so that one flooding runtime
	// cannot fill the queues all runtimes share. A negative rate turns the
	// limit off.
	RuntimeEventRate  float64
	RuntimeEventBurst int
	// DrainDelay is how long a stopping server keeps its port open,
	// answering 503, before it closes the port and waits for in-flight
	// requests: time for load balancers to take it out. Zero by default.
	DrainDelay time.Duration
	// ShutdownTimeout bounds the wait for in-flight requests when stopping.
	ShutdownTimeout time.Duration
	// ReadHeaderTimeout, ReadTimeout, WriteTimeout and IdleTimeout are
	// those of http.Server. WriteTimeout ends a connection whose client does
	// not read its answer, so it cannot hold a goroutine and buffers forever.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	// VerificationCacheSize bounds the cache of verified certificates
	// (identity.DefaultCacheSize when zero).
	VerificationCacheSize int

	// Registerer receives the metrics. When nil, metrics are kept on a
	// private registry nobody scrapes.
	Registerer prometheus.Registerer
	// Log receives the server's logs; rejected callers are logged at V(1).
	Log logr.Logger
	// Now is the clock; time.Now when nil. Tests set it.
	Now func() time.Time
}

func (c *Config) applyDefaults() {
	setDefault(&c.Addr, DefaultAddr)
	setDefault(&c.Mode, ModeDirect)
	setDefault(&c.MaxBodyBytes, DefaultMaxBodyBytes)
	setDefault(&c.QueueCapacity, DefaultQueueCapacity)
	setDefault(&c.RetryAfter, DefaultRetryAfter)
	setDefault(&c.RuntimeEventRate, DefaultRuntimeEventRate)
	setDefault(&c.RuntimeEventBurst, DefaultRuntimeEventBurst)
	setDefault(&c.ShutdownTimeout, DefaultShutdownTimeout)
	setDefault(&c.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	setDefault(&c.ReadTimeout, DefaultReadTimeout)
	setDefault(&c.WriteTimeout, DefaultWriteTimeout)
	setDefault(&c.IdleTimeout, DefaultIdleTimeout)
	setDefault(&c.XFCCElement, 1)
	if c.Registerer == nil {
		c.Registerer = prometheus.NewRegistry()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

func (c *Config) validate() error {
	var errs []error
	if c.Mode != ModeDirect && c.Mode != ModeGateway {
		errs = append(errs, fmt.Errorf("mode %q: want %q or %q", c.Mode, ModeDirect, ModeGateway))
	}
	if len(c.Managers) == 0 {
		errs = append(errs, errors.New("no managers: register at least one"))
	}
	seen := map[string]bool{}
	for _, m := range c.Managers {
		switch {
		case m == "" || strings.ContainsAny(m, "/?#%") || strings.TrimSpace(m) != m:
			errs = append(errs, fmt.Errorf("manager %q is not a path segment", m))
		case seen[m]:
			errs = append(errs, fmt.Errorf("manager %q registered twice", m))
		}
		seen[m] = true
	}
	if c.KeyPair != nil && c.Files.CertFile != "" {
		errs = append(errs, errors.New("both KeyPair and Files.CertFile are set: choose one"))
	}
	if c.ClientCAs != nil && c.Files.CAFile != "" {
		errs = append(errs, errors.New("both ClientCAs and Files.CAFile are set: choose one"))
	}
	if c.ClientCAs == nil && c.Files.CAFile == "" {
		errs = append(errs, errors.New("no CA bundle: set ClientCAs or Files.CAFile"))
	}
	if c.Mode == ModeDirect && c.KeyPair == nil && c.Files.CertFile == "" {
		errs = append(errs, errors.New("direct mode needs a serving certificate: set KeyPair or Files.CertFile"))
	}
	if c.Mode == ModeGateway && len(c.TrustedProxies) == 0 {
		errs = append(errs, errors.New("gateway mode needs TrustedProxies"))
	}
	if c.MaxBodyBytes < 0 || c.QueueCapacity < 0 || c.XFCCElement < 0 {
		errs = append(errs, errors.New("MaxBodyBytes, QueueCapacity and XFCCElement must not be negative"))
	}
	return errors.Join(append(errs, c.validateRuntimeLimit())...)
}

func (c *Config) validateRuntimeLimit() error {
	switch r := c.RuntimeEventRate; {
	case math.IsNaN(r) || math.IsInf(r, 0):
		return fmt.Errorf("RuntimeEventRate %v: want events per second (negative: no limit)", r)
	case r > 0 && c.RuntimeEventBurst < 1:
		return fmt.Errorf("RuntimeEventBurst %d: a runtime limited to %v events/s needs a burst of at least 1", c.RuntimeEventBurst, r)
	}
	return nil
}
