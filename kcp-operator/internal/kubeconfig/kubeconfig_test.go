package kubeconfig_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/kcp-operator/internal/kubeconfig"
)

// kubeconfigOf builds a kubeconfig whose current context "c" uses cluster
// "rt" and user "op" with the given extra YAML fields (flow style).
func kubeconfigOf(cluster, user string) []byte {
	return []byte(`apiVersion: v1
kind: Config
clusters:
- name: rt
  cluster: {server: "https://runtime.example:6443", certificate-authority-data: Q0E=` + cluster + `}
users:
- name: op
  user: {` + user + `}
contexts:
- name: c
  context: {cluster: rt, user: op}
current-context: c
`)
}

const inlineToken = `token: abc`

func TestInlineCredentialsPass(t *testing.T) {
	tests := map[string][]byte{
		"token":                      kubeconfigOf("", inlineToken),
		"client certificate and key": kubeconfigOf("", `client-certificate-data: Q0VSVA==, client-key-data: S0VZ`),
		"tls-server-name":            kubeconfigOf(`, tls-server-name: api.runtime.example`, inlineToken),
		"disable-compression":        kubeconfigOf(`, disable-compression: true`, inlineToken),
		"a server with a path":       []byte(strings.Replace(string(kubeconfigOf("", inlineToken)), ":6443", ":6443/k8s/clusters/c-1", 1)),
	}
	for name, raw := range tests {
		t.Run(name, func(t *testing.T) {
			cfg, err := kubeconfig.Allow{}.RESTConfig(raw)
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(cfg.Host, "https://runtime.example:6443"), cfg.Host)
			assert.Equal(t, []byte("CA"), cfg.CAData)
		})
	}
}

// files writes files a kubeconfig may name, so that client-go finds them
// when they are allowed.
func files(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"ca.crt", "tls.crt", "tls.key", "token"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600))
	}
	return dir
}

