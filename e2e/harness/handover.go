package harness

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// OwnerRun is a run of consecutive writes of one user to the objects of
// one Kyma.
type OwnerRun struct {
	User   string
	Writes int
	// First is when the run's first write was received, Last when its
	// last write completed.
	First, Last time.Time
}

// OwnerRuns orders writes by their receipt and groups consecutive writes of
// the same user into runs.
func OwnerRuns(writes []Write) []OwnerRun {
	sorted := slices.Clone(writes)
	slices.SortStableFunc(sorted, func(a, b Write) int { return a.Received.Compare(b.Received) })
	var runs []OwnerRun
	for _, w := range sorted {
		if n := len(runs); n > 0 && runs[n-1].User == w.User {
			runs[n-1].Writes++
			if w.Completed.After(runs[n-1].Last) {
				runs[n-1].Last = w.Completed
			}
			continue
		}
		runs = append(runs, OwnerRun{User: w.User, Writes: 1, First: w.Received, Last: w.Completed})
	}
	return runs
}

// Overlaps lists where owners' writes overlap: a run received before the
// run before it completed (two writers at once), and a user who writes
// again after another did (their writes interleave).
func Overlaps(runs []OwnerRun) []string {
	var out []string
	seen := map[string]bool{}
	for i, r := range runs {
		if i > 0 && r.First.Before(runs[i-1].Last) {
			out = append(out, fmt.Sprintf("%s wrote from %s, before the last write of %s completed at %s",
				r.User, r.First.Format("15:04:05.000000"), runs[i-1].User, runs[i-1].Last.Format("15:04:05.000000")))
		}
		if seen[r.User] {
			out = append(out, fmt.Sprintf("%s wrote again from %s after %s had written", r.User, r.First.Format("15:04:05.000000"), runs[i-1].User))
		}
		seen[r.User] = true
	}
	return out
}

// DescribeRuns is runs as "user (n writes, first – last) → …".
func DescribeRuns(runs []OwnerRun) string {
	parts := make([]string, len(runs))
	for i, r := range runs {
		parts[i] = fmt.Sprintf("%s (%d writes, %s – %s)", r.User, r.Writes, r.First.Format("15:04:05.000"), r.Last.Format("15:04:05.000"))
	}
	return strings.Join(parts, " → ")
}

// identity are the fields of a patch body that name the object rather
// than change it (a server-side apply repeats them).
var identity = []string{"apiVersion", "kind", "metadata.name", "metadata.namespace", "metadata.resourceVersion", "metadata.uid"}

// OnlyTouches reports whether a patch body — a JSON merge patch, a
// server-side apply or a JSON patch — changes nothing but the metadata
// labels and annotations of the given keys. Any other body (none, a whole
// object of an update) touches more.
func OnlyTouches(body json.RawMessage, labels, annotations []string) bool {
	allowed := slices.Clone(identity)
	for _, l := range labels {
		allowed = append(allowed, "metadata.labels."+l)
	}
	for _, a := range annotations {
		allowed = append(allowed, "metadata.annotations."+a)
	}
	var ops []struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(body, &ops) == nil && len(ops) > 0 {
		for _, op := range ops {
			p := strings.ReplaceAll(strings.ReplaceAll(strings.TrimPrefix(op.Path, "/"), "/", "."), "~1", "/")
			if !slices.Contains(allowed, strings.ReplaceAll(p, "~0", "~")) {
				return false
			}
		}
		return true
	}
	var obj map[string]any
	if json.Unmarshal(body, &obj) != nil || len(obj) == 0 {
		return false
	}
	return leavesWithin(obj, "", allowed)
}

// leavesWithin reports whether every leaf of obj (a null too) has one of
// the allowed dotted paths; an allowed path may end at an object.
func leavesWithin(obj map[string]any, prefix string, allowed []string) bool {
	for k, v := range obj {
		path := prefix + k
		if slices.Contains(allowed, path) {
			continue
		}
		sub, ok := v.(map[string]any)
		if !ok || !leavesWithin(sub, path+".", allowed) {
			return false
		}
	}
	return true
}
