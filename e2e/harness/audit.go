package harness

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// A missing permission must fail the suite with the request it refused, and
// the operator cannot be trusted to say so: controller-runtime's informers
// retry a refused list or watch with a log line at most, and code that
// tolerates errors (IgnoreNotFound, best-effort cleanup, a retry that later
// takes another path) may never log it. The API server sees every request,
// so each local API server writes an audit log (level Metadata: who, what,
// the answer with its message; no bodies) of the requests of
// ServiceAccounts — the operator is the only client here that
// authenticates as one — and RefusedRequests reads back every request that
// was answered 403. Every 403 counts, not only the authorizer's "forbid":
// a server-side apply that creates an object is authorized for patch and
// then checked for create inside the handler, and creating a Role checks
// for escalation in the RBAC storage, and both answer 403 with the
// authorizer's decision "allow". The 403s that are not about permissions,
// races with a removal, are left out: a write into a namespace being
// deleted (NamespaceLifecycle) and a create of a custom resource while its
// CRD is being deleted (the apiextensions server).
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  # The bodies of the shards' writes of Kymas and Manifests: which of them
  # only (re)assign a Kyma (shards.go, ShardWrites).
  - level: Request
    userGroups: ["system:serviceaccounts"]
    namespaces: ["` + ShardNamespace + `"]
    verbs: [create, update, patch, delete, deletecollection]
    resources:
      - group: operator.kyma-project.io
        resources: [kymas, kymas/status, manifests, manifests/status]
  - level: Metadata
    userGroups: ["system:serviceaccounts"]
  - level: None
`

// auditFlags are the kube-apiserver flags that write cluster name's audit
// log into the run folder. The log backend's default mode (blocking) writes
// each event before the response goes out, so nothing is lost at the end.
func auditFlags(runDir, name string) (map[string]string, error) {
	dir := filepath.Join(runDir, "audit")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, fmt.Errorf("writing %s: %w", policy, err)
	}
	return map[string]string{
		"audit-policy-file": policy,
		"audit-log-path":    auditLog(runDir, name),
	}, nil
}

func auditLog(runDir, name string) string { return filepath.Join(runDir, "audit", name+".log") }

// auditEvent is the part of an audit.k8s.io/v1 Event the checks read.
type auditEvent struct {
	Stage      string `json:"stage"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"responseStatus"`
	RequestObject json.RawMessage `json:"requestObject"`
	Received      time.Time       `json:"requestReceivedTimestamp"`
	Completed     time.Time       `json:"stageTimestamp"`
}

// removalRaces are the messages of 403s that refuse a write into
// something being deleted — a namespace (NamespaceLifecycle), a CRD (the
// apiextensions server) — a race of removal, not a missing permission.
var removalRaces = []string{"because it is being terminated", "while custom resource definition is terminating"}

func removalRace(msg string) bool {
	for _, m := range removalRaces {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}

type refusal struct {
	count   int
	message string
}

// RefusedRequests lists, per API server of a local run, every request of a
// ServiceAccount answered 403, as "cluster: user verb URI (n×): message"; empty
// when none was, and in clusters mode, where the harness keeps no audit log.
func (h *Harness) RefusedRequests() ([]string, error) {
	if !h.Local {
		return nil, nil
	}
	clusters := []*Cluster{h.KCP}
	for _, rt := range h.Runtimes {
		clusters = append(clusters, rt.Cluster)
	}
	var out []string
	for _, c := range clusters {
		refused, err := refusedIn(auditLog(h.RunDir, c.Name))
		if err != nil {
			return nil, err
		}
		for _, r := range slices.Sorted(maps.Keys(refused)) {
			out = append(out, fmt.Sprintf("%s: %s (%d×): %s", c.Name, r, refused[r].count, refused[r].message))
		}
	}
	return out, nil
}

// refusedIn counts the refused requests of one audit log by user, verb, URI
// (without the query, so that a retried list counts as one request) and
// the first answer's message.
func refusedIn(path string) (map[string]*refusal, error) {
	refused := map[string]*refusal{}
	err := readAudit(path, func(e *auditEvent) {
		if e.Stage != "ResponseComplete" || e.ResponseStatus.Code != http.StatusForbidden ||
			removalRace(e.ResponseStatus.Message) {
			return
		}
		uri, _, _ := strings.Cut(e.RequestURI, "?")
		key := fmt.Sprintf("%s %s %s", e.User.Username, e.Verb, uri)
		if refused[key] == nil {
			refused[key] = &refusal{message: e.ResponseStatus.Message}
		}
		refused[key].count++
	})
	return refused, err
}

// readAudit calls fn with each event of an audit log, in the order logged.
func readAudit(path string, fn func(*auditEvent)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("opening the audit log: %w", err)
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		fn(&e)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	return nil
}

// Write is a write request of a ServiceAccount (create, update, patch,
// delete) as an API server's audit log recorded it when it completed.
type Write struct {
	User, Verb                             string
	Resource, Subresource, Namespace, Name string
	Code                                   int
	Received, Completed                    time.Time
	// Body is the request's body where the policy logs it (the shards'
	// writes of Kymas and Manifests), else empty.
	Body json.RawMessage
}

func (w Write) String() string {
	res := w.Resource
	if w.Subresource != "" {
		res += "/" + w.Subresource
	}
	return fmt.Sprintf("%s %s %s/%s (%d) by %s at %s", w.Verb, res, w.Namespace, w.Name, w.Code, w.User,
		w.Received.Format("15:04:05.000000"))
}

var writeVerbs = []string{"create", "update", "patch", "delete", "deletecollection"}

// Writes lists the writes of ServiceAccounts that the audit log of a local
// cluster ("kcp" or a runtime's name) holds, in the order they completed.
func (h *Harness) Writes(cluster string) ([]Write, error) {
	if !h.Local {
		return nil, fmt.Errorf("audit logs are kept in local mode only")
	}
	return writesIn(auditLog(h.RunDir, cluster))
}

func writesIn(path string) ([]Write, error) {
	var out []Write
	err := readAudit(path, func(e *auditEvent) {
		if e.Stage != "ResponseComplete" || !slices.Contains(writeVerbs, e.Verb) {
			return
		}
		out = append(out, Write{
			User: e.User.Username, Verb: e.Verb, Resource: e.ObjectRef.Resource, Subresource: e.ObjectRef.Subresource,
			Namespace: e.ObjectRef.Namespace, Name: e.ObjectRef.Name, Code: e.ResponseStatus.Code,
			Received: e.Received, Completed: e.Completed, Body: e.RequestObject,
		})
	})
	return out, err
}
