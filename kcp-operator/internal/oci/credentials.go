package oci

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
)

// Keys of the Secret types that hold registry logins.
const (
	// DockerConfigJSONKey is the data key of kubernetes.io/dockerconfigjson Secrets.
	DockerConfigJSONKey = ".dockerconfigjson"
	// DockerConfigKey is the data key of the legacy kubernetes.io/dockercfg Secrets.
	DockerConfigKey = ".dockercfg"
)

// dockerHubHosts are the names Docker Hub logins are filed under.
var dockerHubHosts = map[string]bool{"docker.io": true, "index.docker.io": true, "registry-1.docker.io": true}

// Credentials are registry logins by registry host. They implement
// authn.Keychain: a registry without a login is accessed anonymously.
// The zero value and nil have no logins.
type Credentials struct {
	byHost map[string]authn.AuthConfig
}

var _ authn.Keychain = (*Credentials)(nil)

// ParseDockerConfig reads logins from a Docker config: the value of a
// kubernetes.io/dockerconfigjson Secret ({"auths": {...}}), the legacy
// .dockercfg form (the map without "auths") or ~/.docker/config.json
// (credential helpers and stores in it are ignored). A login is an "auth"
// (base64 of user:password), or username and password, or an identity or
// registry token. Keys are registry hosts; a scheme and path in a key are
// ignored, so "https://index.docker.io/v1/" is Docker Hub.
func ParseDockerConfig(data []byte) (*Credentials, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("docker config is not a JSON object: %w", err)
	}
	entries := doc
	if auths, ok := doc["auths"]; ok {
		entries = nil
		if err := json.Unmarshal(auths, &entries); err != nil {
			return nil, fmt.Errorf("docker config: auths is not an object: %w", err)
		}
	}
	c := &Credentials{byHost: make(map[string]authn.AuthConfig, len(entries))}
	keyOf := make(map[string]string, len(entries))
	for _, key := range slices.Sorted(maps.Keys(entries)) {
		if key == "credsStore" || key == "credHelpers" || key == "HttpHeaders" {
			continue // config.json fields next to the legacy map form
		}
		cfg, err := parseLogin(entries[key])
		if err != nil {
			return nil, fmt.Errorf("docker config: login for %q: %w", key, err)
		}
		host, err := normalizeHost(key)
		if err != nil {
			return nil, fmt.Errorf("docker config: %w", err)
		}
		// Two spellings of one host with different logins: neither can be
		// chosen without guessing which one the writer meant.
		if prev, ok := c.byHost[host]; ok && prev != cfg {
			return nil, fmt.Errorf("docker config: %q and %q are both the registry %s, with different logins", keyOf[host], key, host)
		}
		c.byHost[host], keyOf[host] = cfg, key
	}
	return c, nil
}

// CredentialsFromSecretData reads the logins of a Secret's data, from its
// .dockerconfigjson key, else its .dockercfg key.
func CredentialsFromSecretData(data map[string][]byte) (*Credentials, error) {
	for _, key := range []string{DockerConfigJSONKey, DockerConfigKey} {
		if raw, ok := data[key]; ok {
			c, err := ParseDockerConfig(raw)
			if err != nil {
				return nil, fmt.Errorf("secret key %s: %w", key, err)
			}
			return c, nil
		}
	}
	return nil, fmt.Errorf("secret has neither a %s nor a %s key", DockerConfigJSONKey, DockerConfigKey)
}

// BasicCredentials is one username and password for one registry host.
func BasicCredentials(registry, username, password string) (*Credentials, error) {
	host, err := normalizeHost(registry)
	if err != nil {
		return nil, err
	}
	if username == "" {
		return nil, errors.New("username is empty")
	}
	return &Credentials{byHost: map[string]authn.AuthConfig{host: {Username: username, Password: password}}}, nil
}

// Registries lists the hosts that have a login, sorted.
func (c *Credentials) Registries() []string {
	if c == nil {
		return nil
	}
	hosts := make([]string, 0, len(c.byHost))
	for h := range c.byHost {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	return hosts
}

// Resolve implements authn.Keychain.
func (c *Credentials) Resolve(r authn.Resource) (authn.Authenticator, error) {
	if c == nil {
		return authn.Anonymous, nil
	}
	host := strings.ToLower(r.RegistryStr())
	if dockerHubHosts[host] {
		host = "index.docker.io"
	}
	cfg, ok := c.byHost[host]
	if !ok {
		return authn.Anonymous, nil
	}
	return authn.FromConfig(cfg), nil
}

func parseLogin(raw json.RawMessage) (authn.AuthConfig, error) {
	var e struct {
		Auth          string `json:"auth"`
		Username      string `json:"username"`
		Password      string `json:"password"`
		IdentityToken string `json:"identitytoken"`
		RegistryToken string `json:"registrytoken"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return authn.AuthConfig{}, fmt.Errorf("not an object with auth or username and password: %w", err)
	}
	cfg := authn.AuthConfig{
		Username: e.Username, Password: e.Password,
		IdentityToken: e.IdentityToken, RegistryToken: e.RegistryToken,
	}
	if e.Auth != "" {
		decoded, err := base64.StdEncoding.DecodeString(e.Auth)
		if err != nil {
			return authn.AuthConfig{}, fmt.Errorf("auth is not base64: %w", err)
		}
		user, pass, ok := strings.Cut(string(decoded), ":")
		if !ok {
			return authn.AuthConfig{}, errors.New("auth is not base64 of username:password")
		}
		cfg.Username, cfg.Password = user, pass
	}
	if cfg.Username == "" && cfg.IdentityToken == "" && cfg.RegistryToken == "" {
		return authn.AuthConfig{}, errors.New("neither auth, username, identitytoken nor registrytoken is set")
	}
	return cfg, nil
}

// normalizeHost turns a Docker config key into the host[:port] that
// go-containerregistry resolves, lower-cased.
func normalizeHost(key string) (string, error) {
	host := key
	if i := strings.Index(host, "://"); i >= 0 {
		host = host[i+3:]
	}
	host, _, _ = strings.Cut(host, "/")
	host = strings.ToLower(host)
	if host == "" {
		return "", fmt.Errorf("registry %q has no host", key)
	}
	if dockerHubHosts[host] {
		host = "index.docker.io"
	}
	return host, nil
}

// authID identifies the login an authenticator uses, without revealing
// it, so that concurrent fetches with different logins are not merged.
func authID(auth authn.Authenticator) (string, error) {
	if auth == authn.Anonymous {
		return "anonymous", nil
	}
	cfg, err := auth.Authorization()
	if err != nil {
		return "", err
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8]), nil
}
