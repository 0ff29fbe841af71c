package kubeconfig

import (
	"fmt"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Problem is one reason a kubeconfig is refused.
type Problem struct {
	// Where names the part of the kubeconfig, e.g. `user "admin"`.
	Where string
	// Field is the kubeconfig field, e.g. tokenFile; empty for the whole.
	Field string
	// Why says what the field would make the operator do.
	Why string
	// Feature allows the field when allowed; empty when nothing does.
	Feature Feature
}

func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.Where)
	b.WriteString(": ")
	if p.Field != "" {
		b.WriteString(p.Field + " ")
	}
	b.WriteString(p.Why)
	if p.Feature != "" {
		fmt.Fprintf(&b, " (allowed only with --runtime-kubeconfig-allow=%s)", p.Feature)
	}
	return b.String()
}

// RefusedError is the error of a kubeconfig the operator does not use.
type RefusedError struct {
	Problems []Problem
}

func (e *RefusedError) Error() string { return "kubeconfig refused: " + e.Reasons() }

// Reasons lists the problems, separated by semicolons.
func (e *RefusedError) Reasons() string {
	parts := make([]string, 0, len(e.Problems))
	for _, p := range e.Problems {
		parts = append(parts, p.String())
	}
	return strings.Join(parts, "; ")
}

// Fields returns the refused fields, for tests and logs.
func (e *RefusedError) Fields() []string {
	out := make([]string, 0, len(e.Problems))
	for _, p := range e.Problems {
		out = append(out, p.Field)
	}
	return out
}

// RESTConfig checks raw against the rules of the package doc and returns
// the rest.Config of its current context. Any refusal is a *RefusedError.
func (a Allow) RESTConfig(raw []byte) (*rest.Config, error) {
	cfg, err := clientcmd.Load(raw)
	if err != nil {
		return nil, &RefusedError{Problems: []Problem{{Where: "kubeconfig", Why: "cannot be read: " + err.Error()}}}
	}
	used, problems := inUse(cfg)
	if len(problems) > 0 {
		return nil, &RefusedError{Problems: problems}
	}
	problems = append(a.checkCluster(used), a.checkUser(used)...)
	if len(problems) > 0 {
		return nil, &RefusedError{Problems: problems}
	}
	restConfig, err := clientcmd.NewNonInteractiveClientConfig(*used, used.CurrentContext, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		return nil, &RefusedError{Problems: []Problem{{Where: describe(used), Why: "is not usable: " + err.Error()}}}
	}
	if problems := a.checkResult(restConfig); len(problems) > 0 {
		return nil, &RefusedError{Problems: problems}
	}
	return restConfig, nil
}

// inUse returns a kubeconfig that holds only the current context, its
// cluster and its user: what a client of it uses. Other contexts are
// neither checked nor kept, so they cannot matter.
func inUse(cfg *clientcmdapi.Config) (*clientcmdapi.Config, []Problem) {
	name := cfg.CurrentContext
	if name == "" {
		return nil, []Problem{{Where: "kubeconfig", Field: "current-context", Why: "is not set"}}
	}
	where := fmt.Sprintf("context %q", name)
	kctx, ok := cfg.Contexts[name]
	if !ok || kctx == nil {
		return nil, []Problem{{Where: "kubeconfig", Field: "current-context", Why: fmt.Sprintf("names context %q, which the kubeconfig does not have", name)}}
	}
	var problems []Problem
	cluster, ok := cfg.Clusters[kctx.Cluster]
	if !ok || cluster == nil {
		problems = append(problems, Problem{Where: where, Field: "cluster", Why: fmt.Sprintf("names cluster %q, which the kubeconfig does not have", kctx.Cluster)})
	}
	user, ok := cfg.AuthInfos[kctx.AuthInfo]
	if !ok || user == nil {
		problems = append(problems, Problem{Where: where, Field: "user", Why: fmt.Sprintf("names user %q, which the kubeconfig does not have", kctx.AuthInfo)})
	}
	if len(problems) > 0 {
		return nil, problems
	}
	used := clientcmdapi.NewConfig()
	used.Clusters[kctx.Cluster] = cluster.DeepCopy()
	used.AuthInfos[kctx.AuthInfo] = user.DeepCopy()
	used.Contexts[name] = kctx.DeepCopy()
	used.CurrentContext = name
	return used, nil
}

func describe(used *clientcmdapi.Config) string {
	return fmt.Sprintf("context %q", used.CurrentContext)
}
