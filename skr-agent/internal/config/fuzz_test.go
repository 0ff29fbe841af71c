package config_test

import (
	"io"
	"net"
	"net/url"
	"reflect"
	"strconv"
	"testing"

	"github.com/lifecycle-manager/skr-agent/internal/config"
)

// FuzzLoad: the agent's environment comes from its Deployment, which the
// operator renders but runtime admins can edit. Whatever it holds, Load
// must not panic; a configuration it accepts has a KCP address that makes
// an https URL to exactly that host with a port that can be dialled, event
// URLs whose path segments are the contract and the manager, listen
// addresses that split into host and port, and it loads again unchanged
// from its own values.
func FuzzLoad(f *testing.F) {
	f.Add("skr-events.kcp.example.com:443", "v2", "8443", "2112", "", "lifecycle-manager")
	f.Add("https://kcp.example.com/", "v2", "9443", "9090", "127.0.0.1", "klm")
	f.Add("[::1]:8082", "v1", "1", "65535", "::1", "m")
	f.Add("kcp.example.com:99999", "v2", "8443", "2112", "", "lifecycle-manager")
	f.Add("kcp.example.com:", "%zz", "8443", "2112", "", "..")
	f.Add("user@kcp.example.com", "v2", "0", "2112", "host", "a b")
	f.Fuzz(func(t *testing.T, addr, contract, webhookPort, metricsPort, bind, manager string) {
		vars := map[string]string{
			"KCP_ADDR": addr, "KCP_CONTRACT": contract, "WEBHOOK_PORT": webhookPort, "METRICS_PORT": metricsPort,
			"CA_CERT": "/tls/ca.crt", "TLS_CERT": "/tls/tls.crt", "TLS_KEY": "/tls/tls.key",
		}
		args := []string{"--bind-address=" + bind, "--resync-manager=" + manager}
		c, err := config.Load(args, env(vars), io.Discard)
		if err != nil {
			return
		}
		checkKCPAddress(t, c)
		for _, path := range []string{eventPath(c.KCPContract, c.ResyncManager)} {
			u, err := url.Parse(c.BaseURL() + path)
			if err != nil || u.Host != c.KCPAddr {
				t.Fatalf("event URL %q: %v", c.BaseURL()+path, err)
			}
			if u.Path != "/"+c.KCPContract+"/"+c.ResyncManager+"/event" {
				t.Fatalf("event URL %q has the path %q", c.BaseURL()+path, u.Path)
			}
		}
		for _, a := range []string{c.WebhookAddr(), c.MetricsAddr()} {
			if _, _, err := net.SplitHostPort(a); err != nil {
				t.Fatalf("listen address %q: %v", a, err)
			}
		}
		again, err := config.Load([]string{
			"--kcp-addr=" + c.KCPAddr, "--kcp-contract=" + c.KCPContract, "--kcp-server-name=" + c.KCPServerName,
			"--ca-cert=" + c.CACertFile, "--tls-cert=" + c.TLSCertFile, "--tls-key=" + c.TLSKeyFile,
			"--bind-address=" + c.BindAddress, "--webhook-port=" + strconv.Itoa(c.WebhookPort),
			"--metrics-port=" + strconv.Itoa(c.MetricsPort), "--resync-manager=" + c.ResyncManager,
		}, env(nil), io.Discard)
		if err != nil {
			t.Fatalf("the configuration does not load from its own values: %v", err)
		}
		if !reflect.DeepEqual(c, again) {
			t.Fatalf("loaded again from its own values: %+v, was %+v", again, c)
		}
	})
}

// eventPath is the path the agent posts events of manager to, as
// internal/event builds it.
func eventPath(contract, manager string) string {
	return "/" + url.PathEscape(contract) + "/" + url.PathEscape(manager) + "/event"
}

// checkKCPAddress: an accepted address is host[:port] with a port that can
// be dialled, and the name the KCP's certificate is checked against.
func checkKCPAddress(t *testing.T, c config.Config) {
	t.Helper()
	u, err := url.Parse(c.BaseURL())
	if err != nil || u.Scheme != "https" || u.Host != c.KCPAddr || u.Hostname() == "" || u.Path != "" {
		t.Fatalf("KCP address %q makes the base URL %q: %v", c.KCPAddr, c.BaseURL(), err)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			t.Fatalf("KCP address %q has the port %q: nothing can be dialled", c.KCPAddr, p)
		}
	}
	if c.KCPServerName == "" {
		t.Fatalf("KCP address %q leaves no name to verify the KCP's certificate against", c.KCPAddr)
	}
}
