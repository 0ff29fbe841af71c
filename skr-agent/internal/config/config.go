package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Config is the agent's configuration.
type Config struct {
	// KCPAddr is the host[:port] of the KCP gateway.
	KCPAddr string
	// KCPContract is the first path segment of event URLs, e.g. v2.
	KCPContract string
	// KCPServerName is the name the KCP's certificate is verified against;
	// the host of KCPAddr unless set.
	KCPServerName string
	// CACertFile, TLSCertFile and TLSKeyFile are the PEM files: the CA
	// bundle that the KCP's certificate chains to, and the agent's own
	// certificate (CN = runtime ID), both client and serving certificate.
	CACertFile  string
	TLSCertFile string
	TLSKeyFile  string
	// BindAddress is the IP address both servers listen on; empty for all.
	BindAddress string
	WebhookPort int
	MetricsPort int

	QueueSize      int
	Workers        int
	RequestTimeout time.Duration
	BackoffInitial time.Duration
	BackoffMax     time.Duration
	DrainTimeout   time.Duration
	ShutdownDelay  time.Duration
	MaxReviewBytes int64
	// MaxConcurrentReviews, MaxReviewBytesInFlight and ReviewWait bound
	// the reviews in progress and the memory their bodies hold.
	MaxConcurrentReviews   int
	MaxReviewBytesInFlight int64
	ReviewWait             time.Duration
	// SendResourceVersions adds the pre-write resourceVersion to update events.
	SendResourceVersions bool
	ReloadInterval       time.Duration
	ResyncManager        string
	LogLevel             string
}

// BaseURL is the https URL of the KCP gateway, without a path.
func (c Config) BaseURL() string { return "https://" + c.KCPAddr }

// WebhookAddr and MetricsAddr are the listen addresses.
func (c Config) WebhookAddr() string {
	return net.JoinHostPort(c.BindAddress, strconv.Itoa(c.WebhookPort))
}

// MetricsAddr is the listen address of /metrics, /healthz and /readyz.
func (c Config) MetricsAddr() string {
	return net.JoinHostPort(c.BindAddress, strconv.Itoa(c.MetricsPort))
}

// envFlags maps the public agent's environment variables to flags.
var envFlags = []struct{ env, flag string }{
	{"KCP_ADDR", "kcp-addr"},
	{"KCP_CONTRACT", "kcp-contract"},
	{"CA_CERT", "ca-cert"},
	{"TLS_CERT", "tls-cert"},
	{"TLS_KEY", "tls-key"},
	{"WEBHOOK_PORT", "webhook-port"},
	{"METRICS_PORT", "metrics-port"},
}