func TestFeaturesAreRefusedUnlessAllowed(t *testing.T) {
	dir := files(t)
	exec := `exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/get-token, interactiveMode: Never}`
	tests := []struct {
		name      string
		raw       []byte
		feature   kubeconfig.Feature
		field     string
		where     string
		whenAllow func(t *testing.T, raw []byte, allow kubeconfig.Allow)
	}{
		{name: "tokenFile", raw: kubeconfigOf("", `tokenFile: `+filepath.Join(dir, "token")),
			feature: kubeconfig.Files, field: "tokenFile", where: `user "op"`},
		{name: "certificate-authority", raw: []byte(strings.Replace(string(kubeconfigOf("", inlineToken)),
			"certificate-authority-data: Q0E=", "certificate-authority: "+filepath.Join(dir, "ca.crt"), 1)),
			feature: kubeconfig.Files, field: "certificate-authority", where: `cluster "rt"`},
		{name: "client-certificate", raw: kubeconfigOf("", `client-certificate: `+filepath.Join(dir, "tls.crt")+`, client-key-data: S0VZ`),
			feature: kubeconfig.Files, field: "client-certificate", where: `user "op"`},
		{name: "client-key", raw: kubeconfigOf("", `client-certificate-data: Q0VSVA==, client-key: `+filepath.Join(dir, "tls.key")),
			feature: kubeconfig.Files, field: "client-key", where: `user "op"`},
		{name: "exec", raw: kubeconfigOf("", exec), feature: kubeconfig.Exec, field: "exec", where: `user "op"`},
		{name: "proxy-url", raw: kubeconfigOf(`, proxy-url: "socks5://10.0.0.1:1080"`, inlineToken),
			feature: kubeconfig.ProxyURL, field: "proxy-url", where: `cluster "rt"`},
		{name: "insecure-skip-tls-verify", raw: []byte(strings.Replace(string(kubeconfigOf("", inlineToken)),
			"certificate-authority-data: Q0E=", "insecure-skip-tls-verify: true", 1)),
			feature: kubeconfig.InsecureSkipTLSVerify, field: "insecure-skip-tls-verify", where: `cluster "rt"`},
		{name: "basic auth", raw: kubeconfigOf("", `username: admin, password: secret`),
			feature: kubeconfig.BasicAuth, field: "username/password", where: `user "op"`},
		{name: "impersonation", raw: kubeconfigOf("", inlineToken+`, as: system:admin, as-groups: [system:masters]`),
			feature: kubeconfig.Impersonation, field: "as/as-uid/as-groups/as-user-extra", where: `user "op"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := kubeconfig.Allow{}.RESTConfig(tc.raw)
			refused := requireRefused(t, err, tc.field)
			assert.Contains(t, err.Error(), tc.where)
			assert.Contains(t, err.Error(), "--runtime-kubeconfig-allow="+string(tc.feature))
			assert.Equal(t, tc.feature, refused.Problems[0].Feature)

			others := allowAllBut(t, tc.feature)
			_, err = others.RESTConfig(tc.raw)
			_ = requireRefused(t, err, tc.field)

			allow, err := kubeconfig.ParseAllow([]string{string(tc.feature)})
			require.NoError(t, err)
			cfg, err := allow.RESTConfig(tc.raw)
			require.NoError(t, err, "allowed with --runtime-kubeconfig-allow=%s", tc.feature)
			require.NotNil(t, cfg)
		})
	}
}

func TestAllowedFeaturesReachTheClient(t *testing.T) {
	dir := files(t)
	allow, err := kubeconfig.ParseAllow([]string{"files", "exec"})
	require.NoError(t, err)
	cfg, err := allow.RESTConfig(kubeconfigOf("", `tokenFile: `+filepath.Join(dir, "token")))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "token"), cfg.BearerTokenFile)
	cfg, err = allow.RESTConfig(kubeconfigOf("", `exec: {apiVersion: client.authentication.k8s.io/v1, command: get-token, interactiveMode: Never}`))
	require.NoError(t, err)
	require.NotNil(t, cfg.ExecProvider)
	assert.Equal(t, "get-token", cfg.ExecProvider.Command)
}

func TestAlwaysRefused(t *testing.T) {
	token := kubeconfigOf("", inlineToken)
	tests := []struct {
		name, field string
		raw         []byte
	}{
		{"auth-provider", "auth-provider", kubeconfigOf("", `auth-provider: {name: oidc, config: {idp-issuer-url: "https://issuer.example"}}`)},
		{"plain http", "server", []byte(strings.Replace(string(token), "https://", "http://", 1))},
		{"no scheme", "server", []byte(strings.Replace(string(token), "https://", "", 1))},
		{"credentials in the URL", "server", []byte(strings.Replace(string(token), "https://", "https://admin:secret@", 1))},
		{"empty server", "server", []byte(strings.Replace(string(token), `"https://runtime.example:6443"`, `""`, 1))},
		{"no current context", "current-context", []byte(strings.Replace(string(token), "current-context: c", "", 1))},
		{"unknown current context", "current-context", []byte(strings.Replace(string(token), "current-context: c", "current-context: x", 1))},
		{"unknown user", "user", []byte(strings.Replace(string(token), "user: op}", "user: nobody}", 1))},
		{"unknown cluster", "cluster", []byte(strings.Replace(string(token), "cluster: rt,", "cluster: nowhere,", 1))},
		{"not YAML", "", []byte("{{{")},
		{"empty", "current-context", nil},
	}
	everything := allowAllBut(t, "")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := everything.RESTConfig(tc.raw)
			_ = requireRefused(t, err, tc.field)
		})
	}
}

// Only the current context is used, so only it is checked: another
// context's file path neither refuses the kubeconfig nor reaches the client.
func TestOnlyTheCurrentContextCounts(t *testing.T) {
	raw := string(kubeconfigOf("", inlineToken)) + `
`
	raw = strings.Replace(raw, "users:\n", "users:\n- name: sa\n  user: {tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token}\n", 1)
	raw = strings.Replace(raw, "contexts:\n", "contexts:\n- name: other\n  context: {cluster: rt, user: sa}\n", 1)
	cfg, err := kubeconfig.Allow{}.RESTConfig([]byte(raw))
	require.NoError(t, err)
	assert.Empty(t, cfg.BearerTokenFile)
	assert.Equal(t, "abc", cfg.BearerToken)

	_, err = kubeconfig.Allow{}.RESTConfig([]byte(strings.Replace(raw, "current-context: c", "current-context: other", 1)))
	_ = requireRefused(t, err, "tokenFile")
}

func TestParseAllow(t *testing.T) {
	a, err := kubeconfig.ParseAllow([]string{"exec", " files ", ""})
	require.NoError(t, err)
	assert.True(t, a.Allows(kubeconfig.Exec))
	assert.True(t, a.Allows(kubeconfig.Files))
	assert.False(t, a.Allows(kubeconfig.ProxyURL))
	assert.Equal(t, "exec,files", a.String())

	for _, bad := range []string{"auth-provider", "plain-http", "Exec", "tokenFile"} {
		_, err := kubeconfig.ParseAllow([]string{bad})
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "want one of exec, files, proxy-url")
	}
	assert.False(t, kubeconfig.Allow{}.Allows(kubeconfig.Exec), "the zero value allows nothing")
}

func requireRefused(t *testing.T, err error, field string) *kubeconfig.RefusedError {
	t.Helper()
	var refused *kubeconfig.RefusedError
	require.True(t, errors.As(err, &refused), "want a refusal naming %q, got %v", field, err)
	require.NotEmpty(t, refused.Problems)
	assert.Contains(t, refused.Fields(), field, err.Error())
	return refused
}

// allowAllBut allows every feature except one ("" allows them all).
func allowAllBut(t *testing.T, except kubeconfig.Feature) kubeconfig.Allow {
	t.Helper()
	var values []string
	for _, f := range kubeconfig.Features() {
		if f != except {
			values = append(values, string(f))
		}
	}
	a, err := kubeconfig.ParseAllow(values)
	require.NoError(t, err)
	return a
}
