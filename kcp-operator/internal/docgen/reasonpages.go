package docgen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lifecycle-manager/kcp-operator/internal/docgen/reasons"
)

const placeholderNote = "A reason written `State<State>` is `State` followed by a value of that type " +
	"(`StateError`, `StateReady`); the values in a row are all the code can pass there.\n"

// EventsPage lists the Events by the kind of object they regard.
func EventsPage(events []reasons.Event) []byte {
	var b strings.Builder
	b.WriteString(header("kcp-operator Events", "the Events its source records (internal/docgen/reasons)"))
	b.WriteString("Every Event the operator records (events.k8s.io), by the object it regards: its type, reason " +
		"and action, and the package that records it. What they mean for the fleet: " +
		"[docs/operating.md](../operating.md#events). " + placeholderNote)
	type row struct{ types, actions, pkgs []string }
	byObject := map[string]map[string]*row{}
	for _, e := range events {
		if byObject[e.Object] == nil {
			byObject[e.Object] = map[string]*row{}
		}
		r := byObject[e.Object][e.Reason]
		if r == nil {
			r = &row{}
			byObject[e.Object][e.Reason] = r
		}
		r.types, r.actions, r.pkgs = add(r.types, e.Type), add(r.actions, e.Action), add(r.pkgs, e.Package)
	}
	for _, object := range sortedKeys(byObject) {
		fmt.Fprintf(&b, "\n## %s\n\n| reason | type | action | recorded in |\n|---|---|---|---|\n", object)
		for _, reason := range sortedKeys(byObject[object]) {
			r := byObject[object][reason]
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", reason, strings.Join(r.types, ", "), strings.Join(r.actions, ", "), codes(r.pkgs))
		}
	}
	return []byte(b.String())
}

// ConditionsPage lists the condition types with their reasons.
func ConditionsPage(conditions []reasons.Condition) []byte {
	var b strings.Builder
	b.WriteString(header("kcp-operator status conditions", "the conditions its source builds (internal/docgen/reasons)"))
	b.WriteString("Every status condition the operator sets, by type, with each reason, the statuses it comes with " +
		"and the package that sets it. Conditions set in `internal/controller/manifest` are on Manifests, in " +
		"`internal/controller/watcher` on Watchers; the others are on Kymas (the catalog and agent controllers " +
		"report theirs to the Kyma controller, which writes them). " + placeholderNote)
	type row struct{ statuses, pkgs []string }
	byType := map[string]map[string]*row{}
	for _, c := range conditions {
		if byType[c.Type] == nil {
			byType[c.Type] = map[string]*row{}
		}
		r := byType[c.Type][c.Reason]
		if r == nil {
			r = &row{}
			byType[c.Type][c.Reason] = r
		}
		r.statuses, r.pkgs = add(r.statuses, c.Status), add(r.pkgs, c.Package)
	}
	for _, typ := range sortedKeys(byType) {
		fmt.Fprintf(&b, "\n## %s\n\n| reason | status | set in |\n|---|---|---|\n", typ)
		for _, reason := range sortedKeys(byType[typ]) {
			r := byType[typ][reason]
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", reason, strings.Join(r.statuses, ", "), codes(r.pkgs))
		}
	}
	return []byte(b.String())
}

func add(list []string, v string) []string {
	if slices.Contains(list, v) {
		return list
	}
	list = append(list, v)
	slices.Sort(list)
	return list
}

func codes(vs []string) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = "`" + v + "`"
	}
	return strings.Join(out, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