func newFlagSet(c *Config, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("skr-agent", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&c.KCPAddr, "kcp-addr", "", "host[:port] of the KCP gateway that receives events (env KCP_ADDR; required)")
	fs.StringVar(&c.KCPContract, "kcp-contract", "", "contract version, the first path segment of event URLs, e.g. v2 (env KCP_CONTRACT; required)")
	fs.StringVar(&c.KCPServerName, "kcp-server-name", "", "name to verify the KCP's certificate against (default: the host of --kcp-addr)")
	fs.StringVar(&c.CACertFile, "ca-cert", "", "PEM file of the CA bundle the KCP's certificate chains to (env CA_CERT; required)")
	fs.StringVar(&c.TLSCertFile, "tls-cert", "", "PEM file of the agent's certificate, CN = runtime ID; serving and client certificate (env TLS_CERT; required)")
	fs.StringVar(&c.TLSKeyFile, "tls-key", "", "PEM file of the agent's private key (env TLS_KEY; required)")
	fs.StringVar(&c.BindAddress, "bind-address", "", "IP address to listen on; empty for all")
	fs.IntVar(&c.WebhookPort, "webhook-port", 8443, "HTTPS port of the webhook (env WEBHOOK_PORT)")
	fs.IntVar(&c.MetricsPort, "metrics-port", 2112, "plain HTTP port of /metrics, /healthz and /readyz (env METRICS_PORT)")
	fs.IntVar(&c.QueueSize, "queue-size", 100000, "most distinct objects waiting to be forwarded; beyond, one resync of the runtime's Kyma stands for the rest")
	fs.IntVar(&c.Workers, "workers", 4, "concurrent deliveries to the KCP")
	fs.DurationVar(&c.RequestTimeout, "request-timeout", 10*time.Second, "timeout of one delivery to the KCP")
	fs.DurationVar(&c.BackoffInitial, "backoff-initial", 250*time.Millisecond, "pause after the first failed delivery; doubles with each further failure")
	fs.DurationVar(&c.BackoffMax, "backoff-max", time.Minute, "longest pause between deliveries while the KCP fails")
	fs.DurationVar(&c.DrainTimeout, "drain-timeout", 10*time.Second, "time to deliver queued events at shutdown")
	fs.DurationVar(&c.ShutdownDelay, "shutdown-delay", 2*time.Second,
		"time between failing /readyz and closing the webhook at shutdown, so that the API server stops calling this replica first")
	fs.Int64Var(&c.MaxReviewBytes, "max-review-bytes", 8<<20, "largest AdmissionReview body accepted")
	fs.IntVar(&c.MaxConcurrentReviews, "max-concurrent-reviews", 64,
		"most admission reviews in progress whose body has begun to arrive; beyond, a review waits up to --review-wait")
	fs.Int64Var(&c.MaxReviewBytesInFlight, "max-review-bytes-in-flight", 8<<20,
		"most bytes of buffer the bodies of all reviews in progress hold, taken as the bytes arrive; at least --max-review-bytes")
	fs.DurationVar(&c.ReviewWait, "review-wait", 500*time.Millisecond,
		"longest a review waits for its slot and body budget, in all; then it is answered 503 and a resync of the runtime's Kyma covers its change")
	fs.BoolVar(&c.SendResourceVersions, "send-resource-versions", true,
		"add an updated object's resourceVersion before the write to its event (field oldResourceVersion), so that the KCP knows when it has read the write; false sends the public runtime-watcher body exactly")
	fs.DurationVar(&c.ReloadInterval, "cert-reload-interval", 2*time.Second, "how often the certificate files are checked for changes")
	fs.StringVar(&c.ResyncManager, "resync-manager", "lifecycle-manager",
		"manager that receives the resync event for the kyma-system/default Kyma at start and after the queue overflowed")
	fs.StringVar(&c.LogLevel, "log-level", "info", "log level: debug, info or error")
	return fs
}

