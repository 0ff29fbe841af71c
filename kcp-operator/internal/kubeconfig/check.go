package kubeconfig

import (
	"fmt"
	"net/url"

	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// rule is one field that needs a Feature: set reports whether the
// kubeconfig uses it.
type rule struct {
	field   string
	set     bool
	why     string
	feature Feature
}

const whyFile = "reads a file of the operator's filesystem, where the operator's own service-account token and keys are"

// checkCluster checks the cluster of the current context.
func (a Allow) checkCluster(used *clientcmdapi.Config) []Problem {
	name := used.Contexts[used.CurrentContext].Cluster
	c := used.Clusters[name]
	where := fmt.Sprintf("cluster %q", name)
	problems := a.apply(where, []rule{
		{"certificate-authority", c.CertificateAuthority != "", whyFile, Files},
		{"proxy-url", c.ProxyURL != "", "connects through a proxy at an address of the kubeconfig's choosing", ProxyURL},
		{"insecure-skip-tls-verify", c.InsecureSkipTLSVerify, "turns off the verification of the server's certificate", InsecureSkipTLSVerify},
	})
	if why := serverProblem(c.Server); why != "" {
		problems = append(problems, Problem{Where: where, Field: "server", Why: why})
	}
	return problems
}

// checkUser checks the user of the current context.
func (a Allow) checkUser(used *clientcmdapi.Config) []Problem {
	name := used.Contexts[used.CurrentContext].AuthInfo
	u := used.AuthInfos[name]
	where := fmt.Sprintf("user %q", name)
	problems := a.apply(where, []rule{
		{"tokenFile", u.TokenFile != "", whyFile, Files},
		{"client-certificate", u.ClientCertificate != "", whyFile, Files},
		{"client-key", u.ClientKey != "", whyFile, Files},
		{"exec", u.Exec != nil, "runs a program inside the operator, with the operator's environment", Exec},
		{"username/password", u.Username != "" || u.Password != "", "sends a password (basic authentication)", BasicAuth},
		{"as/as-uid/as-groups/as-user-extra", u.Impersonate != "" || u.ImpersonateUID != "" ||
			len(u.ImpersonateGroups) > 0 || len(u.ImpersonateUserExtra) > 0, "impersonates another identity in the runtime", Impersonation},
	})
	if u.AuthProvider != nil {
		problems = append(problems, Problem{Where: where, Field: "auth-provider",
			Why: "needs an auth-provider plugin, which the operator does not have; use token or exec"})
	}
	return problems
}

// checkResult holds the rest.Config client-go built to the same rules, so
// that no way of spelling the kubeconfig gets past them.
func (a Allow) checkResult(cfg *rest.Config) []Problem {
	tls := cfg.TLSClientConfig
	problems := a.apply("resulting client", []rule{
		{"a credential file", cfg.BearerTokenFile != "" || tls.CAFile != "" || tls.CertFile != "" || tls.KeyFile != "", whyFile, Files},
		{"an exec plugin", cfg.ExecProvider != nil, "runs a program inside the operator", Exec},
		{"a proxy", cfg.Proxy != nil, "connects through a proxy", ProxyURL},
		{"insecure TLS", cfg.Insecure, "does not verify the server's certificate", InsecureSkipTLSVerify},
		{"basic authentication", cfg.Username != "" || cfg.Password != "", "sends a password", BasicAuth},
		{"impersonation", cfg.Impersonate.UserName != "" || cfg.Impersonate.UID != "" ||
			len(cfg.Impersonate.Groups) > 0 || len(cfg.Impersonate.Extra) > 0, "impersonates another identity", Impersonation},
	})
	if cfg.AuthProvider != nil || cfg.AuthConfigPersister != nil {
		problems = append(problems, Problem{Where: "resulting client", Field: "an auth provider", Why: "is not supported"})
	}
	if why := serverProblem(cfg.Host); why != "" {
		problems = append(problems, Problem{Where: "resulting client", Field: "host", Why: why})
	}
	return problems
}

// apply turns the rules that are set and not allowed into problems.
func (a Allow) apply(where string, rules []rule) []Problem {
	var problems []Problem
	for _, r := range rules {
		if r.set && !a.Allows(r.feature) {
			problems = append(problems, Problem{Where: where, Field: r.field, Why: r.why, Feature: r.feature})
		}
	}
	return problems
}

// serverProblem says what is wrong with a server URL, or "". Only https is
// accepted: client-go sends no credentials over plain HTTP, so such a
// server could only be used anonymously, and in the clear; credentials in
// the URL would be sent as basic authentication.
func serverProblem(server string) string {
	if server == "" {
		return "is empty"
	}
	u, err := url.Parse(server)
	switch {
	case err != nil:
		return "is not a URL: " + err.Error()
	case u.Scheme != "https":
		return fmt.Sprintf("must be an https:// URL, got scheme %q", u.Scheme)
	case u.Host == "" || u.Hostname() == "":
		return "has no host"
	case u.User != nil:
		return "must not carry credentials"
	case u.Opaque != "":
		return "is not a URL of a server"
	}
	return ""
}
