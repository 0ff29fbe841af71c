package oci_test

import (
	"encoding/base64"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/kcp-operator/internal/oci"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func resolve(t *testing.T, c *oci.Credentials, repository string) authn.AuthConfig {
	t.Helper()
	repo, err := name.NewRepository(repository)
	require.NoError(t, err)
	auth, err := c.Resolve(repo)
	require.NoError(t, err)
	cfg, err := auth.Authorization()
	require.NoError(t, err)
	return *cfg
}

func TestParseDockerConfig(t *testing.T) {
	tests := []struct {
		name   string
		config string
		repo   string
		want   authn.AuthConfig
	}{
		{"dockerconfigjson auth", `{"auths":{"r.example.com":{"auth":"` + b64("u:p:with:colons") + `"}}}`,
			"r.example.com/modules/keda", authn.AuthConfig{Username: "u", Password: "p:with:colons"}},
		{"username and password", `{"auths":{"r.example.com:5000":{"username":"u","password":"p"}}}`,
			"r.example.com:5000/keda", authn.AuthConfig{Username: "u", Password: "p"}},
		{"scheme and path in the key", `{"auths":{"https://R.Example.com/v2/":{"auth":"` + b64("u:p") + `"}}}`,
			"r.example.com/keda", authn.AuthConfig{Username: "u", Password: "p"}},
		{"docker hub legacy key", `{"auths":{"https://index.docker.io/v1/":{"auth":"` + b64("u:p") + `"}}}`,
			"docker.io/library/nginx", authn.AuthConfig{Username: "u", Password: "p"}},
		{"legacy dockercfg map", `{"r.example.com":{"auth":"` + b64("u:p") + `","email":"x@example.com"}}`,
			"r.example.com/keda", authn.AuthConfig{Username: "u", Password: "p"}},
		{"identity token", `{"auths":{"r.example.com":{"identitytoken":"tok"}}}`,
			"r.example.com/keda", authn.AuthConfig{IdentityToken: "tok"}},
		{"config.json with helpers", `{"auths":{"r.example.com":{"auth":"` + b64("u:p") + `"}},"credsStore":"desktop","credHelpers":{"gcr.io":"gcloud"}}`,
			"r.example.com/keda", authn.AuthConfig{Username: "u", Password: "p"}},
		{"other registry is anonymous", `{"auths":{"r.example.com":{"auth":"` + b64("u:p") + `"}}}`,
			"other.example.com/keda", authn.AuthConfig{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := oci.ParseDockerConfig([]byte(tc.config))
			require.NoError(t, err)
			assert.Equal(t, tc.want, resolve(t, c, tc.repo))
		})
	}
}

func TestParseDockerConfigRejectsBadInput(t *testing.T) {
	tests := map[string]struct{ config, wantErr string }{
		"not json":         {`{`, "not a JSON object"},
		"auths not a map":  {`{"auths":[]}`, "auths is not an object"},
		"auth not base64":  {`{"auths":{"r.example.com":{"auth":"!!"}}}`, `login for "r.example.com": auth is not base64`},
		"auth no colon":    {`{"auths":{"r.example.com":{"auth":"` + b64("user") + `"}}}`, "not base64 of username:password"},
		"empty login":      {`{"auths":{"r.example.com":{}}}`, "neither auth, username"},
		"login not object": {`{"auths":{"r.example.com":"u:p"}}`, "not an object"},
		"empty host":       {`{"auths":{"https://":{"auth":"` + b64("u:p") + `"}}}`, "has no host"},
		"one host twice": {`{"auths":{"Docker.io":{"auth":"` + b64("a:b") + `"},"https://index.docker.io/v1/":{"auth":"` + b64("c:d") + `"}}}`,
			`"Docker.io" and "https://index.docker.io/v1/" are both the registry index.docker.io, with different logins`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := oci.ParseDockerConfig([]byte(tc.config))
			assert.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestCredentialsFromSecretData(t *testing.T) {
	c, err := oci.CredentialsFromSecretData(map[string][]byte{
		".dockercfg": []byte(`{"r.example.com":{"auth":"` + b64("u:p") + `"}}`),
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"r.example.com"}, c.Registries())

	_, err = oci.CredentialsFromSecretData(map[string][]byte{"config": []byte("{}")})
	assert.ErrorContains(t, err, "neither a .dockerconfigjson nor a .dockercfg key")
	_, err = oci.CredentialsFromSecretData(map[string][]byte{".dockerconfigjson": []byte("nope")})
	assert.ErrorContains(t, err, "secret key .dockerconfigjson")

	var none *oci.Credentials
	assert.Equal(t, authn.AuthConfig{}, resolve(t, none, "r.example.com/keda"), "nil credentials are anonymous")
	assert.Empty(t, none.Registries())
}

func TestBasicCredentials(t *testing.T) {
	c, err := oci.BasicCredentials("docker.io", "u", "p")
	require.NoError(t, err)
	assert.Equal(t, authn.AuthConfig{Username: "u", Password: "p"}, resolve(t, c, "index.docker.io/library/nginx"))
	_, err = oci.BasicCredentials("r.example.com", "", "p")
	assert.ErrorContains(t, err, "username is empty")
}