// Load reads the configuration from args (without the program name) and the
// environment, and validates it. With -h it returns flag.ErrHelp after
// printing the usage to out.
func Load(args []string, lookupEnv func(string) (string, bool), out io.Writer) (Config, error) {
	var c Config
	fs := newFlagSet(&c, out)
	for _, ef := range envFlags {
		if v, ok := lookupEnv(ef.env); ok {
			if err := fs.Set(ef.flag, v); err != nil {
				return Config{}, fmt.Errorf("environment variable %s=%q: %w", ef.env, v, err)
			}
		}
	}
	if err := fs.Parse(args); err != nil {
		return Config{}, err // the flag package names the flag already
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if err := c.normalize(); err != nil {
		return Config{}, err
	}
	if err := c.validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// normalize accepts KCP_ADDR with an https:// prefix, as some deployments
// of the public agent set it.
func (c *Config) normalize() error {
	addr := c.KCPAddr
	if strings.Contains(addr, "://") {
		u, err := url.Parse(addr)
		if err != nil {
			return fmt.Errorf("--kcp-addr (KCP_ADDR) %q: %w", addr, err)
		}
		if u.Scheme != "https" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			return fmt.Errorf("--kcp-addr (KCP_ADDR) %q: want host[:port], optionally with https://, and no path", addr)
		}
		addr = u.Host
	}
	c.KCPAddr = addr
	if c.KCPServerName == "" && addr != "" {
		c.KCPServerName = hostOf(addr)
	}
	return nil
}

func hostOf(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return strings.Trim(addr, "[]")
}

func (c *Config) validate() error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(c.KCPAddr != "", "--kcp-addr (KCP_ADDR) is required")
	if c.KCPAddr != "" {
		u, err := url.Parse(c.BaseURL())
		check(err == nil && u.Host == c.KCPAddr && u.Hostname() != "", "--kcp-addr (KCP_ADDR) %q: want host[:port]", c.KCPAddr)
		if err == nil && u.Port() != "" {
			port, perr := strconv.Atoi(u.Port())
			check(perr == nil && validPort(port), "--kcp-addr (KCP_ADDR) %q: the port must be 1-65535", c.KCPAddr)
		}
	}
	check(c.KCPAddr == "" || c.KCPServerName != "",
		"--kcp-addr (KCP_ADDR) %q has no host name to verify the KCP's certificate against: set --kcp-server-name", c.KCPAddr)
	check(c.KCPContract != "" && !strings.ContainsAny(c.KCPContract, "/?# "),
		"--kcp-contract (KCP_CONTRACT) %q: want one path segment such as v2", c.KCPContract)
	check(c.CACertFile != "", "--ca-cert (CA_CERT) is required")
	check(c.TLSCertFile != "", "--tls-cert (TLS_CERT) is required")
	check(c.TLSKeyFile != "", "--tls-key (TLS_KEY) is required")
	check(c.BindAddress == "" || net.ParseIP(c.BindAddress) != nil, "--bind-address %q is not an IP address", c.BindAddress)
	check(validPort(c.WebhookPort), "--webhook-port (WEBHOOK_PORT) %d: want 1-65535", c.WebhookPort)
	check(validPort(c.MetricsPort), "--metrics-port (METRICS_PORT) %d: want 1-65535", c.MetricsPort)
	check(c.WebhookPort != c.MetricsPort, "--webhook-port and --metrics-port must differ: the webhook is never served on the metrics port")
	check(c.QueueSize >= 1, "--queue-size %d: want at least 1", c.QueueSize)
	check(c.Workers >= 1 && c.Workers <= 64, "--workers %d: want 1-64", c.Workers)
	check(c.RequestTimeout > 0, "--request-timeout %s: want more than 0", c.RequestTimeout)
	check(c.BackoffInitial > 0, "--backoff-initial %s: want more than 0", c.BackoffInitial)
	check(c.BackoffMax >= c.BackoffInitial, "--backoff-max %s: want at least --backoff-initial %s", c.BackoffMax, c.BackoffInitial)
	check(c.DrainTimeout >= 0, "--drain-timeout %s: want 0 or more", c.DrainTimeout)
	check(c.ShutdownDelay >= 0, "--shutdown-delay %s: want 0 or more", c.ShutdownDelay)
	check(c.MaxReviewBytes >= 1024, "--max-review-bytes %d: want at least 1024", c.MaxReviewBytes)
	check(c.MaxConcurrentReviews >= 1, "--max-concurrent-reviews %d: want at least 1", c.MaxConcurrentReviews)
	check(c.MaxReviewBytesInFlight >= c.MaxReviewBytes, "--max-review-bytes-in-flight %d: want at least --max-review-bytes %d, so that the largest review fits",
		c.MaxReviewBytesInFlight, c.MaxReviewBytes)
	// The API server waits at most 30 s for a webhook: a longer wait would
	// answer no one.
	check(c.ReviewWait > 0 && c.ReviewWait < 30*time.Second, "--review-wait %s: want more than 0 and less than 30s", c.ReviewWait)
	check(c.ReloadInterval > 0, "--cert-reload-interval %s: want more than 0", c.ReloadInterval)
	check(c.ResyncManager != "" && !strings.ContainsAny(c.ResyncManager, "/?# "),
		"--resync-manager %q: want one path segment", c.ResyncManager)
	check(c.LogLevel == "debug" || c.LogLevel == "info" || c.LogLevel == "error", "--log-level %q: want debug, info or error", c.LogLevel)
	if len(errs) > 0 {
		return fmt.Errorf("invalid configuration: %w", errors.Join(errs...))
	}
	return nil
}

func validPort(p int) bool { return p >= 1 && p <= 65535 }

// FlagNames lists the names of every flag.
func FlagNames() []string {
	var names []string
	newFlagSet(&Config{}, io.Discard).VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}
