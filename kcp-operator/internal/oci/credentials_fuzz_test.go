package oci

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
)

// FuzzParseDockerConfig: a pull Secret's content is written by whoever may
// write Secrets in the KCP namespace (or a template's credential label
// names one). Whatever it holds, parsing must not panic and must be
// deterministic; what it accepts is filed under lower-case hosts without
// scheme or path, holds a usable login per host, answers Resolve for that
// host with that login, and survives being written back as a
// dockerconfigjson and parsed again.
func FuzzParseDockerConfig(f *testing.F) {
	f.Add([]byte(`{"auths":{"registry.example.com":{"auth":"dXNlcjpwYXNz"}}}`))
	f.Add([]byte(`{"https://index.docker.io/v1/":{"username":"u","password":"p"},"credsStore":"desktop"}`))
	f.Add([]byte(`{"auths":{"ghcr.io":{"identitytoken":"t"},"Registry.Example.com:5000/path":{"registrytoken":"r"}}}`))
	f.Add([]byte(`{"auths":{"Docker.io":{"auth":"YTpi"},"https://index.docker.io/v1/":{"auth":"Yzpk"}}}`))
	f.Add([]byte(`{"auths":{"a.io":{"auth":"!!"}}}`))
	f.Add([]byte(`{"auths":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseDockerConfig(data)
		if err != nil {
			return
		}
		again, err := ParseDockerConfig(data)
		if err != nil || !maps.Equal(c.byHost, again.byHost) {
			t.Fatalf("parsing %q twice gave different logins: %v / %v (%v)", data, c.byHost, again.byHost, err)
		}
		for host, cfg := range c.byHost {
			if host == "" || host != strings.ToLower(host) || strings.ContainsAny(host, "/") || strings.Contains(host, "://") {
				t.Fatalf("login filed under %q, not a lower-case host", host)
			}
			if cfg.Username == "" && cfg.IdentityToken == "" && cfg.RegistryToken == "" {
				t.Fatalf("login for %q has neither a username nor a token", host)
			}
			checkResolve(t, c, host, cfg)
		}
		written, err := json.Marshal(map[string]any{"auths": asWritten(c.byHost)})
		if err != nil {
			t.Fatalf("logins do not marshal: %v", err)
		}
		back, err := ParseDockerConfig(written)
		if err != nil {
			t.Fatalf("logins written back as %s do not parse: %v", written, err)
		}
		if !maps.Equal(c.byHost, back.byHost) {
			t.Fatalf("logins changed in the round trip: %v / %v", c.byHost, back.byHost)
		}
	})
}

// asWritten is the dockerconfigjson form of logins: a username without
// ':' goes into "auth" (base64 keeps every byte), others as username and
// password, as Docker writes them.
func asWritten(byHost map[string]authn.AuthConfig) map[string]map[string]string {
	out := map[string]map[string]string{}
	for host, cfg := range byHost {
		e := map[string]string{"identitytoken": cfg.IdentityToken, "registrytoken": cfg.RegistryToken}
		if strings.Contains(cfg.Username, ":") {
			e["username"], e["password"] = cfg.Username, cfg.Password
		} else if cfg.Username != "" || cfg.Password != "" {
			e["auth"] = base64.StdEncoding.EncodeToString([]byte(cfg.Username + ":" + cfg.Password))
		}
		out[host] = e
	}
	return out
}

// checkResolve asks for the login of host as go-containerregistry does,
// when host is a registry name it accepts.
func checkResolve(t *testing.T, c *Credentials, host string, want authn.AuthConfig) {
	t.Helper()
	reg, err := name.NewRegistry(host, name.StrictValidation)
	if err != nil {
		return // a key no repository reference can name: never used
	}
	auth, err := c.Resolve(reg)
	if err != nil {
		t.Fatalf("resolving %q: %v", host, err)
	}
	got, err := auth.Authorization()
	if err != nil {
		t.Fatalf("authorization of %q: %v", host, err)
	}
	if got.Username != want.Username || got.Password != want.Password ||
		got.IdentityToken != want.IdentityToken || got.RegistryToken != want.RegistryToken {
		t.Fatalf("%q resolves to %+v, filed %+v", host, got, want)
	}
}
